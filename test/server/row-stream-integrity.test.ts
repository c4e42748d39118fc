import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { tempDir, wkbPolygon, writeChain } from '../helpers/fixtures.ts';
import { rawGet, waitFor } from '../helpers/http.ts';
import { corruptColumn, writeParquet } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const ring = (x: number, y: number) => [[x, y], [x + 0.01, y], [x + 0.01, y + 0.01], [x, y + 0.01], [x, y]];

/** `n` perimeters on one day of `month`, with long names so the first month alone fills socket buffers. */
function perimeters(month: string, n: number, idBase: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: idBase + i,
    FIREDATE: `${month}-15T00:00:00Z`,
    LASTUPDATE: `${month}-16T00:00:00Z`,
    FINALDATE: null,
    COUNTRY: 'PT',
    PROVINCE: 'Coimbra',
    COMMUNE: `Commune ${'x'.repeat(200)} ${i}`,
    AREA_HA: 10 + i,
    CLASS: '30DAYS',
    geometry: wkbPolygon([ring(-8 + i / 1000, 40)]),
  }));
}

let server: TestServer;
beforeAll(async () => {
  const dir = await tempDir();
  await writeParquet(path.join(dir, 'burnt-areas/month=2025-06/a.parquet'), burntAreas, perimeters('2025-06', 3000, 1));
  await writeParquet(path.join(dir, 'burnt-areas/month=2025-07/a.parquet'), burntAreas, perimeters('2025-07', 3000, 100_000));
  await corruptColumn(path.join(dir, 'burnt-areas/month=2025-07/a.parquet'), 'COMMUNE');
  await writeChain(dir, 'burnt-areas', CHAIN);
  server = await startServer(dir);
});
afterAll(() => server.close());

describe('GeoJSON with WKB geometry (streamed through JavaScript)', () => {
  it('a page that fails after the first group aborts the transfer, never a clean short 200', async () => {
    const r = await rawGet(`${server.url}/api/v1/burnt-areas?from=2025-06-01&to=2025-08-01`, { headers: server.auth });
    expect(r.status).toBe(200);
    expect(Number(r.headers['x-returned'])).toBe(6000);
    expect(r.bytes).toBeGreaterThan(500_000);
    expect(r.complete).toBe(false);
    expect(await waitFor(() => server.engine.busy === 0)).toBe(true);
  });

  it('the month before the bad one completes cleanly', async () => {
    const r = await rawGet(`${server.url}/api/v1/burnt-areas?from=2025-06-01&to=2025-07-01`, { headers: server.auth });
    expect(r.complete).toBe(true);
    expect(Number(r.headers['x-returned'])).toBe(3000);
  });
});
