import type { Instant } from '../../queries/instant.ts';
import type { Extract } from '../../queries/sources/context.ts';

/**
 * A page of another API over the same rows (OGC API – Features items and features): its own row
 * limit, keyset cut (the order key of its last row when it ends inside one instant), framing and
 * headers. The data route answers it (serveQuery); the OGC module shapes it.
 */
export interface PageShape {
  rowLimit: number;
  /** Keyset pages: a cut inside one instant also finds the order key of the page's last row. */
  keyed: boolean;
  mediaType: string;
  /** `readAt`: when the preflight had read the version of the files the rows come from. */
  framing(x: Extract, readAt: Instant): { prefix: string; suffix: string };
  headers(x: Extract): Record<string, string>;
  /** A problem to answer instead, decided once the rows are counted (a feature that is not there: 404). */
  refuse?(x: Extract): Error | null;
  /**
   * The body of a page of at most one row, read whole and rewritten before it is sent (a Feature
   * given its links); its length is then known before the first byte.
   */
  rewrite?(text: string): string;
}
