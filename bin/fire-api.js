#!/usr/bin/env node
// Runs the TypeScript sources through tsx, or, when COMPILED_DIR names one, the tree `npm run build`
// compiled from them (what `npm start` and the shipped systemd unit run: no loader thread, no
// transforms, about 30 MB less memory). A compiled tree built from other sources is refused.
'use strict';

// libuv's thread pool serves both DuckDB statements and file reads: with four threads (its
// default), four long queries stall every file read (temp files, listings, the key registry)
// until one ends. Its size is read once, when the pool first starts, so it is set here, before
// anything can start it: this file is CommonJS (bin/package.json), loaded without the pool.
if (!process.env.UV_THREADPOOL_SIZE) {
  // DUCKDB_CONNECTIONS as server/config.ts reads it, with its default from the same module.
  const set = Number.parseInt(process.env.DUCKDB_CONNECTIONS ?? '', 10);
  const connections = Number.isFinite(set) && set > 0 ? set : require('../server/duckdb-connections.cjs').defaultDuckdbConnections();
  process.env.UV_THREADPOOL_SIZE = String(Math.max(16, connections + 8));
}

/** The compiled tree to run, checked (synchronous reads: the pool is not started for it), or null for the sources. */
function compiledTree() {
  if (!process.env.COMPILED_DIR) return null;
  const { treeFolder, treeProblem } = require('./compiled-tree.js');
  const tree = treeFolder(process.env.COMPILED_DIR);
  const problem = treeProblem(tree);
  if (!problem) return tree;
  console.error(`fire-api: COMPILED_DIR=${process.env.COMPILED_DIR} ${problem}: run \`npm run build\` (or unset COMPILED_DIR to run the sources)`);
  process.exit(2);
}

const tree = compiledTree();
import('./run-command.mjs')
  .then(({ runCommand }) => runCommand(tree))
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
