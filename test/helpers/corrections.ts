import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CorrectionModel } from '../../datasets/correction-model.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { wireColumns } from '../../datasets/index.ts';
import { parseInstant } from '../../queries/instant.ts';
import { writeFileAtomic } from '../../shared/atomic-file.ts';
import { arrowTable, csvRows, hyparquetRows, objectRows, type Cell } from './columnar.ts';
import { reading } from './fixtures.ts';
import { writeParquet } from './parquet.ts';

const d = sensorReadings;
export const WINDOW = 'from=2025-08-01T12:00:00Z&to=2025-08-01T13:00:00Z';

/** Readings every ten minutes from 12:00 to 12:40 at two stations, values that are not round, one null. */
export async function writeCorrectionReadings(dataDir: string): Promise<void> {
  const rows = [];
  for (const [i, minute] of ['00', '10', '20', '30', '40'].entries()) {
    for (const station of ['ST0001', 'ST0002']) {
      rows.push(reading(station, `2025-08-01T12:${minute}:00Z`, { airTemperatureC: 20.3 + i * 1.7, relativeHumidityPct: 41.1 - i, fuelMoisturePct: i === 2 ? null : 11.7 + i / 10 }));
    }
  }
  await writeParquet(path.join(dataDir, 'sensor-readings/date=2025-08-01/a.parquet'), d, rows);
}

/** ST0001's temperature in [12:10, 12:30), every station's humidity before 12:20, and fuel moisture (one null) from 12:20. */
export const MODEL_A: CorrectionModel = {
  id: 'colocation-2025.1',
  publishedUtc: '2025-09-01T00:00:00Z',
  description: 'Co-location factors from the August campaign',
  rules: [
    { stationId: 'ST0001', quantity: 'airTemperatureC', fromUtc: '2025-08-01T12:10:00Z', toUtc: '2025-08-01T12:30:00Z', factor: 1.07, offset: -2.5 },
    { stationId: '*', quantity: 'relativeHumidityPct', fromUtc: null, toUtc: '2025-08-01T12:20:00Z', factor: 0.93, offset: 1.25 },
    { stationId: 'ST0002', quantity: 'fuelMoisturePct', fromUtc: '2025-08-01T12:20:00Z', toUtc: null, factor: 1, offset: 0.3 },
  ],
};

/** Newer: every station's temperature from 12:30 on. */
export const MODEL_B: CorrectionModel = {
  id: 'humidity-bias-2025.2',
  publishedUtc: '2025-10-01T00:00:00Z',
  description: 'Humidity bias, revised',
  rules: [{ stationId: '*', quantity: 'airTemperatureC', fromUtc: '2025-08-01T12:30:00Z', toUtc: null, factor: 0.5, offset: 3.1 }],
};

const modelFile = (dataDir: string, id: string) => path.join(dataDir, 'sensor-readings/_corrections', `${id}.json`);

/** Published as an operator does: written beside, then renamed into place. */
export async function publish(dataDir: string, model: unknown, id = (model as CorrectionModel).id): Promise<void> {
  await mkdir(path.dirname(modelFile(dataDir, id)), { recursive: true });
  await writeFileAtomic(modelFile(dataDir, id), typeof model === 'string' ? model : JSON.stringify(model, null, 2));
}

export const withdraw = (dataDir: string, id: string) => rm(modelFile(dataDir, id), { force: true });

/** The response formats, the query suffix or Accept header that asks for each, and its rows as typed cells. */
export const FORMATS = [
  { name: 'geojson', suffix: '', accept: undefined },
  { name: 'csv', suffix: '&format=csv', accept: undefined },
  { name: 'parquet', suffix: '', accept: 'application/vnd.apache.parquet' },
  { name: 'arrow', suffix: '', accept: 'application/vnd.apache.arrow.stream' },
] as const;
export type FormatName = (typeof FORMATS)[number]['name'];

export async function cellsOf(format: FormatName, bytes: Buffer): Promise<Cell[][]> {
  if (format === 'csv') return csvRows(d, bytes.toString('utf8'));
  if (format === 'parquet') return objectRows(d, await hyparquetRows(bytes));
  if (format === 'arrow') return objectRows(d, arrowTable(d, bytes).rows);
  const features = (JSON.parse(bytes.toString('utf8')) as { features: { properties: Record<string, unknown> }[] }).features;
  return objectRows(d, features.map((f) => ({ ...f.properties, measuredAtUtc: parseInstant(f.properties.measuredAtUtc as string) })));
}

/**
 * Raw rows as the model corrects them, computed here in JavaScript: raw × factor + offset where a
 * rule of the quantity covers the row (its station or *, fromUtc ≤ time < toUtc), raw elsewhere;
 * series `corrected` and the model's id in every row.
 */
export function corrected(raw: readonly Cell[][], model: CorrectionModel): Cell[][] {
  const columns = wireColumns(d).map((c) => c.name);
  const at = (name: string) => columns.indexOf(name);
  const bound = (s: string | null, open: bigint) => (s === null ? open : parseInstant(s)!);
  return raw.map((row) => {
    const out = [...row];
    out[at('series')] = 'corrected';
    out[at('correctionModel')] = model.id;
    for (const r of model.rules) {
      const t = row[at('measuredAtUtc')] as bigint;
      const applies = (r.stationId === '*' || r.stationId === row[at('stationId')]) && bound(r.fromUtc, -(2n ** 62n)) <= t && t < bound(r.toUtc, 2n ** 62n);
      const v = row[at(r.quantity)];
      if (applies && typeof v === 'number') out[at(r.quantity)] = v * r.factor + r.offset;
    }
    return out;
  });
}
