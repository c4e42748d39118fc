import { copyFile, truncate } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer } from '../helpers/server.ts';

interface ReadyDataset {
  dataset: string;
  available: boolean;
  files: { ok: number; failing: number; unsorted: number };
  failingFiles: { path: string; problem: string }[];
}

describe('/readyz data file states without background checks', () => {
  it('files checked by requests count too: a failing one is listed (relative path, problem) and warned about once', async () => {
    const dir = await writeSampleData();
    const bad = path.join(dir, 'hotspots/date=2025-08-02/b.parquet');
    await copyFile(path.join(dir, 'hotspots/date=2025-08-02/a.parquet'), bad);
    await truncate(bad, 100);
    const logs = new PassThrough();
    let text = '';
    logs.on('data', (c: Buffer) => (text += c.toString()));
    const s = await startServer(dir, { LOG_LEVEL: 'warn' }, { logStream: logs });
    try {
      const before = ((await (await fetch(`${s.url}/readyz`)).json()) as { datasets: ReadyDataset[] }).datasets.find((d) => d.dataset === 'hotspots');
      // Nothing checked yet (no warm-up, no background rounds in this configuration).
      expect(before).toMatchObject({ files: { ok: 0, failing: 0, unsorted: 0 }, failingFiles: [] });
      for (let i = 0; i < 2; i++) expect((await s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv')).status).toBe(503);
      expect((await s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv')).status).toBe(200);
      const after = ((await (await fetch(`${s.url}/readyz`)).json()) as { datasets: ReadyDataset[] }).datasets.find((d) => d.dataset === 'hotspots')!;
      expect(after.available).toBe(true);
      expect(after.files.failing).toBe(1);
      expect(after.failingFiles).toEqual([{ path: 'hotspots/date=2025-08-02/b.parquet', problem: expect.stringMatching(/^unreadable: /) }]);
      expect(after.failingFiles[0]!.problem).not.toContain(dir);
      expect(text.split('\n').filter((l) => l.includes('data file fails its check'))).toHaveLength(1);
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      expect(metrics).toContain('fire_api_data_files{dataset="hotspots",state="failing"} 1');
    } finally {
      await s.close();
    }
  });
});
