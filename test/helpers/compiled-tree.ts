import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '../..');
const BUILD = path.join(ROOT, 'bin/build.mjs');

/** The tree the suite's children run (test/setup/compiled-tree.ts builds it, vitest.config.ts hands it on as COMPILED_DIR); kept between runs. */
export const SUITE_TREE = '.build-test-suite';

/** `npm run build`'s script with `--out tree`; its stderr (it names the tree when it compiled, nothing when the tree was current). */
export async function build(tree: string): Promise<string> {
  const { stderr } = await run(process.execPath, [BUILD, '--out', tree], { cwd: ROOT, timeout: 300_000 });
  return stderr;
}

/** A fresh copy of the suite's tree (a finished build of these sources) to change or break; remove it with removeTree. */
export async function copyTree(): Promise<string> {
  const tree = path.relative(ROOT, await mkdtemp(path.join(ROOT, '.build-test-')));
  await cp(path.join(ROOT, SUITE_TREE), path.join(ROOT, tree), { recursive: true });
  return tree;
}

export const removeTree = (tree: string) => rm(path.join(ROOT, tree), { recursive: true, force: true });
