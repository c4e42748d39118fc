import { execFile } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fixtures.ts';
import { chromium, findOnPath, isCi, needService, parseSkipNote, qgisPython, skipNote, type Service } from '../helpers/services.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

async function fakeProgram(dir: string, name: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, name);
  await writeFile(file, '#!/bin/sh\nexit 0\n');
  await chmod(file, 0o755);
  return file;
}

/** The docs-page test run by a real vitest, with Chromium made unfindable. */
async function runDocsPageTest(env: Record<string, string>): Promise<{ code: number; out: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium', NO_COLOR: '1', FORCE_COLOR: '0' };
  delete base.CI;
  try {
    const r = await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'test/openapi/docs-page.test.ts'], { cwd: ROOT, env: { ...base, ...env }, timeout: 90_000 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : 1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

describe('finding the programs some tests need', () => {
  it('looks for Chromium under every usual name on PATH, and CHROMIUM_PATH wins', async () => {
    const dir = await tempDir('fire-api-path-');
    expect(chromium({ PATH: dir }).path).toBeNull();
    const browser = await fakeProgram(dir, 'chromium-browser');
    expect(chromium({ PATH: `/nonexistent:${dir}` }).path).toBe(browser);
    const own = await fakeProgram(path.join(dir, 'own'), 'my-chrome');
    expect(chromium({ PATH: dir, CHROMIUM_PATH: own }).path).toBe(own);
    expect(chromium({ PATH: dir, CHROMIUM_PATH: path.join(dir, 'missing') }).path).toBeNull();
    expect(findOnPath(['google-chrome'], dir)).toBeNull();
  });

  it('QGIS_PYTHON must be a Python that imports qgis: any other program is no QGIS', async () => {
    const dir = await tempDir('fire-api-path-');
    expect(qgisPython({ QGIS_PYTHON: await fakeProgram(dir, 'python3') }).path).toBeNull();
    expect(qgisPython({ QGIS_PYTHON: path.join(dir, 'missing') }).path).toBeNull();
  });

  it('a file without the execute bit is not a program', async () => {
    const dir = await tempDir('fire-api-path-');
    await writeFile(path.join(dir, 'redis-server'), '');
    expect(findOnPath(['redis-server'], dir)).toBeNull();
  });

  it('a missing program skips with a note the reporter reads back, and throws in CI', () => {
    const missing: Service = { name: 'redis-server', debianPackage: 'redis-server', path: null };
    const skipped: string[] = [];
    const ctx = { skip: (note?: string): never => (skipped.push(note ?? ''), undefined as never) };
    needService(ctx, missing, {});
    expect(parseSkipNote(skipped[0])).toEqual({ name: 'redis-server', debianPackage: 'redis-server' });
    expect(() => needService(ctx, missing, { CI: 'true' })).toThrow(/redis-server is not installed.*apt-get install redis-server/);
    expect(needService(ctx, { ...missing, path: '/usr/bin/redis-server' }, { CI: 'true' })).toBe('/usr/bin/redis-server');
    expect(parseSkipNote('some other reason')).toBeNull();
    expect(skipNote(missing)).toBe('needs redis-server (apt-get install redis-server)');
    expect([isCi({ CI: 'true' }), isCi({ CI: '1' }), isCi({ CI: 'false' }), isCi({})]).toEqual([true, true, false, false]);
  });
});

describe('a run without a program', () => {
  it('passes outside CI and names the skipped test, why, and the apt-get line', async () => {
    const { code, out } = await runDocsPageTest({});
    expect(code).toBe(0);
    expect(out).toMatch(/1 test\(s\) skipped because a program they need is not installed/);
    expect(out).toMatch(/docs-page\.test\.ts > the documentation page renders[^\n]*\n\s+skipped: chromium is not installed/);
    expect(out).toMatch(/To run them all: apt-get update && apt-get install -y chromium\n/);
  }, 120_000);

  it('fails with CI=true, naming the missing program', async () => {
    const { code, out } = await runDocsPageTest({ CI: 'true' });
    expect(code).toBe(1);
    expect(out).toMatch(/chromium is not installed, and CI runs every test: apt-get install chromium/);
    expect(out).not.toMatch(/To run them all/);
  }, 120_000);
});
