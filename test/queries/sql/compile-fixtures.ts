import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBDataChunk } from '@duckdb/node-api';
import { burntAreas } from '../../../datasets/burnt-areas.ts';
import { fireDanger } from '../../../datasets/fire-danger.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import type { DatasetDescriptor } from '../../../datasets/index.ts';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import type { Compiled, QuerySpec } from '../../../queries/sql/compile.ts';
import { compileCopy, CSV_COPY, FEATURE_COPY, type TextCopy } from '../../../queries/sql/compile-copy.ts';
import { encodeFeatureChunk } from '../../../queries/encode/encode-chunk.ts';
import { parseInstant, type Instant } from '../../../queries/instant.ts';
import { dangerRow, hotspot, reading, station, tempDir, wkbPolygon } from '../../helpers/fixtures.ts';
import { writeParquet, type Row } from '../../helpers/parquet.ts';

export const at = (text: string): Instant => parseInstant(text)!;

export const HOSTILE = {
  country: "O'Brien",
  satellite: 'a,b',
  confidence: 'say "hi"',
  version: 'line1\r\nline2',
  daynight: 'x\ny',
  instrument: 'cr\ronly',
  type: 3,
};

export const SQUARE = [[[10, 40], [11, 40], [11, 41], [10, 41], [10, 40]]];

export function burnt(id: number, FIREDATE: string, over: Row = {}): Row {
  const cover = Object.fromEntries(['BROADLEA', 'CONIFER', 'MIXED', 'SCLEROPH', 'TRANSIT', 'OTHERNATLC', 'AGRIAREAS', 'ARTIFSURF', 'OTHERLC', 'PERCNA2K'].map((k) => [k, 10]));
  return { id, FIREDATE, LASTUPDATE: '2025-08-03T00:00:00Z', FINALDATE: null, COUNTRY: 'PT', PROVINCE: 'Leiria', COMMUNE: 'Pombal', AREA_HA: 120.5, ...cover, CLASS: 'FireSeason', geometry: wkbPolygon(SQUARE), ...over };
}

/** One data set per dataset; the window [2025-08-01, 2025-08-02) has rows on both boundaries. */
export async function writeFixtures(): Promise<{ dataDir: string; files: Record<string, string[]> }> {
  const dataDir = await tempDir();
  const p = (rel: string) => path.join(dataDir, rel);
  const files: Record<string, string[]> = {
    hotspots: [p('hotspots/date=2025-08-01/a.parquet'), p('hotspots/date=2025-08-02/a.parquet')],
    'burnt-areas': [p('burnt-areas/month=2025-08/a.parquet')],
    'fire-danger': [p('fire-danger/model=m1/month=2025-08/a.parquet')],
    'sensor-stations': [p('sensor-stations/a.parquet'), p("sensor-stations/it's-a-copy.parquet")],
    'sensor-readings': [p('sensor-readings/date=2025-08-01/a.parquet')],
  };
  await writeParquet(files.hotspots![0]!, hotspots, [
    hotspot('hostile', '2025-08-01T12:00:00.000001Z', HOSTILE),
    hotspot('b', '2025-08-01T10:00:00.5Z'),
    hotspot('z-from', '2025-08-01T00:00:00Z', { country: null }),
    hotspot('a', '2025-08-01T10:00:00.5Z'),
  ]);
  await writeParquet(files.hotspots![1]!, hotspots, [hotspot('to', '2025-08-02T00:00:00Z'), hotspot('late', '2025-08-02T05:00:00Z')]);
  await writeParquet(files['burnt-areas']![0]!, burntAreas, [
    burnt(42, '2025-08-01T13:00:00Z', { FINALDATE: '2025-08-05T00:00:00Z' }),
    burnt(7, '2025-08-01T00:00:00Z', { COMMUNE: 'Vila, "Nova"', AREA_HA: null }),
    burnt(9, '2025-08-02T00:00:00Z'),
  ]);
  await writeParquet(files['fire-danger']![0]!, fireDanger, [
    dangerRow('2025-08-01T00:00:00Z', 'm1', 'country', 'PT'),
    dangerRow('2025-08-01T00:00:00Z', 'm1', 'adminArea', 'PT11'),
    dangerRow('2025-08-01T00:00:00Z', 'm1', 'country', 'ES', { FWI: 'NaN', areaName: null }),
  ]);
  const stations = [station('S2', { simulated: true, installedAtUtc: '1969-12-31T23:59:59.5Z' }), station('S1', { name: 'Serra, "alta"', elevationM: null, installedAtUtc: null })];
  await writeParquet(files['sensor-stations']![0]!, sensorStations, stations);
  await writeParquet(files['sensor-stations']![1]!, sensorStations, [station('S1', { name: 'Serra, "alta"', elevationM: null, installedAtUtc: null })]);
  await writeParquet(files['sensor-readings']![0]!, sensorReadings, [
    reading('S2', '2025-08-01T00:10:00Z'),
    reading('S1', '2025-08-01T00:10:00Z', { airTemperatureC: null }),
    reading('S9', '2025-08-01T00:00:00Z'),
  ]);
  return { dataDir, files };
}

export function spec(descriptor: DatasetDescriptor, dataDir: string, over: Partial<QuerySpec> = {}): QuerySpec {
  return { descriptor, dataDir, filters: [], params: {}, stationFiles: null, ...over };
}

/** The window most compile tests ask for: the first day of the fixtures. */
export const FROM = at('2025-08-01');
export const TO = at('2025-08-02');

/** A DuckDB connection and the fixture files, for a whole test file. */
export async function openFixtures(): Promise<{ instance: DuckDBInstance; c: DuckDBConnection; dataDir: string; files: Record<string, string[]> }> {
  return { ...(await openDuck()), ...(await writeFixtures()) };
}

export async function openDuck(): Promise<{ instance: DuckDBInstance; c: DuckDBConnection }> {
  const instance = await DuckDBInstance.create(':memory:');
  return { instance, c: await instance.connect() };
}

export async function rows(c: DuckDBConnection, q: Compiled): Promise<unknown[][]> {
  return (await c.runAndReadAll(q.sql, q.params)).getRows();
}

/** Runs a compiled query through DuckDB's writer into a temp file, as the server does (compileCopy). */
async function copyText(c: DuckDBConnection, q: Compiled, copy: TextCopy): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'compile-copy-'));
  try {
    const target = path.join(dir, 'group.csv');
    const statement = compileCopy(q, copy, target, dir);
    await c.run(statement.sql, statement.params);
    return await readFile(target, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs a compiled GeoJSON query the way the server does: WKB rows through JavaScript, the rest through COPY. */
export async function features(c: DuckDBConnection, q: Compiled, d: DatasetDescriptor): Promise<Record<string, unknown>[]> {
  if (d.geometry.kind !== 'wkb') return JSON.parse(`[${(await copyText(c, q, FEATURE_COPY)).slice(1)}]`) as Record<string, unknown>[];
  const result = await c.run(q.sql, q.params);
  let text = '';
  for (let chunk: DuckDBDataChunk | null, first = true; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; first = false) text += encodeFeatureChunk(chunk, first);
  return JSON.parse(`[${text}]`) as Record<string, unknown>[];
}

/** Runs a compiled CSV query the way the server does: DuckDB's CSV writer into a temp file (compileCopy). */
export const csvText = (c: DuckDBConnection, q: Compiled): Promise<string> => copyText(c, q, CSV_COPY);

/** A strict RFC 4180 reader (LF record ends, as the contract says), the oracle for the CSV tests. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      for (i++; ; i++) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"' && text[i + 1] === '"') (field += '"'), i++;
        else if (text[i] === '"') break;
        else field += text[i];
      }
      i++;
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\n') {
        if (text[i] === '"' || text[i] === '\r') throw new Error(`bare ${JSON.stringify(text[i])} in unquoted field at ${i}`);
        field += text[i++];
      }
    }
    fields.push(field);
    if (text[i] === ',') i++;
    else if (text[i] === '\n' || i >= text.length) (records.push(fields), (fields = []), i++);
    else throw new Error(`unexpected ${JSON.stringify(text[i])} after field at ${i}`);
  }
  return records;
}
