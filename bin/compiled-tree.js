// Which sources a compiled tree was built from: `npm run build` stamps the tree with a digest of
// its inputs, and a tree whose stamp does not match this checkout's sources is refused, never run.
'use strict';
const { createHash } = require('node:crypto');
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const BUILD_CONFIG = 'tsconfig.build.json';
/** The stamp a finished build writes into its tree, last. */
const STAMP = 'build.json';

/** Every file under `dir` (relative to the checkout), sorted. */
function filesUnder(dir) {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** The folders the build compiles (its tsconfig's `include`), relative to the checkout. */
function sourceFolders() {
  return JSON.parse(readFileSync(path.join(ROOT, BUILD_CONFIG), 'utf8')).include;
}

/** A digest of everything that shapes a compiled tree: the compiled folders' files (assets included), the package and the build's settings. */
function sourcesDigest() {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'tsconfig.json', BUILD_CONFIG, ...sourceFolders().flatMap(filesUnder)]) {
    hash.update(`${file}\0`).update(readFileSync(path.join(ROOT, file))).update('\0');
  }
  return hash.digest('hex');
}

/** A compiled tree's folder: relative to the checkout (its packages are the checkout's node_modules). */
function treeFolder(value) {
  return path.resolve(ROOT, value);
}

/** A folder below the checkout's root: Node finds the checkout's package.json and node_modules from there. */
function insideCheckout(folder) {
  const inside = path.relative(ROOT, folder);
  return inside !== '' && inside.split(path.sep)[0] !== '..' && !path.isAbsolute(inside);
}

/** Why the tree in `folder` must not run, or null when it was built from these very sources. */
function treeProblem(folder) {
  if (!insideCheckout(folder)) return 'must be a folder inside the checkout';
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(path.join(folder, STAMP), 'utf8'));
  } catch {
    return 'holds no finished build';
  }
  return stamp.digest === sourcesDigest() ? null : 'was built from other sources than these';
}

module.exports = { ROOT, BUILD_CONFIG, STAMP, insideCheckout, sourceFolders, sourcesDigest, treeFolder, treeProblem };
