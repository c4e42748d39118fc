import { readFile, truncate } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetUnavailableError, EngineClosedError, StreamIncompleteError } from '../../../queries/errors.ts';
import { buildApp, type App } from '../../../server/app.ts';
import { loadConfig } from '../../../server/config.ts';
import { toProblem } from '../../../server/http/problems.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { captureLogs, type CapturedLogs } from '../../helpers/logs.ts';
import { corruptColumn, writeBulkHotspots } from '../../helpers/parquet.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
  await writeBulkHotspots(path.join(dir, 'corrupt.parquet'), '2025-08-01', 20_000, 3);
  await corruptColumn(path.join(dir, 'corrupt.parquet'), 'confidence');
  await writeBulkHotspots(path.join(dir, 'cut.parquet'), '2025-08-01', 20_000, 3);
  await truncate(path.join(dir, 'cut.parquet'), 5000);
});

/** What a real DuckDB throws for `sql`. */
async function engineError(sql: string): Promise<unknown> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return await c.run(sql).then(
      (r) => r.getRows(),
      (e: unknown) => e,
    );
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

const kindOf = (e: unknown) => {
  try {
    const p = toProblem(e, 7);
    return `${p.kind} ${p.headers['retry-after'] ?? '-'}`;
  } catch (thrown) {
    expect(thrown).toBe(e);
    return 'rethrown';
  }
};

describe('503 only when the data could not be read; anything else is a bug', () => {
  it('the engine reading a corrupt, truncated or vanished file, a failed system call and the domain errors are 503 with Retry-After', async () => {
    const errors = [
      await engineError(`SELECT max(confidence) FROM '${path.join(dir, 'corrupt.parquet')}'`),
      await engineError(`SELECT * FROM '${path.join(dir, 'cut.parquet')}'`),
      await engineError(`SELECT * FROM '${path.join(dir, 'gone.parquet')}'`),
      await engineError(`SELECT CAST(acq_date AS INTEGER) FROM '${path.join(dir, 'corrupt.parquet')}'`),
      await readFile(path.join(dir, 'gone.parquet')).catch((e: unknown) => e),
      new DatasetUnavailableError('hotspots', 'files changed while they were read'),
      new StreamIncompleteError(10, 9),
      new EngineClosedError(),
    ];
    expect(errors.map(kindOf)).toEqual(errors.map(() => 'unavailable 7'));
  });

  it('a TypeError, a broken invariant and the engine refusing a statement are rethrown for the 500 handler', async () => {
    const errors = [
      new TypeError("Cannot read properties of undefined (reading 'rows')"),
      new Error('a window read into memory is staged through a table'),
      await engineError('SELECT nosuch'),
      await engineError('SELEC 1'),
    ];
    expect(errors.map(kindOf)).toEqual(errors.map(() => 'rethrown'));
  });
});

describe('a bug is a 500: no Retry-After, logged as an error with its stack, counted, never shown', () => {
  let built: App;
  let logs: CapturedLogs;
  beforeAll(async () => {
    logs = captureLogs();
    const keysFile = path.join(dir, 'keys.json');
    built = await buildApp(loadConfig({ DATA_DIR: dir, TEMP_DIR: `${dir}/.tmp`, KEYS_FILE: keysFile, LOG_LEVEL: 'info', WARM_FILE_CHECKS: 'false', FILE_CHECK_INTERVAL_MS: '0' }), { logStream: logs.stream });
    // A route whose preflight hits a bug: the error goes through the same mapping as the data routes'.
    built.app.get('/broken', async () => {
      throw toProblem(new TypeError("Cannot read properties of undefined (reading 'rows') at /srv/fire-api/queries/x.ts"), 7);
    });
  });
  afterAll(() => built.app.close());

  it('answers 500 internal, logs the stack at error level and counts it in /metrics', async () => {
    const r = await built.app.inject('/broken');
    expect(r.statusCode).toBe(500);
    expect(r.headers['retry-after']).toBeUndefined();
    expect(r.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(r.json()).toMatchObject({ type: '/api/v1/docs#problem-internal', status: 500 });
    expect(r.body).not.toMatch(/rows|srv|TypeError|at /);
    const logged = logs.lines().find((l) => l.msg === 'request failed');
    expect(logged?.level).toBe(50);
    expect((logged?.err as { stack?: string } | undefined)?.stack).toMatch(/^TypeError: Cannot read properties[\s\S]*problems\.test\.ts/);
    const metrics = (await built.app.inject('/metrics')).body;
    expect(metrics).toMatch(/^fire_api_internal_errors_total 1$/m);
  });
});
