import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

export interface WriterDb {
  connection: DuckDBConnection;
  /** A private folder for staging and spills, removed afterwards. */
  workDir: string;
}

/**
 * A DuckDB for writing data files (demo data, `fire-api ingest` and `compact`), never the server's
 * locked engine: UTC, no extension downloads, `threads` for reading and sorting. Files are
 * written with one thread (`writeWithOneThread`), so their row groups depend only on the rows.
 */
export async function withWriterDb<T>(threads: number, fn: (db: WriterDb) => Promise<T>): Promise<T> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-writer-'));
  try {
    const instance = await DuckDBInstance.create(':memory:', {
      threads: String(threads),
      temp_directory: path.join(workDir, 'spill'),
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    try {
      const connection = await instance.connect();
      try {
        await connection.run("SET TimeZone = 'UTC'");
        return await fn({ connection, workDir });
      } finally {
        connection.closeSync();
      }
    } finally {
      instance.closeSync();
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}


export const writeWithOneThread = (c: DuckDBConnection) => c.run('SET threads = 1');
