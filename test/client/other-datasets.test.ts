import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { parseCsv, writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, readManifestFile } from './harness.ts';

let server: TestServer;
let out: string;
beforeAll(async () => {
  server = await startServer(await writeSampleData(), { ROW_LIMIT: '2' });
  out = await tempDir('fire-api-extract-');
});
afterAll(() => server.close());

const CASES = [
  { dataset: 'burnt-areas', parameters: {}, rows: 1, query: { country: null, bbox: null } },
  // level is not given: the server's default must show up in queryInEffect.
  { dataset: 'fire-danger', parameters: { model: 'effis-ecmwf' }, rows: 2, query: { model: 'effis-ecmwf', level: 'country', areaCode: null } },
  // A sensor dataset is requested with simulated=false unless --include-simulated: the simulated station's reading is left out.
  { dataset: 'sensor-readings', parameters: { series: 'corrected' }, sent: { series: 'corrected', simulated: 'false' }, rows: 2, query: { simulated: 'false', stationId: null, series: 'corrected' } },
];

describe('extract and verify work for every windowed dataset, in pages of at most two rows', () => {
  for (const c of CASES) {
    it(`${c.dataset}: geometry, parameters in effect and CSV agree; verify says identical`, async () => {
      const base = ['--from', '2025-08-01', '--to', '2025-08-03', '--base-url', server.url, '--key', server.key, ...Object.entries(c.parameters).flatMap(([k, v]) => [`--${k}`, v])];
      const geo = path.join(out, `${c.dataset}.geojson`);
      const csv = path.join(out, `${c.dataset}.csv`);
      expect(await extractCommand([c.dataset, ...base, '--out', geo], {}, captureIo().io)).toBe(0);
      expect(await extractCommand([c.dataset, ...base, '--out', csv], {}, captureIo().io)).toBe(0);
      const doc = JSON.parse(await readFile(geo, 'utf8')) as { meta: any; features: unknown[] };
      expect(doc.features).toHaveLength(c.rows);
      expect(doc.meta).toMatchObject({ dataset: c.dataset, query: c.query, returned: c.rows });
      expect(parseCsv(await readFile(csv, 'utf8'))).toHaveLength(c.rows + 1);
      const m = await readManifestFile(`${geo}.manifest.json`);
      expect([m.queryInEffect, m.parameters]).toEqual([c.query, 'sent' in c ? c.sent : c.parameters]);
      for (const file of [geo, csv]) expect(await verifyCommand([`${file}.manifest.json`, '--key', server.key], {}, captureIo().io)).toBe(0);
    });
  }
});
