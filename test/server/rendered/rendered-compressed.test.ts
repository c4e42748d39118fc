import { readdir, truncate } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparableAnswer } from '../../helpers/answer.ts';
import { answerFromRenderings, metric, pausedRead, plainAndRendered } from '../../helpers/renderings.ts';
import type { TestServer } from '../../helpers/server.ts';
import { until } from '../../helpers/until.ts';

// A window from renderings too large to be compressed whole before its first byte (more than
// COMPRESS_WHOLE_MAX_MB, here 8 MiB: 6,000 Features of long versions, about 14 MB, 8 MB compressed,
// more than a fresh connection's buffers hold) is compressed as it is sent, without a length, as a
// streamed body is: the same bytes once decoded as a server that renders nothing, and a rendering
// cut short while it is sent still cuts the response where every reader sees it. IN_MEMORY_ROWS
// below the window's rows: answered the old way, it is streamed.
let plain: TestServer;
let rendered: TestServer;
let renderings: string;
beforeAll(async () => {
  ({ plain, rendered, renderings } = await plainAndRendered(3_000, 2, 1, 512, { COMPRESS_WHOLE_MAX_MB: '8', IN_MEMORY_ROWS: '5000' }, { version: 80 }));
}, 120_000);
afterAll(async () => {
  for (const s of [plain, rendered]) await s?.close();
});

const TWO_DAYS = '/api/v1/hotspots?from=2025-08-05&to=2025-08-07';
const GZIP = { 'accept-encoding': 'gzip' };

/** Decoded by fetch, with how it came on the wire: its length (none), coding and framing. */
async function answer(s: TestServer, query: string) {
  const r = await s.get(query, { headers: GZIP });
  const wire = { length: r.headers.get('content-length'), coding: r.headers.get('content-encoding'), framing: r.headers.get('transfer-encoding') };
  return { ...(await comparableAnswer(r)), wire };
}

/** The server that renders nothing never changes its answer (its age zeroed): asked once. */
let plainAnswer: ReturnType<typeof answer> | null = null;
const oldAnswer = () => (plainAnswer ??= answer(plain, TWO_DAYS));

describe('a rendered window over COMPRESS_WHOLE_MAX_MB, compressed as it is sent (RENDER_CACHE_MB)', () => {
  it('is the answer of a server that renders nothing, decoded, sent chunked and coded', async () => {
    const old = await oldAnswer();
    expect([old.status, Number(old.returned)]).toEqual([200, 6_000]);
    expect(old.body.length).toBeGreaterThan(8 * 1024 * 1024);
    // Asked once the old way, its files are rendered once no request uses DuckDB: waited for before asking again.
    await answer(rendered, TWO_DAYS);
    expect(await until(() => rendered.context.extract.renderings!.pending === 0)).toBe(true);
    const hit = await answerFromRenderings(rendered, TWO_DAYS, answer);
    expect(hit).toEqual(old);
    expect(hit.wire).toEqual({ length: null, coding: 'gzip', framing: 'chunked' });
  }, 120_000);

  it('a rendering cut short while it is sent ends the coded response unfinished (no last chunk); the next answer is whole', async () => {
    await answerFromRenderings(rendered, TWO_DAYS, answer);
    const hits = await metric(rendered, 'fire_api_renderings_hits_total');
    const cut = await pausedRead(rendered, TWO_DAYS, async () => {
      for (const name of await readdir(renderings)) await truncate(path.join(renderings, name), 1000);
    }, GZIP);
    expect(await metric(rendered, 'fire_api_renderings_hits_total')).toBe(hits + 1);
    expect([cut.status, cut.encoding, cut.complete]).toEqual([200, 'gzip', false]);
    expect((await answer(rendered, TWO_DAYS)).body).toEqual((await oldAnswer()).body);
  }, 120_000);
});
