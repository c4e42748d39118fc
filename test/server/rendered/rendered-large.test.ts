import { readdir, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparableAnswer } from '../../helpers/answer.ts';
import type { TestServer } from '../../helpers/server.ts';
import { answerFromRenderings, metric, pausedRead, plainAndRendered } from '../../helpers/renderings.ts';

// Windows larger than one read into memory (here 6,000 rows over IN_MEMORY_ROWS 5,000, of long ids:
// 2.4 to 11 MB) answered from their files' renderings a piece at a time, against a server that renders
// nothing: the same status, headers and bytes. GROUP_ROWS below the window's rows: answered the old
// way, it is streamed group by group.
let plain: TestServer;
let rendered: TestServer;
let renderings: string;
beforeAll(async () => {
  ({ plain, rendered, renderings } = await plainAndRendered(3_000, 5, 3, 256, { GROUP_ROWS: '4000', IN_MEMORY_ROWS: '5000' }, { id: 30 }));
}, 60_000);
afterAll(async () => {
  for (const s of [plain, rendered]) await s?.close();
});

const TWO_DAYS = '/api/v1/hotspots?from=2025-08-05&to=2025-08-07';
const BBOX = `${TWO_DAYS}&bbox=-8.06,39.0,-8.0,39.07`;
const QUERIES = [TWO_DAYS, `${TWO_DAYS}&format=csv`, BBOX, '/api/v1/hotspots?from=2025-08-05T12:00:00Z&to=2025-08-06T18:00:00Z&format=csv'];

/**
 * Uncompressed unless asked: a body of known length is then sent as it is read. Its length aside:
 * the old way streams these windows group by group, so only a rendered answer knows it before the first byte.
 */
async function answer(s: TestServer, query: string, encoding = 'identity') {
  const r = await s.get(query, { headers: { 'accept-encoding': encoding } });
  const sent = (await r.clone().arrayBuffer()).byteLength;
  const a = await comparableAnswer(r);
  const { 'content-length': length, ...headers } = a.headers;
  if (length !== undefined) expect(Number(length), query).toBe(sent);
  return { ...a, headers };
}
const renderedWay = async () => Number(/^fire_api_extracts_total\{dataset="hotspots",way="rendered"\} (\d+)$/m.exec(await (await fetch(`${rendered.url}/metrics`)).text())?.[1] ?? 0);

const renderedAnswer = (query: string) => answerFromRenderings(rendered, query, answer);

/** The server that renders nothing never changes its answer (its age zeroed): each asked once. */
const plainAnswers = new Map<string, ReturnType<typeof answer>>();
const plainAnswer = (query: string, encoding = 'identity') => {
  const key = `${encoding} ${query}`;
  if (!plainAnswers.has(key)) plainAnswers.set(key, answer(plain, query, encoding));
  return plainAnswers.get(key)!;
};

/** More than a fresh connection's socket buffers and the pieces read ahead of it hold (about 4.5 MB): the window is still read while the client waits. */
const BEYOND_BUFFERS = 10_000_000;

describe('large windows from renderings, a piece at a time (RENDER_CACHE_MB)', () => {
  it('every window, before and after its files are rendered, is the answer of a server that renders nothing', async () => {
    for (const q of QUERIES) {
      const a = await answer(rendered, q);
      expect([q, a.status, Number(a.returned)]).toEqual([q, 200, expect.any(Number)]);
      expect(a, q).toEqual(await plainAnswer(q));
    }
    const way = await renderedWay();
    for (const q of QUERIES) {
      expect(await renderedAnswer(q), q).toEqual(await plainAnswer(q));
    }
    expect(await renderedWay()).toBe(way + QUERIES.length);
    expect(Number((await plainAnswer(TWO_DAYS)).returned)).toBe(6_000);
    // Compressed: the rendered bytes coded whole before the first byte, as any body of known length.
    expect(await answer(rendered, BBOX, 'gzip')).toEqual(await plainAnswer(BBOX, 'gzip'));
  });

  it('a rendering cut short while its window is sent cuts the response short of its length; the next answer is the old way, whole', async () => {
    await renderedAnswer(TWO_DAYS);
    const cut = await pausedRead(rendered, TWO_DAYS, async () => {
      for (const name of await readdir(renderings)) await truncate(path.join(renderings, name), 1000);
    });
    expect(cut.status).toBe(200);
    expect(cut.complete).toBe(false);
    expect(cut.bytes).toBeLessThan(cut.length);
    const hits = await metric(rendered, 'fire_api_renderings_hits_total');
    expect(await answer(rendered, TWO_DAYS)).toEqual(await plainAnswer(TWO_DAYS));
    expect(await metric(rendered, 'fire_api_renderings_hits_total')).toBe(hits);
    expect(await renderedAnswer(TWO_DAYS)).toEqual(await plainAnswer(TWO_DAYS));
  });

  it('a rendering removed while its window is sent: the window is sent whole from the file it opened; the next answer is the old way', async () => {
    const whole = await renderedAnswer(TWO_DAYS);
    const sent = await pausedRead(rendered, TWO_DAYS, async () => {
      for (const name of await readdir(renderings)) await rm(path.join(renderings, name), { force: true });
    });
    expect(sent).toEqual({ status: 200, length: expect.any(Number), bytes: sent.length, complete: true });
    expect(sent.length).toBeGreaterThan(BEYOND_BUFFERS);
    const hits = await metric(rendered, 'fire_api_renderings_hits_total');
    expect(await answer(rendered, TWO_DAYS)).toEqual(whole);
    expect(await metric(rendered, 'fire_api_renderings_hits_total')).toBe(hits);
    expect(await renderedAnswer(TWO_DAYS)).toEqual(whole);
  });

  it('a client reading slowly gets every byte', async () => {
    await renderedAnswer(TWO_DAYS);
    const slow = await pausedRead(rendered, TWO_DAYS, () => new Promise((resolve) => setTimeout(resolve, 200)));
    expect(slow).toEqual({ status: 200, length: expect.any(Number), bytes: slow.length, complete: true });
    expect(slow.length).toBeGreaterThan(BEYOND_BUFFERS);
  });
});
