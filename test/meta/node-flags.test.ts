import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SERVER_NODE_FLAGS } from '../../bench/server-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The words between `node` and `bin/fire-api.js` in a command line. */
function flagsOf(command: string): string[] {
  const words = command.trim().split(/\s+/);
  const node = words.findIndex((w) => w === 'node' || w.endsWith('/node'));
  const bin = words.findIndex((w) => w.endsWith('bin/fire-api.js'));
  expect(node, command).toBeGreaterThanOrEqual(0);
  expect(bin, command).toBeGreaterThan(node);
  return words.slice(node + 1, bin);
}

it('the shipped unit, npm start and the bench run the server with the same Node flags', async () => {
  const unit = await readFile(path.join(ROOT, 'deploy/systemd/fire-api@.service'), 'utf8');
  const exec = unit.split('\n').find((l) => l.startsWith('ExecStart='))!.slice('ExecStart='.length);
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(flagsOf(exec)).toEqual([...SERVER_NODE_FLAGS]);
  expect(flagsOf(pkg.scripts.start!)).toEqual([...SERVER_NODE_FLAGS]);
  expect(SERVER_NODE_FLAGS).toContain('--max-semi-space-size=2');
});
