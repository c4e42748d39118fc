import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import { bind, prepared } from '../../../queries/engine/statements.ts';
import type { Compiled } from '../../../queries/sql/compile.ts';

/**
 * A window's Features as one prepared statement (the way small windows were read before they were
 * staged through a table): the reference the staged bytes are compared with. DuckDB plans it again
 * on every execution; the per-connection cache keeps only the parse.
 */
export async function runPrepared(c: DuckDBConnection, q: Compiled, version: string): Promise<DuckDBMaterializedResult> {
  const statement = await prepared(c, q.sql, version);
  bind(statement, q);
  return statement.run();
}
