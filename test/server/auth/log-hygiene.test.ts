import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { issueKey, revokeKey } from '../../../server/keys/key-admin.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, TEST_HOLDER } from '../../helpers/server.ts';

describe('keys never appear in logs', () => {
  it('a full run at trace level logs key ids but no key, no secret and no query string', async () => {
    const logs = new PassThrough();
    let text = '';
    logs.on('data', (c: Buffer) => (text += c.toString()));
    // The revoked key is in the registry before the server starts: no wait for a reload.
    const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
    const revoked = await issueKey(keysFile, TEST_HOLDER, 30);
    await revokeKey(keysFile, revoked.record.id);
    const s = await startServer(await writeSampleData(), { LOG_LEVEL: 'trace', RATE_LIMIT_PER_MINUTE: '3', AUTH_FAILURES_PER_MINUTE: '2', KEYS_FILE: keysFile }, { logStream: logs });
    const keys = [s.key, revoked.key, `frk_${s.key.slice(4, 12)}_${'Z'.repeat(43)}`];
    const paths = ['/api/v1/hotspots?from=2025-08-01&to=2025-08-02&country=PT', '/api/v1/fire-danger?model=nope', '/api/v1/hotspots?from=bad'];
    try {
      for (const key of keys) {
        for (const p of paths) {
          for (const authorization of [`Bearer ${key}`, `bearer ${key}`]) await (await fetch(`${s.url}${p}`, { headers: { authorization } })).arrayBuffer();
        }
        await (await fetch(`${s.url}/api/v1/hotspots?key=${key}`)).arrayBuffer();
      }
    } finally {
      await s.close();
    }
    expect(text.length).toBeGreaterThan(1000);
    for (const key of keys) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(13));
    }
    expect(text).not.toContain('country=PT');
    expect(text).toContain(`"keyId":"${s.key.slice(4, 12)}"`);
    expect(text).toContain(`"keyId":"${revoked.record.id}"`);
  });
});
