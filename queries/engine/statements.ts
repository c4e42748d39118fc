import { DuckDBListValue, LIST, VARCHAR, type DuckDBConnection, type DuckDBMaterializedResult, type DuckDBPreparedStatement } from '@duckdb/node-api';

/** Prepared statements kept per connection, least recently used first out. */
const KEPT = 32;

const byConnection = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/**
 * Runs `sql` with `params` bound (then `files`, a VARCHAR[], when given), prepared once per
 * connection for each SQL text and `version` (the identity of anything else the text depends on,
 * e.g. files written into it). Parsing and planning a Feature select takes about as long as running
 * it over an hour of a day's file. The result is materialized: a failure anywhere in the statement
 * is an error here, never a result that ends early.
 */
export async function runPrepared(c: DuckDBConnection, q: { sql: string; params: readonly string[]; files?: readonly string[] }, version: string): Promise<DuckDBMaterializedResult> {
  const { sql, params } = q;
  let kept = byConnection.get(c);
  if (!kept) byConnection.set(c, (kept = new Map()));
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
  if (q.files) statement.bind([...params, new DuckDBListValue([...q.files])], [...params.map(() => VARCHAR), LIST(VARCHAR)]);
  else statement.bind([...params]);
  return statement.run();
}
