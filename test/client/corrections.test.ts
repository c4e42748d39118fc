import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import { sensorStations } from '../../datasets/sensor-stations.ts';
import { MODEL_A, MODEL_B, publish, writeCorrectionReadings } from '../helpers/corrections.ts';
import { station, tempDir, writeChain } from '../helpers/fixtures.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, readManifestFile } from './harness.ts';

let server: TestServer;
let dir: string;
let out: string;
beforeAll(async () => {
  dir = await tempDir();
  await writeParquet(path.join(dir, 'sensor-stations/stations.parquet'), sensorStations, [station('ST0001'), station('ST0002')]);
  await writeCorrectionReadings(dir);
  for (const name of ['sensor-stations', 'sensor-readings']) await writeChain(dir, name, CHAIN);
  await publish(dir, MODEL_A);
  // Pages of three rows: a walk of several windows.
  server = await startServer(dir, { ROW_LIMIT: '3' });
  out = await tempDir('fire-api-corrections-');
});
afterAll(() => server.close());

async function extract(name: string, extra: string[] = []) {
  const file = path.join(out, name);
  const cap = captureIo();
  const args = ['sensor-readings', '--from', '2025-08-01T12:00:00Z', '--to', '2025-08-01T13:00:00Z', '--series', 'corrected', '--out', file, '--base-url', server.url, '--key', server.key, ...extra];
  expect([await extractCommand(args, {}, cap.io), cap.stderr()]).toEqual([0, '']);
  return { file, manifest: await readManifestFile(`${file}.manifest.json`) };
}

const verify = (file: string) => verifyCommand([`${file}.manifest.json`, '--key', server.key], {}, captureIo().io);

describe('extracts of the corrected series name their correction model', () => {
  it('the model the server applied is pinned for the walk, named in the manifest and citation, and verifies after a newer one is published', async () => {
    const geo = await extract('a.geojson');
    const csv = await extract('a.csv');
    for (const { manifest } of [geo, csv]) {
      expect(manifest.pages.length).toBeGreaterThan(2);
      expect(manifest).toMatchObject({ correctionModel: MODEL_A.id, parameters: { series: 'corrected', simulated: 'false', correctionModel: MODEL_A.id } });
      expect(manifest.queryInEffect).toMatchObject({ series: 'corrected', correctionModel: MODEL_A.id });
      expect(manifest.citation!.text).toContain(`corrected with correction model ${MODEL_A.id}`);
      expect(manifest.citation!.bibtex).toContain(`correction model ${MODEL_A.id}`);
    }
    const lines = (await readFile(csv.file, 'utf8')).trim().split('\n').slice(1);
    expect(lines.every((l) => l.split(',')[4] === MODEL_A.id)).toBe(true);
    await publish(dir, MODEL_B);
    for (const { file } of [geo, csv]) expect(await verify(file)).toBe(0);
    const latest = await extract('b.csv');
    expect(latest.manifest.correctionModel).toBe(MODEL_B.id);
    expect(await readFile(latest.file, 'utf8')).not.toBe(await readFile(csv.file, 'utf8'));
  });

  it('--correction-model pins a model from the first window on', async () => {
    const { manifest } = await extract('pinned.csv', ['--correction-model', MODEL_A.id]);
    expect(manifest).toMatchObject({ correctionModel: MODEL_A.id, parameters: { correctionModel: MODEL_A.id } });
  });
});
