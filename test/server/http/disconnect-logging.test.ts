import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/http.ts';
import { captureLogs, type CapturedLogs } from '../../helpers/logs.ts';
import { writeBulkHotspotDays } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let logs: CapturedLogs;
beforeAll(async () => {
  const dir = await writeBulkHotspotDays(3);
  logs = captureLogs();
  server = await startServer(dir, { LOG_LEVEL: 'info' }, { logStream: logs.stream });
});
afterAll(() => server.close());

/** A GET the client abandons: after `ms` whatever the state, or after the first `bytes` of the body. */
function abandon(url: string, headers: Record<string, string>, at: { ms?: number; bytes?: number }): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get(url, { headers }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (at.bytes !== undefined && n >= at.bytes) req.destroy();
      });
      res.on('close', () => resolve());
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    if (at.ms !== undefined) setTimeout(() => req.destroy(), at.ms);
  });
}

describe('a client that hangs up is an info line, never a warning or an error', () => {
  it('hang-ups before the first byte and mid-stream log "client closed" at info and nothing at warn or error', async () => {
    const url = `${server.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-04`;
    for (const ms of [0, 1, 2, 3, 5, 8, 12, 20]) await abandon(url, server.auth, { ms });
    for (const bytes of [1, 50_000, 500_000]) await abandon(`${url}&format=csv`, server.auth, { bytes });
    const settled = () => server.engine.busy === 0;
    expect(await waitFor(settled, 10_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    const lines = logs.lines();
    expect(lines.filter((l) => Number(l.level) >= 40).map((l) => l.msg)).toEqual([]);
    // At least one hang-up landed before the response started (else this test would prove nothing about that case).
    expect(lines.some((l) => l.level === 30 && l.msg === 'client closed the connection before the response')).toBe(true);
    expect(lines.some((l) => l.level === 30 && String(l.msg).startsWith('connection closed during the response'))).toBe(true);
  }, 60_000);
});
