import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fixtures.ts';
import { captureLogs, type CapturedLogs } from '../helpers/logs.ts';
import { writeBulkHotspotDays } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { isCi } from '../helpers/services.ts';

/**
 * TEMP_DIR on a real 1 MB tmpfs (needs root, as here and in CI): the temp files of a whole-window
 * extract really hit ENOSPC ("No space left on device" from DuckDB's COPY), nothing is simulated.
 */
let mountPoint = '';
let mountError: string | null = null;
let server: TestServer;
let logs: CapturedLogs;
beforeAll(async () => {
  mountPoint = path.join(await tempDir('fire-api-small-tmp-'), 'tmp');
  await mkdir(mountPoint);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (e) {
    mountError = (e as Error).message.split('\n')[0] ?? 'mount failed';
    return;
  }
  logs = captureLogs();
  // IN_MEMORY_ROWS=0: the GeoJSON window would otherwise be read into memory, needing no temp space at all.
  server = await startServer(await writeBulkHotspotDays(2), { TEMP_DIR: mountPoint, LOG_LEVEL: 'info', IN_MEMORY_ROWS: '0' }, { logStream: logs.stream });
}, 60_000);
afterAll(async () => {
  if (mountError !== null) return;
  await server?.close();
  execFileSync('umount', [mountPoint]);
});

describe('TEMP_DIR full', () => {
  it('a GeoJSON or CSV extract that runs out of temporary space is a 503 that says so, counted in /metrics and logged as an error, no path in the answer', async (ctx) => {
    if (mountError !== null) {
      if (isCi()) throw new Error(`cannot mount a 1 MB tmpfs for TEMP_DIR (run as root): ${mountError}`);
      ctx.skip(`needs root to mount a tmpfs: ${mountError}`);
    }
    for (const format of ['geojson', 'csv']) {
      const r = await server.get(`/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=${format}`);
      const text = await r.text();
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('60');
      expect(JSON.parse(text).detail).toBe('The server ran out of temporary space for this response, so the service did not look. Retry later.');
      expect(text).not.toContain(mountPoint);
      expect(text).not.toContain('extract-');
    }
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^fire_api_temp_space_exhausted_total 2$/m);
    expect(logs.lines().filter((l) => l.level === 50 && String(l.msg).startsWith('TEMP_DIR is full'))).toHaveLength(2);
  }, 60_000);
});
