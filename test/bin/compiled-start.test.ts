import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/server/server-process.ts';
import { issueKey } from '../../server/keys/key-admin.ts';
import { build, copyTree, removeTree, ROOT } from '../helpers/compiled-tree.ts';
import { fireApi } from '../helpers/cli.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/http.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { TEST_HOLDER } from '../helpers/server.ts';

let tree: string;
beforeAll(async () => {
  // A copy of the suite's compiled tree: the last test breaks its stamp and builds it again.
  tree = await copyTree();
}, 300_000);
afterAll(() => removeTree(tree));

type LogLine = Record<string, unknown> & { msg?: string };

/** `fire-api serve` as npm start and the systemd unit run it, from the compiled `tree`; its log lines, and its end. */
function serve(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--max-semi-space-size=2', path.join(ROOT, 'bin/fire-api.js'), 'serve'], {
    env: { ...process.env, LOG_LEVEL: 'info', COMPILED_DIR: tree, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const ended = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);
  return { child, ended, logs, output: () => out };
}

describe('the compiled start (COMPILED_DIR: the tree `npm run build` compiled)', () => {
  it('serves from the compiled tree: data, the page assets read beside the code, and the file checks in a child started from the tree', async () => {
    const dataDir = await writeSampleData();
    const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
    const { key } = await issueKey(keysFile, TEST_HOLDER, 30);
    const port = await freePort();
    const server = serve({ DATA_DIR: dataDir, KEYS_FILE: keysFile, TEMP_DIR: path.join(dataDir, '.tmp'), PORT: String(port) });
    try {
      const seen = (msg: string) => server.logs().some((l) => l.msg === msg);
      // The file checks of the start run in a child process: warmed means it ran, from the tree's own worker.
      expect(await waitFor(() => seen('data file checks warmed') || server.child.exitCode !== null, 60_000), server.output()).toBe(true);
      expect(server.logs().find((l) => l.code !== undefined)).toMatchObject({ code: 'compiled' });
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const data = await fetch(`${base}/api/v1/fire-danger?from=2025-08-01&to=2025-08-02&format=csv`, { headers: { authorization: `Bearer ${key}` } });
      expect(data.status).toBe(200);
      const csv = await data.text();
      expect(csv).toMatch(/^date,/);
      // The client program runs from the tree as well.
      const out = path.join(dataDir, 'extract.csv');
      const extract = await fireApi(['extract', 'fire-danger', '--from', '2025-08-01', '--to', '2025-08-02', '--format', 'csv', '--out', out, '--base-url', base], { COMPILED_DIR: tree, FIRE_API_KEY: key });
      expect(extract.code, extract.stderr).toBe(0);
      expect(await readFile(out, 'utf8')).toBe(csv);
      const asset = await fetch(`${base}/api/v1/ogc/assets/explore-page.js`);
      expect(asset.status).toBe(200);
      expect(await asset.text()).toBe(await readFile(path.join(ROOT, 'server/ogc/assets/explore-page.js'), 'utf8'));
      expect(server.logs().filter((l) => Number(l.level) >= 50)).toEqual([]);
    } finally {
      server.child.kill('SIGTERM');
      await server.ended;
    }
  });

  it('refuses a tree that is not a finished build of these sources, and a build brings it up to date', async () => {
    const stamp = path.join(ROOT, tree, 'build.json');
    const built = await readFile(stamp, 'utf8');
    // Already built from these sources: nothing is compiled again.
    expect(await build(tree)).toBe('');
    expect(await readFile(stamp, 'utf8')).toBe(built);

    await writeFile(stamp, JSON.stringify({ digest: 'f'.repeat(64) }));
    const stale = serve({ PORT: String(await freePort()) });
    expect(await stale.ended).toBe(2);
    expect(stale.output()).toMatch(/^fire-api: COMPILED_DIR=\.build-test-\w+ was built from other sources than these: run `npm run build`/);

    const missing = serve({ COMPILED_DIR: 'no-such-tree' });
    expect(await missing.ended).toBe(2);
    expect(missing.output()).toMatch(/COMPILED_DIR=no-such-tree holds no finished build/);
    const outside = serve({ COMPILED_DIR: path.dirname(ROOT) });
    expect(await outside.ended).toBe(2);
    expect(outside.output()).toMatch(/must be a folder inside the checkout/);

    expect(await build(tree)).toMatch(/compiled in/);
    expect(JSON.parse(await readFile(stamp, 'utf8'))).toMatchObject({ digest: JSON.parse(built).digest });
  }, 300_000);
});
