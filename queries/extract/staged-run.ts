import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import type { StagedWindow } from '../sql/compile-staged.ts';
import { wasStopped } from '../errors.ts';
import { bind, keptFor, prepared } from '../engine/statements.ts';

const NO_TRANSACTION = /no transaction is active/i;
const IN_TRANSACTION = /within a transaction/i;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Ends whatever transaction the connection is in (none is fine). Tried again when it fails: an
 * interrupt meant for the statement before can land on it, and DuckDB forgets an interrupt at the
 * start of the next statement, so a few tries always get through.
 */
async function endTransaction(c: DuckDBConnection): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await (await prepared(c, 'ROLLBACK')).run();
      return;
    } catch (e) {
      if (NO_TRANSACTION.test(message(e))) return;
      if (attempt >= 5) throw e;
    }
  }
}

/** Starts the transaction; a connection somehow left inside one is rolled back first. */
async function begin(c: DuckDBConnection): Promise<void> {
  const statement = await prepared(c, 'BEGIN TRANSACTION');
  try {
    await statement.run();
  } catch (e) {
    if (!IN_TRANSACTION.test(message(e))) throw e;
    await endTransaction(c);
    await statement.run();
  }
}

/** Tries of the staging table's create: a conflict means another connection's create is under way or done. */
const CREATE_TRIES = 5;

/**
 * The staging table, created (outside any transaction, so that no rollback undoes it) by the first
 * connection that needs it. A failed create is tried again: connections creating it at the same
 * moment conflict ("write-write conflict") while one of them is under way, and the table then
 * exists: tried again a little later (an immediate second try met a create still under way on a
 * loaded machine).
 */
async function ensureTable(c: DuckDBConnection, table: StagedWindow['table']): Promise<void> {
  const tables = keptFor(c).tables;
  if (tables.has(table.name)) return;
  await endTransaction(c);
  for (let attempt = 1; ; attempt++) {
    try {
      await c.run(table.create);
      break;
    } catch (e) {
      // An interrupt (the request gone, the server stopping) is not a conflict: no second try.
      if (attempt >= CREATE_TRIES || wasStopped(e)) throw e;
      // The other create commits meanwhile: a few milliseconds, more on a loaded machine.
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
    }
  }
  tables.add(table.name);
}

/**
 * The window's Features through its staging table (StagedWindow): the rows inserted and selected
 * in one transaction that is always rolled back, so the table is empty for every other statement
 * and the rows' memory is freed at once. The Feature select's plan is kept by DuckDB. Materialized:
 * a failure anywhere is an error, never a short result. `signal` is checked between statements
 * (DuckDB forgets an interrupt that arrives between two).
 */
export async function runStaged(c: DuckDBConnection, staged: StagedWindow, version: string, signal?: AbortSignal): Promise<DuckDBMaterializedResult> {
  await ensureTable(c, staged.table);
  try {
    signal?.throwIfAborted();
    // Inside the try: an interrupt can fail BEGIN after the transaction has started.
    await begin(c);
    signal?.throwIfAborted();
    const fill = await prepared(c, staged.fill.sql, version);
    bind(fill, staged.fill);
    await fill.run();
    signal?.throwIfAborted();
    return await (await prepared(c, staged.rows)).run();
  } finally {
    await endTransaction(c);
  }
}
