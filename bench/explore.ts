/**
 * The explorer on a year (issue 28): from opening /api/v1/explore on a whole year of hotspots in
 * headless Chromium until its exact row count, the year's grid and its counts per day are drawn
 * (the page marks that on <body>), against the real server; the count checked against DuckDB's
 * own; the server's peak RSS. Each run is a fresh browser context (no HTTP cache), the key put
 * into the tab's sessionStorage before the page loads, as a person who typed it earlier would
 * have it. Demo data in DATA_DIR (default var/bench-data/scale-10; `fire-api demo-data`).
 *
 *   node --import tsx bench/explore.ts [--data-dir DIR] [--year 2025] [--runs 3]
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { issueBenchKey } from './server/bench-key.ts';
import { countRows } from './server/data.ts';
import { REPO_ROOT } from './lib/options.ts';
import { chromiumPath } from './lib/programs.ts';
import { readStatusMb, sampleRss } from './server/rss.ts';
import { freePort, startServer } from './server/server-process.ts';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, year: { type: 'string' }, runs: { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/scale-10'));
const year = Number(values.year ?? 2025);
const runs = Number(values.runs ?? 3);
const window = { from: `${year}-01-01`, to: `${year + 1}-01-01` };
const STORE = 'research-read-api-key';
const executablePath = chromiumPath();
if (!executablePath) throw new Error('no chromium on PATH (apt-get install chromium); or set CHROMIUM_PATH');

interface Run {
  ms: number;
  count: number;
  cells: number;
  bars: number;
}

/** One opening of the page: a fresh context, the key already in the tab, timed until the view is drawn. */
async function openOnce(browser: import('playwright-core').Browser, url: string, key: string): Promise<Run> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    await context.addInitScript(([store, k]) => sessionStorage.setItem(store!, k!), [STORE, key]);
    const tab = await context.newPage();
    const started = performance.now();
    await tab.goto(url);
    await tab.waitForSelector('body[data-ready]', { timeout: 120_000 });
    const ms = performance.now() - started;
    const ready = await tab.getAttribute('body', 'data-ready');
    if (ready !== 'true') throw new Error(`the page did not draw the year: ${await tab.textContent('#status')}`);
    const count = Number((await tab.textContent('#row-count'))!.replace(/,/g, ''));
    return { ms, count, cells: Number(await tab.getAttribute('body', 'data-drawn')), bars: await tab.locator('#chart rect.bar').count() };
  } finally {
    await context.close();
  }
}

const keysFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-keys-')), 'keys.json');
const key = await issueBenchKey(keysFile);
const [expected] = await countRows(dataDir, [{ dataset: 'hotspots', column: 'acquiredAtUtc', window }]);
const server = await startServer(
  { DATA_DIR: dataDir, KEYS_FILE: keysFile, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000' },
  { authorization: `Bearer ${key}` },
);
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const url = `${server.baseUrl}/api/v1/explore?dataset=hotspots&from=${window.from}&to=${window.to}`;
  console.log(`DATA_DIR ${dataDir}, ${os.availableParallelism()} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${expected!.toLocaleString('en')} hotspots in ${year} (DuckDB count)`);
  const idle = readStatusMb(server.pid, 'VmRSS');
  const rss = sampleRss(server.pid);
  const measured: Run[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await openOnce(browser, url, key);
    server.assertAlive();
    if (r.count !== expected) throw new Error(`the page showed ${r.count} rows, DuckDB counts ${expected}`);
    measured.push(r);
    console.log(`run ${i + 1}${i === 0 ? ' (fresh server)' : ''}: ${r.ms.toFixed(0)} ms to the count, ${r.cells} grid cells and ${r.bars} daily bars`);
  }
  const peak = rss.stop();
  console.log(`best ${Math.min(...measured.map((r) => r.ms)).toFixed(0)} ms, worst ${Math.max(...measured.map((r) => r.ms)).toFixed(0)} ms (target: within 10,000 ms)`);
  console.log(`server RSS: ${idle?.toFixed(0) ?? '?'} MB before the first opening; peak ${peak.peakMb.toFixed(0)} MB sampled (${peak.samples} samples), VmHWM ${readStatusMb(server.pid, 'VmHWM')?.toFixed(0) ?? '?'} MB`);
} finally {
  await browser.close();
  await server.stop();
}
