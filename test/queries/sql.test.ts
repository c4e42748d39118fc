import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { ident, quoteFilePath, readParquet, SOURCE_FILE_COLUMN, sqlString } from '../../queries/sql.ts';
import { openDuck, writeFixtures } from './compile-fixtures.ts';

const DATA = '/srv/fire/data';

describe('quoteFilePath', () => {
  it('quotes a file inside DATA_DIR as its resolved absolute path', () => {
    expect(quoteFilePath('/srv/fire/data/hotspots/date=2025-08-01/a.parquet', DATA)).toBe("'/srv/fire/data/hotspots/date=2025-08-01/a.parquet'");
    expect(quoteFilePath('/srv/fire/data/x/../hotspots/a.parquet', `${DATA}/`)).toBe("'/srv/fire/data/hotspots/a.parquet'");
  });

  it('doubles a single quote in the path', () => {
    expect(quoteFilePath("/srv/fire/data/it's.parquet", DATA)).toBe("'/srv/fire/data/it''s.parquet'");
  });

  it.each([
    ['a path escaping with ..', '/srv/fire/data/../secrets/a.parquet'],
    ['a sibling folder sharing the prefix', '/srv/fire/data-old/a.parquet'],
    ['DATA_DIR itself', '/srv/fire/data'],
    ['an unrelated absolute path', '/etc/passwd'],
    ['a relative path (resolved against the working directory)', 'hotspots/a.parquet'],
  ])('refuses %s', (_what, file) => {
    expect(() => quoteFilePath(file, DATA)).toThrow(/outside DATA_DIR/);
  });

  it('refuses an injection hidden in a path outside DATA_DIR before quoting', () => {
    expect(() => readParquet(['/srv/fire/data/a.parquet', "/tmp/x.parquet']); DROP TABLE t; --"], DATA)).toThrow(/outside DATA_DIR/);
  });
});

describe('readParquet runs against real files', () => {
  let instance: DuckDBInstance;
  let c: DuckDBConnection;
  let dataDir: string;
  let stationFiles: string[];
  beforeAll(async () => {
    ({ instance, c } = await openDuck());
    const f = await writeFixtures();
    dataDir = f.dataDir;
    stationFiles = f.files['sensor-stations']!;
  });
  afterAll(() => instance.closeSync());

  it("reads a file whose name holds a quote (it's-a-copy.parquet)", async () => {
    const quoted = stationFiles.find((f) => f.includes("'"))!;
    const result = await c.runAndReadAll(`SELECT "stationId" FROM ${readParquet([quoted], dataDir)}`);
    expect(result.getRows()).toEqual([['S1']]);
  });

  it('reads several files as one relation, with the filename column when asked', async () => {
    const result = await c.runAndReadAll(`SELECT ${SOURCE_FILE_COLUMN}, count(*)::INTEGER FROM ${readParquet(stationFiles, dataDir, true)} GROUP BY 1 ORDER BY 1`);
    expect(result.getRows()).toEqual(stationFiles.map((f) => [path.resolve(f), f.includes("'") ? 1 : 2]).sort());
  });

  it('does not read Hive keys as columns (the partition key is never a wire column)', async () => {
    const file = path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet');
    const result = await c.runAndReadAll(`DESCRIBE SELECT * FROM ${readParquet([file], dataDir)}`);
    expect(result.getRows().map((r) => r[0])).not.toContain('date');
  });
});

describe('ident and sqlString', () => {
  it('ident double-quotes and doubles embedded quotes', () => {
    expect(ident('acquiredAtUtc')).toBe('"acquiredAtUtc"');
    expect(ident('a"b')).toBe('"a""b"');
  });

  it("sqlString single-quotes and doubles embedded quotes", () => {
    expect(sqlString('"geometry":')).toBe(`'"geometry":'`);
    expect(sqlString("it's")).toBe("'it''s'");
  });
});
