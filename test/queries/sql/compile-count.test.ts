import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { compileCount, compileCountByFile, compileRows, compileTimeAt, csvRows, featureRows } from '../../../queries/sql/compile.ts';
import { formatInstant } from '../../../queries/instant.ts';
import { at, openFixtures, rows, spec } from './compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let files: string[];
beforeAll(async () => {
  const f = await openFixtures();
  ({ instance, c, dataDir } = f);
  files = f.files.hotspots!;
});
afterAll(() => instance.closeSync());

const byCountry = (value: string) => spec(hotspots, dataDir, { filters: [{ kind: 'equals', column: 'country', value }] });
const count = async (q: { sql: string; params: string[] }) => Number((await rows(c, q))[0]?.[0]);

describe('filter values are bound parameters', () => {
  it("a value with a quote (O'Brien) is a parameter, never SQL text, and matches exactly", async () => {
    const q = compileRows({ spec: byCountry("O'Brien"), files, select: csvRows, from: at('2025-08-01'), to: at('2025-08-02') });
    expect(q.sql).not.toContain('Brien');
    expect(q.params).toEqual(['2025-08-01T00:00:00Z', '2025-08-02T00:00:00Z', "O'Brien"]);
    expect(q.sql).toContain('"country" = $3');
    const lines = await rows(c, q);
    expect(lines.map((r) => String(r[0]).split(',')[0])).toEqual(['hostile']);
  });

  it("an injection attempt ('; DROP ...) is a parameter: no SQL text, no rows, no error", async () => {
    const value = "'; DROP TABLE t; --";
    for (const q of [compileCount(byCountry(value), files, at('2025-08-01'), at('2025-08-03')), compileRows({ spec: byCountry(value), files, select: featureRows, from: at('2025-08-01'), to: at('2025-08-03') })]) {
      expect(q.sql).not.toContain('DROP');
      expect(q.params).toContain(value);
      expect(await rows(c, q)).toEqual(q.sql.startsWith('SELECT count') ? [[0n]] : []);
    }
  });

  it('window bounds are parameters in the wire format, cast to TIMESTAMPTZ', () => {
    const q = compileCount(spec(hotspots, dataDir), files, at('2025-08-01T00:00:00.000001Z'), at('2025-08-02T10:00+02:00'));
    expect(q.params).toEqual(['2025-08-01T00:00:00.000001Z', '2025-08-02T08:00:00Z']);
    expect(q.sql).toContain('"acquiredAtUtc" >= $1::TIMESTAMPTZ');
    expect(q.sql).toContain('"acquiredAtUtc" < $2::TIMESTAMPTZ');
  });

  it('a dataset without time and no filter compiles without WHERE and counts every row', async () => {
    const q = compileCount(spec(sensorStations, dataDir), [`${dataDir}/sensor-stations/a.parquet`], null, null);
    expect(q.params).toEqual([]);
    expect(q.sql).not.toContain('WHERE');
    expect(await count(q)).toBe(2);
  });
});

describe('compileCount and compileCountByFile', () => {
  it.each([
    ['2025-08-01', '2025-08-02', 4],
    ['2025-08-01T00:00:00.000001Z', '2025-08-02', 3],
    ['2025-08-01T10:00:00.5Z', '2025-08-01T12:00:00.000001Z', 2],
    ['2025-08-01T10:00:00.5Z', '2025-08-01T12:00:00.000002Z', 3],
    ['2025-08-01', '2025-08-02T00:00:00.000001Z', 5],
    ['2025-08-01T01:59:59.999999+02:00', '2025-08-01T12:00:00.500001+02:00', 3],
  ])('counts the rows of [%s, %s) exactly: %i', async (from, to, n) => {
    expect(await count(compileCount(spec(hotspots, dataDir), files, at(from), at(to)))).toBe(n);
  });

  it('counts rows matching the filter inside the window only', async () => {
    expect(await count(compileCount(byCountry('PT'), files, at('2025-08-01'), at('2025-08-03')))).toBe(4);
  });

  it('counts per file and leaves out files without rows in the window', async () => {
    const per = async (from: string, to: string) => {
      const result = await rows(c, compileCountByFile(spec(hotspots, dataDir), files, at(from), at(to)));
      return Object.fromEntries(result.map((r) => [String(r[0]), Number(r[1])]));
    };
    expect(await per('2025-08-01', '2025-08-02T00:00:00.000001Z')).toEqual({ [files[0]!]: 4, [files[1]!]: 1 });
    expect(await per('2025-08-02', '2025-08-03')).toEqual({ [files[1]!]: 2 });
    expect(await per('2025-08-01T01:00Z', '2025-08-01T02:00Z')).toEqual({});
  });
});

describe('compileTimeAt', () => {
  const ORDERED = [
    '2025-08-01T00:00:00Z',
    '2025-08-01T10:00:00.5Z',
    '2025-08-01T10:00:00.5Z',
    '2025-08-01T12:00:00.000001Z',
    '2025-08-02T00:00:00Z',
    '2025-08-02T05:00:00Z',
  ];
  const timeAt = async (s: ReturnType<typeof spec>, from: string, to: string, offset: number) => {
    const result = await rows(c, compileTimeAt({ spec: s, files: [...files].reverse(), from: at(from), to: at(to), offset }));
    return result.length ? formatInstant(result[0]![0] as bigint) : null;
  };

  it.each(ORDERED.map((t, i) => [i, t]))('returns the time of the row at offset %i in the total order (%s), across files', async (offset, time) => {
    expect(await timeAt(spec(hotspots, dataDir), '2025-08-01', '2025-08-03', offset)).toBe(time);
  });

  it('returns no row past the end of the window', async () => {
    expect(await timeAt(spec(hotspots, dataDir), '2025-08-01', '2025-08-03', 6)).toBeNull();
    expect(await timeAt(spec(hotspots, dataDir), '2025-08-01', '2025-08-02', 4)).toBeNull();
  });

  it('counts offsets from the window start and among filtered rows only', async () => {
    expect(await timeAt(spec(hotspots, dataDir), '2025-08-01T10:00:00.5Z', '2025-08-03', 2)).toBe('2025-08-01T12:00:00.000001Z');
    expect(await timeAt(byCountry('PT'), '2025-08-01', '2025-08-03', 2)).toBe('2025-08-02T00:00:00Z');
  });

  it('refuses a dataset without time', () => {
    expect(() => compileTimeAt({ spec: spec(sensorStations, dataDir), files: [], from: 0n, to: 1n, offset: 0 })).toThrow(/no time axis/);
  });
});
