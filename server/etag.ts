import { createHash } from 'node:crypto';
import type { DatasetDescriptor } from '../datasets/index.ts';
import type { DataVersion } from '../queries/sources/context.ts';
import type { Encoding } from './http/compression.ts';
import { effectiveQuery, windowText } from './meta.ts';
import type { DatasetQuery } from './params/query-params.ts';

/**
 * Weak ETag: same data version + same normalised query + same format. Weak because GeoJSON's
 * `meta.observation.ageSeconds` moves with the clock while the data does not. A compressed body
 * is another representation (RFC 9110 §8.8.3): its tag carries the coding, so a cache holding
 * the gzip body never takes it for the identity one.
 */
export function entityTag(d: DatasetDescriptor, q: DatasetQuery, version: DataVersion, rowLimit: number, encoding: Encoding = 'identity'): string {
  const query = Object.entries(effectiveQuery(d, q, version)).sort();
  // The row limit decides where a cut falls: another limit is another response.
  const normalised = JSON.stringify([d.name, windowText(q.window), query, q.format, rowLimit, version.dataVersion]);
  const hash = createHash('sha256').update(normalised).digest('base64url').slice(0, 32);
  return encoding === 'identity' ? `W/"${hash}"` : `W/"${hash}-${encoding}"`;
}

/** RFC 9110 If-None-Match: a list of tags or `*`, compared weakly. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((t) => opaque(t) === opaque(etag));
}

/** The isFresh hook for prepareExtract, remembering the tag it computed for the response header. */
export function freshness(d: DatasetDescriptor, q: DatasetQuery, ifNoneMatch: string | undefined, rowLimit: number, encoding: Encoding) {
  const state = { etag: '' };
  const isFresh = (v: DataVersion) => {
    state.etag = entityTag(d, q, v, rowLimit, encoding);
    return matchesIfNoneMatch(ifNoneMatch, state.etag);
  };
  return { isFresh, etag: () => state.etag };
}
