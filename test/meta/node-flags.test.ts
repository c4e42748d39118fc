import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../bench/server/server-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The words between the `node` that runs `bin/fire-api.js` and it, in a command line. */
function flagsOf(command: string): string[] {
  const words = command.trim().split(/\s+/);
  const bin = words.findIndex((w) => w.endsWith('bin/fire-api.js'));
  const node = words.slice(0, bin).reduce((last, w, i) => (w === 'node' || w.endsWith('/node') ? i : last), -1);
  expect(node, command).toBeGreaterThanOrEqual(0);
  expect(bin, command).toBeGreaterThan(node);
  return words.slice(node + 1, bin);
}

/** The variables a command line sets before the `node` that runs `bin/fire-api.js` (after any `&&`), COMPILED_DIR aside. */
function envOf(command: string): Record<string, string> {
  const last = command.split('&&').at(-1)!.trim().split(/\s+/);
  const node = last.findIndex((w) => w === 'node' || w.endsWith('/node'));
  return Object.fromEntries(last.slice(0, node).map((w) => w.split('=') as [string, string]).filter(([k]) => k !== 'COMPILED_DIR'));
}

/** The `COMPILED_DIR=` a command line sets, and whether it builds that tree first. */
function compiledOf(command: string): { compiledDir: string | undefined; builds: boolean } {
  const compiledDir = /(?:^|\s)COMPILED_DIR=(\S+)\s/.exec(command)?.[1];
  return { compiledDir, builds: command.startsWith('node bin/build.mjs && ') };
}

it('the shipped unit, npm start and the bench run the server with the same Node flags and malloc settings, from the compiled tree', async () => {
  const unit = await readFile(path.join(ROOT, 'deploy/systemd/fire-api@.service'), 'utf8');
  const exec = unit.split('\n').find((l) => l.startsWith('ExecStart='))!.slice('ExecStart='.length);
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(flagsOf(exec)).toEqual([...SERVER_NODE_FLAGS]);
  expect(flagsOf(pkg.scripts.start!)).toEqual([...SERVER_NODE_FLAGS]);
  expect(SERVER_NODE_FLAGS).toContain('--max-semi-space-size=2');
  const unitEnv = Object.fromEntries(unit.split('\n').filter((l) => /^Environment=MALLOC_/.test(l)).map((l) => l.slice('Environment='.length).split('=') as [string, string]));
  expect(unitEnv).toEqual(SERVER_ENV);
  expect(envOf(pkg.scripts.start!)).toEqual(SERVER_ENV);
  expect(SERVER_ENV).toEqual({ MALLOC_ARENA_MAX: '2' });
  const compiled = { compiledDir: 'dist', builds: true };
  expect(unit.split('\n').filter((l) => l.startsWith('Environment=COMPILED_DIR='))).toEqual(['Environment=COMPILED_DIR=dist']);
  expect(compiledOf(pkg.scripts.start!)).toEqual(compiled);
  expect(pkg.scripts.build).toBe('node bin/build.mjs');
  // Every bench that starts servers measures the product (bench/server/server-process.ts passes the bench's
  // environment on); these three start none (operator commands, an in-process prototype, the
  // aggregates' statements in DuckDB alone), and bench:answers compares answers, not figures, of two
  // trees run from their sources (a compiled tree of this one would not be the other's).
  const serverless = ['bench:ops', 'bench:render', 'bench:aggregate-statement', 'bench:answers'];
  const benches = Object.entries(pkg.scripts).filter(([name]) => name.startsWith('bench') && !serverless.includes(name));
  expect(benches.length).toBeGreaterThanOrEqual(7);
  expect(benches.map(([name, command]) => [name, compiledOf(command)])).toEqual(benches.map(([name]) => [name, compiled]));
});
