import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

export interface OperatorDb {
  connection: DuckDBConnection;
  /** A private folder for staging and spills, removed afterwards. */
  workDir: string;
}

/**
 * A DuckDB of the operator command's own (not the server's locked engine), set up as the demo
 * writer's: one thread, so row groups and file bytes depend only on the rows; UTC; no extension
 * downloads.
 */
export async function withOperatorDb<T>(fn: (db: OperatorDb) => Promise<T>): Promise<T> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-ops-'));
  try {
    const instance = await DuckDBInstance.create(':memory:', {
      threads: '1',
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

