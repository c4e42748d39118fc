import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '../..');
const BUILD = path.join(ROOT, 'bin/build.mjs');

/** `npm run build`'s script with `--out tree`; its stderr (it names the tree when it compiled, nothing when the tree was current). */
export async function build(tree: string): Promise<string> {
  const { stderr } = await run(process.execPath, [BUILD, '--out', tree], { cwd: ROOT, timeout: 300_000 });
  return stderr;
}

/**
 * This checkout compiled by `npm run build`'s script into a fresh folder inside the checkout (a
 * compiled tree finds the checkout's packages from there), never into the checkout's own dist/;
 * its name relative to the checkout, as COMPILED_DIR takes it. Remove it with removeTree.
 */
export async function buildTree(): Promise<string> {
  const tree = path.relative(ROOT, await mkdtemp(path.join(ROOT, '.build-test-')));
  await build(tree);
  return tree;
}

export const removeTree = (tree: string) => rm(path.join(ROOT, tree), { recursive: true, force: true });
