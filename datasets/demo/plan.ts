// What a demo dataset is, as data: the writer (queries/write-demo-data.ts) needs nothing
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

/** Macros the SELECTs use for per-row randomness: deterministic hashes of (row seed, k, salt). */
export const DEMO_SQL_MACROS: readonly string[] = [
  'CREATE OR REPLACE TEMP MACRO demo_u(s, k, salt) AS ((hash(s, k, salt) >> 11)::DOUBLE / 9007199254740992.0)',
  'CREATE OR REPLACE TEMP MACRO demo_z(s, k, salt) AS (sqrt(-2 * ln(1 - demo_u(s, k, salt))) * cos(2 * pi() * demo_u(s, k, salt + 1000)))',
];

export function stageTableSql(stage: readonly StageColumn[]): string {
  const columns = stage.map((column) => `"${column.name}" ${column.type === 'TIMESTAMPTZ' ? 'TIMESTAMP WITH TIME ZONE' : column.type}`);
  return `CREATE OR REPLACE TABLE demo_stage (${columns.join(', ')})`;
}
