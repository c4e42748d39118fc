import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../bench/server/server-process.ts';
import { issueKey } from '../../server/keys/key-admin.ts';
import { SUITE_TREE } from '../helpers/compiled-tree.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { TEST_HOLDER } from '../helpers/server.ts';
import { needService, systemdAnalyze } from '../helpers/services.ts';
import { Node, SHIPPED_ENV, SHIPPED_UNIT, unitEnvironment, unitSettings } from './nodes.ts';

const run = promisify(execFile);
const ANALYZE = systemdAnalyze();

/** systemd-analyze's findings about instance 8080 of `unitText` (warnings name the unit's file). */
async function analyze(unitText: string, verb: 'verify' | 'security'): Promise<string> {
  const dir = await tempDir('fire-api-unit-');
  // systemd-analyze checks that the program exists: this machine's Node stands in for /usr/bin/node.
  await writeFile(path.join(dir, 'fire-api@.service'), unitText.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `));
  const args = verb === 'verify' ? ['verify', '--man=no'] : ['security', '--offline=true'];
  const r = await run(ANALYZE.path!, [...args, path.join(dir, 'fire-api@8080.service')]).catch((e: { stdout: string; stderr: string }) => e);
  return `${r.stdout}${r.stderr}`;
}

const seconds = (value: string): number => {
  const m = /^(\d+)(s|min)?$/.exec(value.trim());
  if (!m) throw new Error(`not a systemd time span this test reads: ${value}`);
  return Number(m[1]) * (m[2] === 'min' ? 60 : 1);
};

describe('the shipped systemd unit (deploy/systemd/fire-api@.service)', () => {
  it('systemd-analyze finds nothing wrong with it, and rates its hardening OK (exposure at most 3.0)', async (ctx) => {
    needService(ctx, ANALYZE);
    const unit = await readFile(SHIPPED_UNIT, 'utf8');
    const findings = (await analyze(unit, 'verify')).split('\n').filter((l) => l.includes('fire-api@'));
    expect(findings).toEqual([]);
    // The same check sees a mistake when there is one.
    expect(await analyze(unit.replace('[Service]\n', '[Service]\nKillSignals=SIGTERM\n'), 'verify')).toMatch(/fire-api@\.service:\d+: Unknown key 'KillSignals'/);
    const exposure = /Overall exposure level for fire-api@8080\.service: ([\d.]+)/.exec(await analyze(unit, 'security'));
    expect(Number(exposure?.[1])).toBeLessThanOrEqual(3.0);
  });

  it('stops with SIGTERM, and waits longer than the server drains (TimeoutStopSec > SHUTDOWN_GRACE_MS)', async () => {
    expect(await unitSettings('KillSignal')).toEqual(['SIGTERM']);
    const env = await readFile(SHIPPED_ENV, 'utf8');
    const graceMs = Number(/^SHUTDOWN_GRACE_MS=(\d+)$/m.exec(env)?.[1] ?? 30_000);
    const [stop] = await unitSettings('TimeoutStopSec');
    expect(seconds(stop!) * 1000).toBeGreaterThan(graceMs + 10_000);
    expect(await unitSettings('Restart')).toEqual(['on-failure']);
  });

  it('a node started as the unit starts it (its environment file, PORT and TEMP_DIR from the instance, the compiled tree) serves, and exits 0 on SIGTERM, so on-failure does not restart it', async () => {
    const dataDir = await writeSampleData();
    const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
    const { key } = await issueKey(keysFile, TEST_HOLDER, 30);
    const port = await freePort();
    // No Redis listens there: the node fails open and still serves.
    const env = await unitEnvironment(port, { dataDir, keysFile, redisUrl: 'redis://127.0.0.1:9', cacheDir: await tempDir('fire-api-cache-'), compiledDir: SUITE_TREE });
    expect(env.TEMP_DIR).toMatch(new RegExp(`/fire-api/${port}$`));
    const node = new Node('unit', port, env);
    await node.start();
    try {
      expect(node.logged('running the compiled JavaScript (COMPILED_DIR)')).toBe(true);
      const r = await fetch(`http://${node.address}/api/v1/fire-danger?from=2025-08-01&to=2025-08-02&format=csv`, { headers: { authorization: `Bearer ${key}` } });
      expect(r.status).toBe(200);
      // Read to its end: a response still under way at SIGTERM is the rolling-restart test's subject (scale-out.test.ts).
      expect(await r.text()).toMatch(/^date,/);
      expect(await node.terminate()).toEqual({ code: 0, signal: null });
    } finally {
      await node.kill();
    }
  }, 300_000);
});
