// `npm run build`: the TypeScript sources compiled into dist/ (or `--out FOLDER`, inside the checkout)
// with the files they read at run time beside them, then stamped with the digest of the sources
// (bin/compiled-tree.js); `COMPILED_DIR=dist` runs that tree. A tree already built from these
// sources is left as it is; otherwise tsc compiles incrementally (only what changed).
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { ROOT, BUILD_CONFIG, STAMP, insideCheckout, sourceFolders, sourcesDigest, treeFolder, treeProblem } = require('./compiled-tree.js');

const fail = (message, code) => {
  console.error(`fire-api build: ${message}`);
  process.exit(code);
};

const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist' } } });
const out = treeFolder(values.out);
const name = path.relative(ROOT, out);
if (!insideCheckout(out)) fail(`--out ${values.out}: must be a folder inside the checkout (its packages are the checkout's)`, 2);
if (treeProblem(out) === null) process.exit(0);

const started = Date.now();
// Taken before compiling: a source changed while tsc runs leaves a stamp that no longer matches, and the tree is refused.
const digest = sourcesDigest();
rmSync(path.join(out, STAMP), { force: true });
const tscArgs = ['-p', path.join(ROOT, BUILD_CONFIG), '--outDir', out, '--tsBuildInfoFile', path.join(out, 'tsbuildinfo.json')];
let tscPath;
try {
  tscPath = require.resolve('typescript/bin/tsc');
} catch {
  fail('TypeScript is not installed: it is a development package, so build before `npm prune --omit=dev` (or `npm ci` without --omit=dev)', 1);
}
const tsc = spawnSync(process.execPath, [tscPath, ...tscArgs], { cwd: ROOT, stdio: 'inherit' });
if (tsc.status !== 0) fail(`tsc failed: ${name} is not runnable`, tsc.status ?? 1);
// What the code reads beside itself (the page assets, server/duckdb-connections.cjs) and client/io.ts's ../package.json.
for (const folder of sourceFolders()) cpSync(path.join(ROOT, folder), path.join(out, folder), { recursive: true, filter: (file) => !/\.[cm]?ts$/.test(file) });
cpSync(path.join(ROOT, 'package.json'), path.join(out, 'package.json'));
writeFileSync(path.join(out, STAMP), `${JSON.stringify({ digest, builtAt: new Date().toISOString() })}\n`);
console.error(`fire-api build: ${name} compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
