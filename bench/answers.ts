// Whether two trees of the service give the same answers: every data endpoint in every format, the
// aggregates (held and spooled), filters and the OGC items, over the same demo data and key. A change
// that "changes no answer" (a refactor) is run against the commit before it:
//   npm run bench:answers -- --against <rev> [--spool-rows N] [--twice]
// --twice asks everything twice with the caches on and compares the second answers (from the
// rows and aggregate caches, or the renderings where they are ready). Each tree's server is started in turn; each answer's digest (the body, its status, X-Returned and
// ETag) is compared. JSON bodies are compared without the two fields that tell the time
// (meta.observation.ageSeconds, OGC's timeStamp) and with the server's own address taken out.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { issueBenchKey } from './server/bench-key.ts';
import { freePort, startServer } from './server/server-process.ts';
import { REPO_ROOT } from './lib/options.ts';

const run = promisify(execFile);
const { values } = parseArgs({ options: { against: { type: 'string' }, 'spool-rows': { type: 'string' }, twice: { type: 'boolean' } } });
if (!values.against) throw new Error('usage: npm run bench:answers -- --against <git revision> [--spool-rows N] [--twice]');

const FORMATS: [string, Record<string, string>][] = [
  ['csv', {}],
  ['geojson', {}],
  ['geojson', { accept: 'application/vnd.apache.parquet' }],
  ['geojson', { accept: 'application/vnd.apache.arrow.stream' }],
];
const WINDOWS = ['from=2025-06-01&to=2025-06-02', 'from=2025-06-01&to=2025-07-01', 'from=2025-05-01&to=2025-08-01', 'from=2025-06-10T06:00:00Z&to=2025-06-10T07:00:00Z'];
const AGGREGATES: Record<string, string[]> = {
  hotspots: ['groupBy=country&stats=frp.sum,frp.max', 'interval=day&groupBy=country&stats=frp.sum,frp.mean,brightness.min', 'interval=hour&groupBy=grid&cell=1&stats=frp.sum', 'interval=week&groupBy=satellite,daynight&stats=frp.mean', 'interval=month&groupBy=grid&cell=0.25&stats=frp.sum,scan.max', 'interval=all&groupBy=grid&cell=0.1'],
  'burnt-areas': ['interval=month&stats=AREA_HA.sum,AREA_HA.mean', 'interval=all&stats=AREA_HA.sum,CONIFER.max'],
  'fire-danger': ['interval=day&groupBy=areaCode&stats=FWI.mean,FWI.max', 'interval=week&stats=DC.sum'],
  'sensor-readings': ['interval=hour&groupBy=stationId&stats=airTemperatureC.mean,precipitationMm.sum', 'interval=day&groupBy=stationId&stats=windGustMs.max'],
};

/** Every request asked of both trees: a path and its headers. */
function requests(): [string, Record<string, string>][] {
  const out: [string, Record<string, string>][] = FORMATS.map(([f, h]) => [`/api/v1/sensor-stations?format=${f}`, h]);
  for (const d of ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-readings']) for (const w of WINDOWS) for (const [f, h] of FORMATS) out.push([`/api/v1/${d}?${w}&format=${f}`, h]);
  out.push(['/api/v1/hotspots?from=2025-06-01&to=2025-06-03&country=PT&format=csv', {}], ['/api/v1/hotspots?from=2025-06-01&to=2025-06-03&bbox=-10,35,5,45', {}], ['/api/v1/burnt-areas?from=2025-05-01&to=2025-08-01&bbox=-10,35,5,45', {}]);
  for (const [d, shapes] of Object.entries(AGGREGATES)) for (const s of shapes) for (const w of WINDOWS.slice(1, 3)) for (const [f, h] of FORMATS) out.push([`/api/v1/${d}/aggregate?${w}&${s}&format=${f}`, h]);
  for (const d of ['hotspots', 'burnt-areas', 'fire-danger']) out.push([`/api/v1/ogc/collections/${d}/items?limit=50&datetime=2025-06-01T00:00:00Z/2025-06-02T00:00:00Z`, {}]);
  return out;
}

/** The answers of the server in `tree`, a digest a request. */
async function answersOf(tree: string, env: Record<string, string>, key: string): Promise<string[]> {
  // Both trees run from their sources (a compiled tree of this one would not be the other's).
  const { COMPILED_DIR: _compiled, ...parent } = process.env;
  const server = await startServer({ ...env, PORT: String(await freePort()), LOG_LEVEL: 'warn' }, { authorization: `Bearer ${key}` }, [], parent, tree);
  try {
    const lines: string[] = [];
    for (const [url, headers] of requests()) {
      const ask = () => fetch(server.baseUrl + url, { headers: { ...server.requestHeaders, ...headers } });
      if (values.twice) await (await ask()).arrayBuffer();
      const r = await ask();
      let body = Buffer.from(await r.arrayBuffer());
      if (/json/.test(r.headers.get('content-type') ?? '')) {
        const text = body.toString('utf8').replaceAll(server.baseUrl, 'BASE').replace(/"ageSeconds":\d+/g, '"ageSeconds":N').replace(/"timeStamp":"[^"]*"/g, '"timeStamp":T');
        body = Buffer.from(text);
      }
      const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
      lines.push(`${digest} ${r.status} ${r.headers.get('x-returned') ?? '-'} ${r.headers.get('etag') ?? '-'} ${url} ${headers.accept ?? ''}`);
    }
    server.assertAlive();
    return lines;
  } finally {
    await server.stop();
  }
}

const work = await mkdtemp(path.join(os.tmpdir(), 'fire-api-answers-'));
const other = path.join(work, 'tree');
try {
  await run('git', ['worktree', 'add', '--detach', other, values.against], { cwd: REPO_ROOT });
  await run('ln', ['-s', path.join(REPO_ROOT, 'node_modules'), path.join(other, 'node_modules')]);
  const dataDir = path.join(work, 'data');
  await run(process.execPath, ['bin/fire-api.js', 'demo-data', '--out', dataDir, '--end', '2025-08-01', '--days', '92', '--scale', '0.2'], { cwd: REPO_ROOT });
  const keysFile = path.join(work, 'keys.json');
  const key = await issueBenchKey(keysFile, 'answers');
  const env = { DATA_DIR: dataDir, KEYS_FILE: keysFile, TEMP_DIR: path.join(work, 'tmp'), RATE_LIMIT_PER_MINUTE: '1000000', ...(values.twice ? {} : { RENDER_CACHE_MB: '0', AGGREGATE_CACHE_MB: '0' }), ...(values['spool-rows'] ? { AGGREGATE_SPOOL_ROWS: values['spool-rows'] } : {}) };
  const [before, after] = [await answersOf(other, env, key), await answersOf(REPO_ROOT, env, key)];
  const differ = after.filter((line, i) => line !== before[i]);
  console.log(`${after.length} answers of ${values.against} and of this tree: ${differ.length === 0 ? 'every one identical' : `${differ.length} differ`}`);
  for (const line of differ) console.log(`  differs: ${line}`);
  process.exitCode = differ.length === 0 && before.length === after.length ? 0 : 1;
} finally {
  await run('git', ['worktree', 'remove', '--force', other], { cwd: REPO_ROOT }).catch(() => undefined);
  await rm(work, { recursive: true, force: true });
}
