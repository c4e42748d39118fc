import { copyFile, truncate } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/http.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer } from '../helpers/server.ts';

describe('file checks warmed at start', () => {
  it('checks every data file in the background, logs a broken one, and serves meanwhile', async () => {
    const dir = await writeSampleData();
    const bad = path.join(dir, 'hotspots/date=2025-08-02/b.parquet');
    await copyFile(path.join(dir, 'hotspots/date=2025-08-02/a.parquet'), bad);
    await truncate(bad, 100);
    const logs = new PassThrough();
    let text = '';
    logs.on('data', (c: Buffer) => (text += c.toString()));
    const s = await startServer(dir, { WARM_FILE_CHECKS: 'true', LOG_LEVEL: 'info' }, { logStream: logs });
    try {
      expect(await waitFor(() => text.includes('data file checks warmed'), 5000)).toBe(true);
      const line = JSON.parse(text.split('\n').find((l) => l.includes('data file checks warmed'))!);
      // 2 hotspot files + the bad one, 1 burnt-area, 2 fire-danger, 1 station and 1 reading file.
      expect(line.files).toBe(8);
      expect(text).toContain('"file":"hotspots/date=2025-08-02/b.parquet"');
      expect(s.engine.busy).toBe(0);
      const r = await s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv');
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    } finally {
      await s.close();
    }
  });
});
