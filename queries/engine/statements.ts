import type { DuckDBConnection, DuckDBMaterializedResult, DuckDBPreparedStatement } from '@duckdb/node-api';

/** Prepared statements kept per connection, least recently used first out. */
const KEPT = 32;

const byConnection = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/**
 * Runs `sql` with `params` bound, prepared once per connection for each SQL text and `version`
 * (the identity of the files it reads: a replaced file is another statement). Parsing and planning
 * a Feature select takes about as long as running it over an hour of a day's file, and polling
 * clients ask for the same files again and again. The result is materialized: a failure anywhere
 * in the statement is an error here, never a result that ends early.
 */
export async function runPrepared(c: DuckDBConnection, sql: string, params: readonly string[], version: string): Promise<DuckDBMaterializedResult> {
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
  statement.bind([...params]);
  return statement.run();
}
