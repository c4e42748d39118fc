import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { needService, qgisPython } from '../../helpers/services.ts';

// QGIS 3.22 (Debian 12's) cannot send a bearer header: its users add the layer with a Basic
// authentication configuration holding the key. Its OAPIF provider reads the landing page, the
// API definition, the collection, then the items page by page.
const QGIS = qgisPython();

let server: TestServer;
beforeAll(async () => {
  const dataDir = await writeSampleData();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 300, 25);
  server = await startServer(dataDir, { ROW_LIMIT: '100' });
}, 60_000);
afterAll(() => server.close());

function loadInQgis(collection: string): Promise<{ stored: boolean; valid: boolean; ids: string[]; messages: string[] }> {
  return new Promise((resolve, reject) => {
    void tempDir('qgis-home-').then((home) => {
      const child = execFile(QGIS.path!, [path.join(import.meta.dirname, 'qgis-load.py'), `${server.url}/api/v1/ogc`, collection], { env: { ...process.env, HOME: home, QT_QPA_PLATFORM: 'offscreen', XDG_RUNTIME_DIR: home }, timeout: 90_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        const line = stdout.trim().split('\n').at(-1) ?? '';
        if (!line.startsWith('{')) return reject(new Error(`QGIS printed no result (${error?.message ?? 'exit 0'}): ${stderr.slice(-2000)}`));
        resolve(JSON.parse(line));
      });
      // The key goes in on stdin: never on a command line other processes can read.
      child.stdin!.end(`${server.key}\n`);
    }, reject);
  });
}

it("QGIS 3.22's OAPIF provider loads hotspots with a Basic auth configuration: every row of the CSV, by id", { timeout: 120_000 }, async (ctx) => {
  needService(ctx, QGIS);
  const result = await loadInQgis('hotspots');
  expect(result.stored).toBe(true);
  expect(result.valid, result.messages.join('\n')).toBe(true);
  // The sample days through the v1 CSV (fewer than ROW_LIMIT rows), and the 300 bulk rows by their ids.
  const csv = await (await server.get('/api/v1/hotspots?from=2025-07-01&to=2025-08-05&format=csv')).text();
  const sample = csv.trim().split('\n').slice(1).map((line) => line.split(',')[0]!);
  expect(sample.length).toBeGreaterThan(0);
  const expected = [...sample, ...Array.from({ length: 300 }, (_, i) => `2025-08-05-${String(i).padStart(8, '0')}`)];
  // QGIS asks for pages of the limit the API definition allows at most (here ROW_LIMIT, 100) and follows next.
  expect([...result.ids].sort()).toEqual([...expected].sort());
});
