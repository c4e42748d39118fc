import { DuckDBListValue, LIST, VARCHAR, type DuckDBConnection, type DuckDBMaterializedResult, type DuckDBPreparedStatement } from '@duckdb/node-api';
import type { Compiled } from '../sql/compile.ts';
import type { StagedWindow } from '../sql/compile-staged.ts';

/** Prepared statements kept per connection, least recently used first out. */
const KEPT = 32;

interface Kept {
  statements: Map<string, DuckDBPreparedStatement>;
  /** Staging tables this connection has seen created. */
  tables: Set<string>;
}

const byConnection = new WeakMap<DuckDBConnection, Kept>();

function keptFor(c: DuckDBConnection): Kept {
  let kept = byConnection.get(c);
  if (!kept) byConnection.set(c, (kept = { statements: new Map(), tables: new Set() }));
  return kept;
}

/** `sql` prepared once per connection and `version` (the identity of anything else the text depends on, e.g. files written into it). */
async function prepared(c: DuckDBConnection, sql: string, version = ''): Promise<DuckDBPreparedStatement> {
  const kept = keptFor(c).statements;
  const key = `${version}\0${sql}`;
  let statement = kept.get(key);
  if (statement) kept.delete(key);
  else statement = await c.prepare(sql);
  kept.set(key, statement);
  if (kept.size > KEPT) {
    const [oldest, old] = kept.entries().next().value!;
    kept.delete(oldest);
    old.destroySync();
  }
  return statement;
}

/** `params` bound, then `files` as a VARCHAR[] when given. */
function bind(statement: DuckDBPreparedStatement, q: Compiled): void {
  if (q.files) statement.bind([...q.params, new DuckDBListValue([...q.files])], [...q.params.map(() => VARCHAR), LIST(VARCHAR)]);
  else statement.bind([...q.params]);
}

/**
 * Runs `q` prepared once per connection for each SQL text and `version`. DuckDB still plans a
 * statement that reads Parquet again on every execution; what is kept is the parsing. The result is
 * materialized: a failure anywhere in the statement is an error here, never a result that ends early.
 */
export async function runPrepared(c: DuckDBConnection, q: Compiled, version: string): Promise<DuckDBMaterializedResult> {
  const statement = await prepared(c, q.sql, version);
  bind(statement, q);
  return statement.run();
}

/** The staging table, created by the first connection that needs it (another may be creating it at the same moment). */
async function ensureTable(c: DuckDBConnection, table: StagedWindow['table']): Promise<void> {
  const tables = keptFor(c).tables;
  if (tables.has(table.name)) return;
  try {
    await c.run(table.create);
  } catch {
    // Two connections creating it at once: one commit conflicts; the table now exists.
    await c.run(table.create);
  }
  tables.add(table.name);
}

/** Starts the transaction; a connection somehow left inside one (a rollback that failed twice) is rolled back first. */
async function begin(c: DuckDBConnection): Promise<void> {
  const statement = await prepared(c, 'BEGIN TRANSACTION');
  try {
    await statement.run();
  } catch {
    await c.run('ROLLBACK');
    await statement.run();
  }
}

/** Ends the transaction; tried twice, since an interrupt meant for the statement before may land on the first try. */
async function rollback(c: DuckDBConnection): Promise<void> {
  try {
    await (await prepared(c, 'ROLLBACK')).run();
  } catch {
    await c.run('ROLLBACK');
  }
}

/**
 * The window's Features through its staging table (StagedWindow): the rows inserted and selected
 * in one transaction that is always rolled back, so the table is empty for every other statement
 * and the rows' memory is freed at once. The Feature select's plan is kept by DuckDB. Materialized,
 * like runPrepared's.
 */
export async function runStaged(c: DuckDBConnection, staged: StagedWindow, version: string): Promise<DuckDBMaterializedResult> {
  await ensureTable(c, staged.table);
  await begin(c);
  try {
    const fill = await prepared(c, staged.fill.sql, version);
    bind(fill, staged.fill);
    await fill.run();
    return await (await prepared(c, staged.rows)).run();
  } finally {
    await rollback(c);
  }
}
