import { rename } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { writeChain } from '../helpers/fixtures.ts';
import { CHAIN, writeSampleData } from '../helpers/sample-data.ts';
import { startServer } from '../helpers/server.ts';

const DATASET_NAMES = ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings'];

async function answer(url: string) {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get('content-type'), body: (await r.json()) as Record<string, unknown> };
}

describe('/readyz is 503 when the node cannot serve data; /healthz stays "the process is alive"', () => {
  it('DATA_DIR gone (a lost mount): 503 naming DATA_DIR without its path, ready again once it is back', async () => {
    const dir = await writeSampleData();
    const s = await startServer(dir);
    try {
      expect((await answer(`${s.url}/readyz`)).status).toBe(200);
      await rename(dir, `${dir}.gone`);
      const gone = await answer(`${s.url}/readyz`);
      expect(gone).toMatchObject({ status: 503, type: 'application/problem+json; charset=utf-8', body: { status: 503, detail: expect.stringMatching(/^Not ready: DATA_DIR is missing or unreadable/) } });
      expect(JSON.stringify(gone.body)).not.toContain(dir);
      expect(await answer(`${s.url}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
      await rename(`${dir}.gone`, dir);
      expect((await answer(`${s.url}/readyz`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('every dataset unavailable: 503 with each reason; one dataset available again: ready', async () => {
    const dir = await writeSampleData();
    for (const d of DATASET_NAMES) await writeChain(dir, d, { ...CHAIN, available: false });
    const s = await startServer(dir);
    try {
      const none = await answer(`${s.url}/readyz`);
      expect(none.status).toBe(503);
      expect(none.body.detail).toBe(`Not ready: no dataset is available (${DATASET_NAMES.map((d) => `${d}: feeding data chain reports unavailable`).join('; ')}).`);
      expect((await answer(`${s.url}/healthz`)).status).toBe(200);
      await writeChain(dir, 'fire-danger', CHAIN);
      const one = await answer(`${s.url}/readyz`);
      expect(one.status).toBe(200);
      expect(one.body.status).toBe('ready');
    } finally {
      await s.close();
    }
  });
});
