import { copyFile, mkdir, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { hashFooter } from '../../queries/files/footer.ts';
import { waitFor } from '../helpers/http.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer } from '../helpers/server.ts';

describe('file checks warmed at start', () => {
  it('checks every data file in the background, logs a broken one, and serves meanwhile', async () => {
    const dir = await writeSampleData();
    const bad = path.join(dir, 'hotspots/date=2025-08-02/b.parquet');
    await copyFile(path.join(dir, 'hotspots/date=2025-08-02/a.parquet'), bad);
    await truncate(bad, 100);
    // A folder the listing never reads (the month lacks its leading zero): said once at start.
    await mkdir(path.join(dir, 'hotspots/date=2025-8-1'));
    await copyFile(path.join(dir, 'hotspots/date=2025-08-01/a.parquet'), path.join(dir, 'hotspots/date=2025-8-1/a.parquet'));
    const logs = new PassThrough();
    let text = '';
    logs.on('data', (c: Buffer) => (text += c.toString()));
    const s = await startServer(dir, { WARM_FILE_CHECKS: 'true', LOG_LEVEL: 'info' }, { logStream: logs });
    try {
      expect(await waitFor(() => text.includes('data file checks warmed'), 5000)).toBe(true);
      // The child exits right after its last message; /metrics says so (a bench waits for it).
      let metrics = '';
      for (let i = 0; i < 100 && !metrics.includes('fire_api_file_checks_warming 0'); i++) {
        metrics = await (await fetch(`${s.url}/metrics`)).text();
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(metrics).toContain('fire_api_file_checks_warming 0');
      const line = JSON.parse(text.split('\n').find((l) => l.includes('data file checks warmed'))!);
      // 2 hotspot files + the bad one, 1 burnt-area, 2 fire-danger, 1 station and 1 reading file.
      expect(line.files).toBe(8);
      expect(text).toContain('"file":"hotspots/date=2025-08-02/b.parquet"');
      const skipped = text.split('\n').find((l) => l.includes('"folder":"hotspots/date=2025-8-1"'));
      expect(skipped).toMatch(/not a valid partition key/);
      expect(s.engine.busy).toBe(0);
      // The verdicts found by the warm-up process are the server's own now: a listed file is a cache
      // hit, answered without a connection (a check would need one and report the file unreadable).
      const good = path.join(dir, 'hotspots/date=2025-08-01/a.parquet');
      const { size, mtimeMs, ino, ctimeMs } = await stat(good);
      const cached = await s.context.extract.checker.check(null as unknown as DuckDBConnection, hotspots, { path: good, size, mtimeMs, ino, ctimeMs });
      expect(cached).toMatchObject({ ok: true, footerHash: await hashFooter({ path: good, size, mtimeMs }), sorted: true });
      const r = await s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv');
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    } finally {
      await s.close();
    }
  });
});
