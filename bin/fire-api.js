#!/usr/bin/env node
// Runs the TypeScript sources directly: no build step between a checkout and a working command.
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

import('./run-typescript.mjs').catch((error) => {
  console.error(error);
  process.exit(1);
});
