import { DuckDBListValue, LIST, VARCHAR, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import type { Compiled } from '../sql/compile.ts';

/** Prepared statements kept per connection, least recently used first out. */
const KEPT = 32;

export interface Kept {
  statements: Map<string, DuckDBPreparedStatement>;
  /** Staging tables this connection has seen created. */
  tables: Set<string>;
}

const byConnection = new WeakMap<DuckDBConnection, Kept>();

export function keptFor(c: DuckDBConnection): Kept {
  let kept = byConnection.get(c);
  if (!kept) byConnection.set(c, (kept = { statements: new Map(), tables: new Set() }));
  return kept;
}

/** `sql` prepared once per connection and `version` (the identity of anything else the text depends on, e.g. files written into it). */
export async function prepared(c: DuckDBConnection, sql: string, version = ''): Promise<DuckDBPreparedStatement> {
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
export function bind(statement: DuckDBPreparedStatement, q: Compiled): void {
  if (q.files) statement.bind([...q.params, new DuckDBListValue([...q.files])], [...q.params.map(() => VARCHAR), LIST(VARCHAR)]);
  else statement.bind([...q.params]);
}
