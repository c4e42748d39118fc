import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { formatInstant } from '../../../queries/instant.ts';
import { ident, quoteFilePath, readParquet, SOURCE_FILE_COLUMN, sqlString, timestampText } from '../../../queries/sql/sql.ts';
import { openDuck, openFixtures } from './compile-fixtures.ts';

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
    const f = await openFixtures();
    ({ instance, c, dataDir } = f);
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

describe('timestampText', () => {
  let instance: DuckDBInstance;
  let c: DuckDBConnection;
  beforeAll(async () => ({ instance, c } = await openDuck()));
  afterAll(() => instance.closeSync());

  const wire = async (sql: string): Promise<[bigint, string][]> =>
    (await c.runAndReadAll(`SELECT epoch_us(x)::BIGINT, ${timestampText('x')} FROM (${sql})`)).getRows().map((r) => [r[0] as bigint, String(r[1])]);

  it('writes the wire form for edge instants: whole seconds, trimmed fractions, years 0001 and 9999, before 1970', async () => {
    const texts = ['2025-07-15 13:00:00', '2025-07-15 13:00:00.5', '2025-07-15 13:00:00.000001', '2025-07-15 13:00:00.12345', '0001-01-01 00:00:00', '0999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999', '1969-12-31 23:59:59.5'];
    const rows = await wire(texts.map((t) => `SELECT TIMESTAMPTZ '${t}+00' AS x`).join(' UNION ALL '));
    expect(rows.map(([, text]) => text)).toEqual(texts.map((t) => `${t.replace(' ', 'T')}Z`));
  });

  it('agrees with formatInstant on random instants of every precision across years 0001–9999', async () => {
    const rows = await wire(`SELECT make_timestamptz(CAST((hash(i) % 315537897600000000) AS BIGINT) - 62135596800000000 - (CAST((hash(i) % 315537897600000000) AS BIGINT) - 62135596800000000) % [1, 1000, 1000000][i % 3 + 1]) AS x FROM range(20000) r(i)`);
    const wrong = rows.filter(([us, text]) => text !== formatInstant(us));
    expect(rows).toHaveLength(20000);
    expect(wrong).toEqual([]);
  });

  it('still writes years outside 0001–9999 (through the general form)', async () => {
    const rows = await wire(`SELECT TIMESTAMPTZ '10000-01-01 00:00:00.25+00' AS x`);
    expect(rows.map(([, text]) => text)).toEqual(['10000-01-01T00:00:00.25Z']);
  });
});
