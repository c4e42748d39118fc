import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Row } from './parquet.ts';

export const tempDir = (prefix = 'fire-api-test-') => mkdtemp(path.join(os.tmpdir(), prefix));

export async function writeChain(dataDir: string, dataset: string, chain: unknown): Promise<void> {
  await mkdir(path.join(dataDir, dataset), { recursive: true });
  await writeFile(path.join(dataDir, dataset, '_chain.json'), JSON.stringify(chain));
}

/** A VIIRS detection with every column set; tests override what they are about. */
export function hotspot(id: string, acquiredAtUtc: string, over: Row = {}): Row {
  return {
    id,
    product: 'VIIRS_SNPP_NRT',
    acquiredAtUtc,
    country: 'PT',
    latitude: 39.5,
    longitude: -8.25,
    brightness: null,
    bright_t31: null,
    bright_ti4: 340.5,
    bright_ti5: 290.25,
    scan: 0.39,
    track: 0.36,
    acq_date: acquiredAtUtc.slice(0, 10),
    acq_time: acquiredAtUtc.slice(11, 13) + acquiredAtUtc.slice(14, 16),
    satellite: 'N',
    instrument: 'VIIRS',
    confidence: 'n',
    version: '2.0NRT',
    frp: 12.5,
    daynight: 'D',
    type: null,
    ...over,
  };
}

export function station(stationId: string, over: Row = {}): Row {
  return { stationId, name: `Station ${stationId}`, latitude: 40.1, longitude: -7.9, elevationM: 420, simulated: false, installedAtUtc: '2024-01-01T00:00:00Z', ...over };
}

export function reading(stationId: string, measuredAtUtc: string, over: Row = {}): Row {
  return {
    stationId,
    measuredAtUtc,
    simulated: false,
    airTemperatureC: 21.5,
    relativeHumidityPct: 40,
    windSpeedMs: 3.2,
    windGustMs: 5.1,
    windDirectionDeg: 270,
    precipitationMm: 0,
    fuelMoisturePct: 11.5,
    ...over,
  };
}

export function dangerRow(date: string, model: string, level: string, areaCode: string, over: Row = {}): Row {
  return { date, model, level, areaCode, areaName: `Area ${areaCode}`, FWI: 12.5, FFMC: 88.1, DMC: 30.2, DC: 250.5, ISI: 6.1, BUI: 45.3, DSR: 2.4, ...over };
}

/** Little-endian WKB polygon from rings of [lon, lat] pairs (test data only). */
export function wkbPolygon(rings: number[][][]): Uint8Array {
  const size = 9 + rings.reduce((n, r) => n + 4 + r.length * 16, 0);
  const b = Buffer.alloc(size);
  b.writeUInt8(1, 0);
  b.writeUInt32LE(3, 1);
  b.writeUInt32LE(rings.length, 5);
  let o = 9;
  for (const ring of rings) {
    b.writeUInt32LE(ring.length, o);
    o += 4;
    for (const [x, y] of ring) {
      b.writeDoubleLE(x!, o);
      b.writeDoubleLE(y!, o + 8);
      o += 16;
    }
  }
  return b;
}
