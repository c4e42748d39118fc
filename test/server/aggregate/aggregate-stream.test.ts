import type http from 'node:http';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendStreamed } from '../../../server/routes/aggregate.ts';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { rawGet, stalledGet, waitFor } from '../../helpers/http.ts';
import { writeSpreadHotspots } from '../../helpers/parquet.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const GROUPS = 60_000;
const URL = '/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-02&interval=all&groupBy=grid&cell=0.01';

let server: TestServer;
beforeAll(async () => {
  const dir = await tempDir();
  await writeSpreadHotspots(path.join(dir, 'hotspots/date=2025-08-01/a.parquet'), '2025-08-01', GROUPS);
  await writeChain(dir, 'hotspots', CHAIN);
  // Computed for each request: every answer here is written from DuckDB's result chunks.
  server = await startServer(dir, { AGGREGATE_CACHE_MB: '0' });
}, 60_000);
afterAll(() => server.close());

/** Reads the rest of a paused response: its bytes, and whether the transfer ended cleanly. */
const readRest = (res: http.IncomingMessage) =>
  new Promise<{ body: string; complete: boolean }>((resolve) => {
    const parts: Buffer[] = [];
    res.on('data', (chunk: Buffer) => parts.push(chunk));
    res.on('close', () => resolve({ body: Buffer.concat(parts).toString('utf8'), complete: res.complete }));
    res.resume();
  });

describe('an aggregate of many groups is written as it is read', () => {
  it('a client that reads nothing holds the server at a small part of the body; reading on, it gets every group', async () => {
    let sending: http.ServerResponse | undefined;
    server.app.server.once('request', (_req: http.IncomingMessage, res: http.ServerResponse) => (sending = res));
    let received: http.IncomingMessage | undefined;
    const request = stalledGet(`${server.url}${URL}`, server.auth, (res) => (received = res));
    // The client reads nothing: the server writes until the socket pushes back, and then waits.
    expect(await waitFor(() => received !== undefined && sending?.writableNeedDrain === true, 30_000)).toBe(true);
    const held = sending!.writableLength;
    expect(sending!.writableEnded).toBe(false);
    expect(received!.headers['transfer-encoding']).toBe('chunked');
    expect(received!.headers['content-length']).toBeUndefined();
    const rest = await readRest(received!);
    request.destroy();
    expect(rest.complete).toBe(true);
    const body = JSON.parse(rest.body) as { features: unknown[]; meta: { returned: number } };
    expect(body.features).toHaveLength(GROUPS);
    expect(body.meta.returned).toBe(GROUPS);
    // What the server had queued for the socket when it stopped was a small part of the body.
    expect(held).toBeLessThan(Buffer.byteLength(rest.body) / 8);
  });

  it('a client that hangs up mid-body is counted as aborted, and leaves every DuckDB connection free for the next answer', async () => {
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await server.get('/metrics')).text())?.[1]);
    const before = await metric('fire_api_streams_aborted_total');
    let sending: http.ServerResponse | undefined;
    server.app.server.once('request', (_req: http.IncomingMessage, res: http.ServerResponse) => (sending = res));
    const request = stalledGet(`${server.url}${URL}`, server.auth);
    expect(await waitFor(() => sending?.writableNeedDrain === true, 30_000)).toBe(true);
    request.destroy();
    expect(await waitFor(() => sending!.destroyed, 30_000)).toBe(true);
    let counted = false;
    for (let i = 0; i < 100 && !counted; i++) counted = (await metric('fire_api_streams_aborted_total')) === before + 1;
    expect(counted).toBe(true);
    expect(await metric('fire_api_duckdb_connections_busy')).toBe(0);
    const next = (await (await server.get(URL)).json()) as { meta: { returned: number } };
    expect(next.meta.returned).toBe(GROUPS);
  });

  it('HEAD counts the length of the body it does not send', async () => {
    const identity = { 'accept-encoding': 'identity' };
    const [head, get] = [await server.get(URL, { method: 'HEAD', headers: identity }), await server.get(URL, { headers: identity })];
    expect(Number(head.headers.get('content-length'))).toBe((await get.arrayBuffer()).byteLength);
    expect(Number(head.headers.get('x-returned'))).toBe(GROUPS);
  });
});

describe('a body that fails after its first byte is cut, never ended short', () => {
  let url: string;
  const app = Fastify();
  let aborted = 0;
  beforeAll(async () => {
    // Groups written a batch at a time, the last failing: ten batches before it, varied enough that even
    // coded they are far more than a coder or a socket buffers, so the headers and bytes are out by then.
    const feature = (i: number) => `{"type":"Feature","geometry":null,"properties":{"count":${(i * 2_654_435_761) % 4_294_967_291}}}`;
    function* failing(): Generator<string> {
      yield '{"type":"FeatureCollection","features":[';
      for (let b = 0; b < 10; b++) yield Array.from({ length: 20_000 }, (_, i) => feature(b * 20_000 + i)).join(',');
      throw new Error('a batch could not be read');
    }
    for (const coding of ['identity', 'gzip', 'br'] as const) app.get(`/${coding}`, (_request, reply) => sendStreamed(reply, failing(), coding, () => aborted++));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  it.each(['identity', 'gzip', 'br'])('%s: a 200 whose transfer is cut, and counted as aborted', async (coding) => {
    const before = aborted;
    const r = await rawGet(`${url}/${coding}`);
    expect(r.status).toBe(200);
    if (coding === 'identity') expect(r.bytes).toBeGreaterThan(100_000);
    expect(r.complete).toBe(false);
    expect(await waitFor(() => aborted === before + 1)).toBe(true);
  });
});
