import type { SendProgress } from '../engine/piece-pool.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { Engine } from '../engine/engine.ts';
import type { RowsCache } from '../engine/rows-cache.ts';
import type { TempBudget } from '../engine/temp-budget.ts';
import type { Observation } from '../files/chain.ts';
import type { FileChecker } from '../files/check.ts';
import type { FolderListings } from '../files/folder-listings.ts';
import type { CorrectionStore } from '../files/corrections.ts';
import type { Sources } from './preflight.ts';
import type { Format } from '../formats.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { RowFilter } from '../sql/filter-sql.ts';
import type { Window } from '../window.ts';

/** What every request reads with (extracts and aggregates alike): the engine, its budgets, its limits, its signal. */
export interface QueryContext {
  engine: Engine;
  checker: FileChecker;
  dataDir: string;
  /** Where DuckDB writes each group before it is sent (inside the engine's allowed directories). */
  tempDir: string;
  rowLimit: number;
  /** Rows per ordered query (partition group). */
  groupRows: number;
  /** Rows per row group of a Parquet response (PARQUET_ROW_GROUP_ROWS). */
  parquetRowGroupRows: number;
  /** A whole GeoJSON window whose files hold at most this many rows is read into memory, no temp file (0: never). */
  inMemoryRows: number;
  /** A window read into memory (or from renderings) of more bytes than this is sent from a temp file (or a piece at a time) (IN_MEMORY_MAX_MB). */
  inMemoryMaxBytes: number;
  /** An aggregate window whose files hold at least this many rows may be spooled to TEMP_DIR (AGGREGATE_SPOOL_ROWS; 0: never; absent: SPOOL_ROWS). */
  aggregateSpoolRows?: number;
  /** The groups (and rows) a spooled aggregate window is handled in: its first part's rows, the most held, each further part's, the most read back into memory (AGGREGATE_SPOOL_GROUPS; absent: SPOOL_GROUPS). */
  aggregateSpoolGroups?: number;
  /** Groups written at once: one on a connection waited for, more on idle ones while there are. */
  connectionsPerExtract: number;
  nowMs: number;
  /** Aborted on client disconnect, spent engine budget or a stalled client: interrupts whatever query of this request runs. */
  signal: AbortSignal;
  /** Folder listings kept while their folders are unchanged (absent: every request lists). */
  listings?: FolderListings;
  /** Published correction models (absent: read afresh for every request of a corrected series). */
  corrections?: CorrectionStore;
  /** Rows of recent small responses by entity tag; null: off. */
  rowsCache: RowsCache | null;
  /** Groups of aggregate answers by entity tag, kept when first computed (AGGREGATE_CACHE_MB); null or absent: off. */
  aggregateCache?: RowsCache | null;
  /** Disk all responses may hold in tempDir at once (TEMP_DIR_MAX_MB). */
  tempBudget: TempBudget;
  /** Bytes one streamed response may have written ahead of its client (EXTRACT_AHEAD_MB). */
  aheadBytes: number;
  /** Marks the engine working for this request (its QUERY_TIMEOUT_MS runs); returns the stop. */
  engineWork?: () => () => void;
  /** Who asked (the key id): one client's extracts never take every connection their groups may use. */
  owner?: string;
}

/** What the data decided for a response: the version of its files, the folder value (e.g. the default model) and the correction model applied. */
export interface DataVersion {
  dataVersion: string;
  folderValue: string | null;
  correction: { id: string } | null;
}

export interface ExtractRequest {
  descriptor: DatasetDescriptor;
  window: Window | null;
  format: Format;
  filters: readonly RowFilter[];
  folderValue: string | undefined;
  params: Readonly<Record<string, string>>;
  /**
   * Asked once the files are known and fingerprinted, before any row is counted: true means the
   * client's copy is current (If-None-Match), so no query runs and prepareExtract returns null.
   */
  isFresh?: (version: DataVersion) => boolean;
  /** The response's entity tag for this version: the key of its rows in the rows cache. */
  cacheKey?: (version: DataVersion) => string;
  /** Keyset paging: a page cut inside one instant (or without time) says where it ends in `Extract.lastKey`. */
  keyed?: boolean;
}

/** How a response's rows were made: from the rows cache, read into memory, from its files' renderings, copied whole to temp files, or streamed group by group. */
export type ExtractWay = 'cache' | 'memory' | 'rendered' | 'copy' | 'stream';

export interface Extract {
  way: ExtractWay;
  observation: Observation;
  dataVersion: string;
  folderValue: string | null;
  /** The correction model applied to the rows; null when none is. */
  correction: { id: string } | null;
  returned: number;
  truncated: boolean;
  next: Window | null;
  /** The order key of the last row, when a keyed page ends inside one instant or has no time axis (then `next` is null). */
  lastKey?: readonly string[];
  /**
   * Bytes `chunks()` yields, when they are known before the first byte (a whole window written
   * before the response, or rows from the cache); null when groups are written as they are sent.
   */
  bytes: number | null;
  /**
   * Encoded rows; verifies the promised count at the end and throws if it was not met. A columnar
   * response is the whole body, with `keyValues` in its file (Parquet) or schema (Arrow) metadata.
   */
  chunks(keyValues?: Readonly<Record<string, string>>): AsyncGenerator<string | Buffer>;
  /**
   * Told by a response that writes the chunks straight to its socket how many of the bytes handed
   * over have been written: the buffers of chunks read a piece at a time may then be read into
   * again (engine/piece-pool.ts). Never told, every chunk is a buffer of its own.
   */
  sendsTo?(progress: SendProgress): void;
  /** Call when the response closes, however it closes: gives back what an unstarted response holds (files, temp budget). Idempotent. */
  dispose(): void;
}

/**
 * An extract's body read at most once: `release` gives back what it holds once the read ends,
 * however it ends; `dispose` gives back what an unread body holds (`unread`, `release` unless
 * told) and nothing once the read has begun (its own end releases then).
 */
export function readOnce(body: (keyValues: Readonly<Record<string, string>>) => AsyncIterable<string | Buffer>, release: () => void, unread: () => void = release): Pick<Extract, 'chunks' | 'dispose'> {
  let consumed = false;
  return {
    chunks: async function* (keyValues = {}) {
      if (consumed) throw new Error('extract already consumed');
      consumed = true;
      try {
        yield* body(keyValues);
      } finally {
        release();
      }
    },
    dispose: () => {
      if (!consumed) unread();
    },
  };
}

/** A request past its preflight: files listed and checked, filters resolved, its own connection held. */
export interface PreparedExtract<C extends QueryContext = QueryContext> {
  ctx: C;
  req: ExtractRequest;
  sources: Sources;
  spec: QuerySpec;
  /** The request's own connection, interrupted by prepareExtract when the request is aborted. */
  connection: DuckDBConnection;
  /** Gives the request's connection back once nothing more is asked of it (idempotent). */
  release(): void;
}
