// What a demo dataset is, as data: the writer (demo/write-demo-data.ts) needs nothing
// else. JS produces a small "stage" table per partition (events, overpasses, station-days);
// one SELECT per dataset turns it into the contract's rows, in bulk inside DuckDB. That
// keeps millions of rows out of JS and every file a single ordered COPY.

export type StageType = 'VARCHAR' | 'DOUBLE' | 'INTEGER' | 'BIGINT' | 'BOOLEAN' | 'TIMESTAMPTZ';

/** TIMESTAMPTZ values are epoch milliseconds; BIGINT values are safe integers. */
export type StageValue = string | number | boolean | null;

export interface StageColumn {
  name: string;
  type: StageType;
}

export interface DemoPartition {
  /** Folders under the dataset folder, e.g. ['date=2024-08-01']; empty for no partitions. */
  dirs: string[];
  rows: StageValue[][];
}

export interface DemoDatasetPlan {
  /** Folder name under DATA_DIR. */
  dataset: string;
  stage: readonly StageColumn[];
  /** Reads `demo_stage`, yields exactly the contract's columns in order, sorted by the order key. */
  selectSql: string;
  /** Made lazily, one partition at a time, oldest first. */
  partitions: () => Iterable<DemoPartition>;
}

/** Name of every file the generator writes; anything else in DATA_DIR is left alone. */
export const DEMO_FILE_NAME = 'demo.parquet';

/**
 * Per-row randomness for the SELECTs: a hash of (row seed < 2^32, k < 2^20, salt < 2^11)
 * packed into one BIGINT. Not hash(s, k, salt): DuckDB combines the hashes of several
 * arguments with XOR, so every salt would be the same bits XOR a constant (locked noises).
 */
export const DEMO_SQL_MACROS: readonly string[] = [
  'CREATE OR REPLACE TEMP MACRO demo_h(s, k, salt) AS hash((s::BIGINT << 31) | (k::BIGINT << 11) | salt)',
  'CREATE OR REPLACE TEMP MACRO demo_u(s, k, salt) AS ((demo_h(s, k, salt) >> 11)::DOUBLE / 9007199254740992.0)',
  // Box-Muller on the two 32-bit halves of one hash.
  `CREATE OR REPLACE TEMP MACRO demo_z(s, k, salt) AS (
    sqrt(-2 * ln(1 - (demo_h(s, k, salt) >> 32)::DOUBLE / 4294967296.0))
    * cos(2 * pi() * (demo_h(s, k, salt) & 4294967295)::DOUBLE / 4294967296.0))`,
];

export function stageTableSql(stage: readonly StageColumn[]): string {
  const columns = stage.map((column) => `"${column.name}" ${column.type === 'TIMESTAMPTZ' ? 'TIMESTAMP WITH TIME ZONE' : column.type}`);
  return `CREATE OR REPLACE TABLE demo_stage (${columns.join(', ')})`;
}
