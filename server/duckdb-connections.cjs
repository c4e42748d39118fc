'use strict';
// CommonJS, so that bin/fire-api.js can read it before TypeScript is loaded: it sizes the I/O
// thread pool from the connection count before anything starts the pool.
const os = require('node:os');

exports.defaultDuckdbConnections = () => Math.max(2, os.availableParallelism() * 2);
