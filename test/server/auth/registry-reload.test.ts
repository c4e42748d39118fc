import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { updateRegistry } from '../../../server/keys/registry-file.ts';
import { waitFor } from '../../helpers/http.ts';
import { captureLogs } from '../../helpers/logs.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer } from '../../helpers/server.ts';

const PATH = '/api/v1/sensor-stations';

describe('key registry reload keeps the last good registry', () => {
  it('a deleted KEYS_FILE keeps every key valid and logs an error; an emptied but valid registry is honoured', async () => {
    const logs = captureLogs();
    const s = await startServer(await writeSampleData(), { KEYS_RELOAD_MS: '50', LOG_LEVEL: 'info' }, { logStream: logs.stream });
    const missingLogged = () => logs.lines().some((l) => l.level === 50 && String(l.msg).includes('key registry file is missing'));
    try {
      expect((await s.get(PATH)).status).toBe(200);
      await rm(s.keysFile);
      expect(await waitFor(missingLogged, 10_000)).toBe(true);
      // Several reload periods after the deletion was seen, the key still works.
      await new Promise((r) => setTimeout(r, 300));
      expect((await s.get(PATH)).status).toBe(200);
      expect(logs.lines().some((l) => l.msg === 'key registry reloaded' && l.keys === 0)).toBe(false);
      await updateRegistry(s.keysFile, (r) => void r.keys.splice(0));
      let status = 0;
      const until = Date.now() + 15_000;
      while (status !== 401 && Date.now() < until) {
        status = (await s.get(PATH)).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(401);
      expect(logs.lines().some((l) => l.msg === 'key registry reloaded' && l.keys === 0)).toBe(true);
    } finally {
      await s.close();
    }
  }, 60_000);
});
