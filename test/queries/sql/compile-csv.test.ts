import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../../datasets/burnt-areas.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { col, DATASETS, fileColumns, wireColumns } from '../../../datasets/index.ts';
import { compileRows, csvHeader, csvRows } from '../../../queries/sql/compile.ts';
import { hotspot, tempDir } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { csvText, FROM, openFixtures, parseCsv, spec, TO } from './compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let files: Record<string, string[]>;
beforeAll(async () => ({ instance, c, dataDir, files } = await openFixtures()));
afterAll(() => instance.closeSync());
const hotspotCsv = (conn: DuckDBConnection) => csvText(conn, compileRows({ spec: spec(hotspots, dataDir), files: files.hotspots!, select: csvRows, from: FROM, to: TO }));

const PLAIN_LINES = [
  'z-from,VIIRS_SNPP_NRT,2025-08-01T00:00:00Z,,39.5,-8.25,,,340.5,290.25,0.39,0.36,2025-08-01,0000,N,VIIRS,n,2.0NRT,12.5,D,',
  'a,VIIRS_SNPP_NRT,2025-08-01T10:00:00.5Z,PT,39.5,-8.25,,,340.5,290.25,0.39,0.36,2025-08-01,1000,N,VIIRS,n,2.0NRT,12.5,D,',
];

/** Compares a CSV record with expected fields; numbers are compared by value (DuckDB may write 420 as 420.0). */
function expectRecord(actual: string[] | undefined, expected: (string | number)[]) {
  expect(actual).toHaveLength(expected.length);
  expected.forEach((e, i) => (typeof e === 'number' ? expect(Number(actual![i])).toBe(e) : expect(actual![i]).toBe(e)));
}

describe('compiled CSV rows', () => {
  it('writes one ordered line per row in [from, to): a row at from is in, a row at to is out, ties ordered by id', async () => {
    const ids = parseCsv(await hotspotCsv(c)).map((r) => r[0]);
    expect(ids).toEqual(['z-from', 'a', 'b', 'hostile']);
  });

  it('writes a plain row exactly: nulls empty, timestamps with Z and a fraction only when non-zero', async () => {
    expect((await hotspotCsv(c)).split('\n').slice(0, 2)).toEqual(PLAIN_LINES);
  });

  it('quotes and doubles per RFC 4180 a comma, a quote, CR, LF and CRLF inside a VARCHAR', async () => {
    const text = await hotspotCsv(c);
    expect(text).toContain(`,"a,b",`);
    expect(text).toContain(`,"say ""hi""",`);
    expect(text).toContain(`,"line1\r\nline2",`);
    expect(text).toContain(`,"x\ny",`);
    expect(text).toContain(`,"cr\ronly",`);
    const hostile = parseCsv(text).find((r) => r[0] === 'hostile');
    expectRecord(hostile, [
      'hostile', 'VIIRS_SNPP_NRT', '2025-08-01T12:00:00.000001Z', "O'Brien", 39.5, -8.25, '', '', 340.5, 290.25, 0.39, 0.36,
      '2025-08-01', '1200', 'a,b', 'cr\ronly', 'say "hi"', 'line1\r\nline2', 12.5, 'x\ny', '3',
    ]);
  });

  it('writes timestamps in UTC whatever the session TimeZone, and bounds the window in UTC', async () => {
    const ny = await instance.connect();
    try {
      await ny.run("SET TimeZone = 'America/New_York'");
      const tz = (await ny.runAndReadAll("SELECT current_setting('TimeZone')")).getRows()[0]?.[0];
      expect(tz).toBe('America/New_York');
      const text = await hotspotCsv(ny);
      expect(text.split('\n').slice(0, 2)).toEqual(PLAIN_LINES);
      expect(text).toContain(',2025-08-01T12:00:00.000001Z,');
      expect(text).toBe(await hotspotCsv(c));
    } finally {
      ny.closeSync();
    }
  });

  it('writes booleans true/false, a pre-1970 timestamp with its fraction, a null timestamp as empty', async () => {
    const text = await csvText(c, compileRows({ spec: spec(sensorStations, dataDir), files: files['sensor-stations']!, select: csvRows, from: null, to: null }));
    const records = parseCsv(text);
    expect(records.map((r) => r[0])).toEqual(['S1', 'S1', 'S2']);
    expectRecord(records[0], ['S1', 'Serra, "alta"', 40.1, -7.9, '', 'false', '']);
    expectRecord(records[2], ['S2', 'Station S2', 40.1, -7.9, 420, 'true', '1969-12-31T23:59:59.5Z']);
  });

  it('writes the series parameter into its column and correctionModel as empty, values bound not inlined', async () => {
    const series = "x'); DROP TABLE t; --";
    const q = compileRows({ spec: spec(sensorReadings, dataDir, { params: { series } }), files: files['sensor-readings']!, select: csvRows, from: FROM, to: TO });
    expect(q.sql).not.toContain('DROP');
    expect(q.params).toEqual([series, '2025-08-01T00:00:00Z', '2025-08-02T00:00:00Z']);
    const records = parseCsv(await csvText(c, q));
    expect(records.map((r) => r.slice(0, 5))).toEqual([
      ['S9', '2025-08-01T00:00:00Z', 'false', series, ''],
      ['S1', '2025-08-01T00:10:00Z', 'false', series, ''],
      ['S2', '2025-08-01T00:10:00Z', 'false', series, ''],
    ]);
    expect(records[1]?.[5]).toBe('');
  });

  it('leaves geometry out of burnt-area CSV and quotes a commune with comma and quotes', async () => {
    const q = compileRows({ spec: spec(burntAreas, dataDir), files: files['burnt-areas']!, select: csvRows, from: FROM, to: TO });
    const records = parseCsv(await csvText(c, q));
    expect(csvHeader(burntAreas)).not.toContain('geometry');
    expect(records.map((r) => r[0])).toEqual(['7', '42']);
    expectRecord(records[0]?.slice(0, 8), ['7', '2025-08-01T00:00:00Z', '2025-08-03T00:00:00Z', '', 'PT', 'Leiria', 'Vila, "Nova"', '']);
    expect(records[1]?.[3]).toBe('2025-08-05T00:00:00Z');
  });

  it('a limit keeps the first rows of the total order', async () => {
    const q = compileRows({ spec: spec(hotspots, dataDir), files: files.hotspots!, select: csvRows, from: FROM, to: TO, limit: 2 });
    expect(parseCsv(await csvText(c, q)).map((r) => r[0])).toEqual(['z-from', 'a']);
  });
});

describe('files of one partition with different layouts', () => {
  it('reads columns by name across files with an extra column or another column order', async () => {
    const dir = await tempDir();
    const file = (name: string) => path.join(dir, 'hotspots/date=2025-08-01', name);
    await writeParquet(file('extra.parquet'), hotspots, [hotspot('b', '2025-08-01T11:00:00Z', { extra: 1.5 })], [col('extra', 'DOUBLE', true, ''), ...fileColumns(hotspots)]);
    await writeParquet(file('plain.parquet'), hotspots, [hotspot('a', '2025-08-01T10:00:00Z')]);
    await writeParquet(file('reversed.parquet'), hotspots, [hotspot('c', '2025-08-01T12:00:00Z')], [...fileColumns(hotspots)].reverse());
    const files = ['extra.parquet', 'reversed.parquet', 'plain.parquet'].map(file);
    const records = parseCsv(await csvText(c, compileRows({ spec: spec(hotspots, dir), files, select: csvRows, from: FROM, to: TO })));
    expect(records.map((r) => [r[0], r[2], r[13]])).toEqual([
      ['a', '2025-08-01T10:00:00Z', '1000'],
      ['b', '2025-08-01T11:00:00Z', '1100'],
      ['c', '2025-08-01T12:00:00Z', '1200'],
    ]);
    for (const r of records) expect(r).toHaveLength(wireColumns(hotspots).length);
  });
});

describe('every dataset descriptor compiles to CSV that runs', () => {
  it.each(DATASETS.map((d) => [d.name, d] as const))('%s: header and every record have one field per wire column', async (name, d) => {
    const hasTime = d.time !== null;
    const q = compileRows({ spec: spec(d, dataDir), files: files[name]!, select: csvRows, from: hasTime ? FROM : null, to: hasTime ? TO : null });
    const records = parseCsv(csvHeader(d) + (await csvText(c, q)));
    expect(records[0]).toEqual(wireColumns(d).map((col) => col.name));
    expect(records.length).toBeGreaterThan(2);
    for (const r of records) expect(r).toHaveLength(wireColumns(d).length);
  });
});
