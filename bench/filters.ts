/**
 * What the filters cost: each filtered request beside the same request without the filter, over
 * the demo data in DATA_DIR (default var/bench-data/scale-1; make it with `fire-api demo-data`).
 * Prints best-of-N wall time, time to headers (preflight: checks, exact counts, and for a box on
 * burnt areas the exact shape test) and rows.
 *
 *   node --import tsx bench/filters.ts [--data-dir DIR] [--year 2025] [--runs 3]
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { issueBenchKey } from './server/bench-key.ts';
import { fetchExtract, type HttpRun, type WireFormat } from './http/http-run.ts';
import { REPO_ROOT } from './lib/options.ts';
import { freePort, startServer } from './server/server-process.ts';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, year: { type: 'string' }, runs: { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/scale-1'));
const year = Number(values.year ?? 2025);
const runs = Number(values.runs ?? 3);
const YEAR = `from=${year}-01-01&to=${year + 1}-01-01`;
const MONTH = `from=${year}-07-01&to=${year}-08-01`;
const IBERIA = 'bbox=-9.6,36.9,3.4,43.8';

const CASES: { name: string; path: string; format: WireFormat }[] = [
  { name: 'burnt-areas, year, GeoJSON', path: `/api/v1/burnt-areas?${YEAR}`, format: 'geojson' },
  { name: '  + bbox Iberia (exact)', path: `/api/v1/burnt-areas?${YEAR}&${IBERIA}`, format: 'geojson' },
  { name: '  + bbox whole world', path: `/api/v1/burnt-areas?${YEAR}&bbox=-180,-90,180,90`, format: 'geojson' },
  { name: 'hotspots, year, CSV', path: `/api/v1/hotspots?${YEAR}&format=csv`, format: 'csv' },
  { name: '  + bbox Iberia', path: `/api/v1/hotspots?${YEAR}&${IBERIA}&format=csv`, format: 'csv' },
  { name: 'sensor-readings, July, CSV', path: `/api/v1/sensor-readings?${MONTH}&format=csv`, format: 'csv' },
  { name: '  + simulated=false', path: `/api/v1/sensor-readings?${MONTH}&simulated=false&format=csv`, format: 'csv' },
];

const best = (xs: HttpRun[]) => xs.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));

const keysFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-keys-')), 'keys.json');
const key = await issueBenchKey(keysFile);
const port = await freePort();
const server = await startServer(
  { DATA_DIR: dataDir, KEYS_FILE: keysFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000' },
  { authorization: `Bearer ${key}` },
);
try {
  console.log(`DATA_DIR ${dataDir}, ${os.availableParallelism()} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; best of ${runs}`);
  console.log('case                            rows      headers ms   wall ms');
  for (const c of CASES) {
    const results: HttpRun[] = [];
    for (let i = 0; i < runs; i++) {
      const r = await fetchExtract(`${server.baseUrl}${c.path}`, c.format, server.requestHeaders);
      if (r.status !== 200 || r.rows !== r.returnedHeader) throw new Error(`${c.name}: status ${r.status}, ${r.rows} rows of ${r.returnedHeader}`);
      results.push(r);
    }
    const b = best(results);
    console.log(`${c.name.padEnd(30)} ${String(b.rows).padStart(8)} ${b.headersMs.toFixed(0).padStart(12)} ${b.wallMs.toFixed(0).padStart(9)}`);
  }
} finally {
  await server.stop();
}
