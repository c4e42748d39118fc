import type http from 'node:http';
import { readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import { ARROW, fetchBytes, PARQUET } from '../../helpers/columnar.ts';
import { hotspot, station, tempDir, writeChain } from '../../helpers/fixtures.ts';
import { stalledGet, waitFor } from '../../helpers/http.ts';
import { writeParquet, writeSpreadHotspots, writeSpreadReadings } from '../../helpers/parquet.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { SPOOL, SPOOL_DAY_ROWS, SPOOL_DAYS, SPOOL_GROUPS, SPOOL_ROWS } from '../../helpers/aggregate-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// The spool's sizes and days (test/helpers/aggregate-data.ts): the days' answers, held, are the reference for the window's, spooled.
const [DAY_ROWS, DAYS] = [SPOOL_DAY_ROWS, SPOOL_DAYS];
const GRID = '&interval=day&groupBy=grid&cell=0.01&stats=frp.sum,frp.mean,bright_ti4.max,scan.count';
const WINDOW = 'from=2025-08-01&to=2025-08-04';
/**
 * Three more days of 12,000 rows, a group each, for the clients that hang up mid-body: their GeoJSON
 * (about 9 MB) is far more than the sockets take in while the client reads nothing (about 4 MB).
 */
const LARGE_DAYS = ['2025-09-01', '2025-09-02', '2025-09-03'];
const LARGE_DAY_ROWS = 12_000;
const LARGE_WINDOW = 'from=2025-09-01&to=2025-09-04';

/** Stations with readings (two a station and hour), the first REGISTERED of them in the registry. */
const STATIONS = 40;
const REGISTERED = 25;
/** Frp values beside some cells' own: outside the common lane, not finite (written as DuckDB spells it), null. */
const RARE_FRP = [1e-7, 3e6, NaN, null, -2.5e-9];

let dir: string;
let server: TestServer;
let held: TestServer;
let cut: TestServer;
/** A temp budget no spool of the grid fits in: a 503 there shows an answer is spooled. */
let tiny: TestServer;
/** The aggregate cache on, each entry room for the grid's groups. */
let kept: TestServer;
/** A limit just below one day's groups (the first part's statement stops past the limit: just below, the answer still looks large enough to spool). */
let firstCut: TestServer;
const FIRST_LIMIT = DAY_ROWS - DAY_ROWS / 12;
beforeAll(async () => {
  dir = await tempDir();
  for (const day of DAYS) {
    await writeSpreadHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, DAY_ROWS);
    // In the cells of the day's first rows (row i is at the centre of the i-th cell from −180, −90): no new group.
    const rare = RARE_FRP.flatMap((frp, j) => [0, 1, 2].map((n) => 10 * j + n)).map((i, r) => hotspot(`${day}-rare-${i}`, `${day}T12:00:00Z`, { latitude: -89.995, longitude: -179.995 + i * 0.01, frp: Number.isNaN(RARE_FRP[r % RARE_FRP.length]) ? 'NaN' : RARE_FRP[r % RARE_FRP.length] }));
    await writeParquet(path.join(dir, `hotspots/date=${day}/b.parquet`), hotspots, rare);
    await writeSpreadReadings(path.join(dir, `sensor-readings/date=${day}/a.parquet`), day, STATIONS);
  }
  for (const day of LARGE_DAYS) await writeSpreadHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, LARGE_DAY_ROWS);
  const registry = Array.from({ length: REGISTERED }, (_, s) => station(`ST${String(s).padStart(4, '0')}`, { latitude: 38 + s / 1000, longitude: -9 + s / 1000 }));
  await writeParquet(path.join(dir, 'sensor-stations/stations.parquet'), sensorStations, registry);
  for (const d of ['hotspots', 'sensor-readings', 'sensor-stations']) await writeChain(dir, d, CHAIN);
  // Without the aggregate cache, each request here computes and spools its answer.
  server = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_CACHE_MB: '0' });
  held = await startServer(dir, { RESPONSE_CACHE_MB: '0', AGGREGATE_CACHE_MB: '0', AGGREGATE_SPOOL_ROWS: '0' });
  kept = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_CACHE_MB: '64' });
  // Two days' groups fit under the limit, three do not.
  cut = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_ROW_LIMIT: String(2 * DAY_ROWS + 1) });
  // 10 KB: less than one part's groups.
  tiny = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', TEMP_DIR_MAX_MB: '0.01' });
  firstCut = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_CACHE_MB: '0', AGGREGATE_ROW_LIMIT: String(FIRST_LIMIT) });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await held?.close();
  await cut?.close();
  await tiny?.close();
  await kept?.close();
  await firstCut?.close();
});

const metric = async (s: TestServer, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);
const counts = async (s: TestServer) => ({ hits: await metric(s, 'fire_api_aggregate_cache_hits_total'), misses: await metric(s, 'fire_api_aggregate_cache_misses_total') });
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
const text = async (s: TestServer, url: string) => {
  const r = await s.get(url);
  expect(r.status).toBe(200);
  return { body: await r.text(), headers: r.headers };
};
/** The CSV's rows without its header. */
const csvRows = (body: string) => body.slice(body.indexOf('\n') + 1);
/** The GeoJSON's features, as written. */
const features = (body: string) => body.slice(body.indexOf('"features":[') + 12, body.lastIndexOf(']}'));
/** The temp files of spooled groups left in this process's TEMP_DIR folder. */
const spoolFiles = async () => (await readdir(path.join(dir, '.tmp', `extracts-${process.pid}`))).filter((f) => f.includes('-part'));
/** Spool files in the folder, and those this process still holds open (a file is read after it has left the folder). */
const openSpools = async () => {
  const held = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return [...(await spoolFiles()), ...held.filter((target) => target.includes(dir) && target.includes('-part'))];
};

describe('an aggregate of many groups, spooled', () => {
  it('is the days\' answers, held, byte for byte, in CSV and GeoJSON, read back from disk or into memory', async () => {
    expect([DAY_ROWS < SPOOL_ROWS, DAYS.length * DAY_ROWS >= SPOOL_ROWS, DAYS.length * DAY_ROWS > SPOOL_GROUPS]).toEqual([true, true, true]);
    // The grid's groups are spooled and read back from disk; the hours' few, once the first part has told so, held.
    for (const [shape, format, spooled] of [[GRID, '&format=csv', true], [GRID, '', true], ['&interval=hour&groupBy=country,daynight&stats=frp.mean,frp.max', '&format=csv', false]] as const) {
      const refused = await tiny.get(`/api/v1/hotspots/aggregate?${WINDOW}${shape}${format}`);
      expect(refused.status).toBe(spooled ? 503 : 200);
      await refused.arrayBuffer();
      const whole = await text(server, `/api/v1/hotspots/aggregate?${WINDOW}${shape}${format}`);
      const days = await Promise.all(DAYS.map((day) => text(server, `/api/v1/hotspots/aggregate?from=${day}&to=${nextDay(day)}${shape}${format}`)));
      const returned = days.reduce((n, d) => n + Number(d.headers.get('x-returned')), 0);
      expect([whole.headers.get('x-returned'), whole.headers.get('x-truncated')]).toEqual([String(returned), 'false']);
      if (format) expect(csvRows(whole.body)).toBe(days.map((d) => csvRows(d.body)).join(''));
      else expect(features(whole.body)).toBe(days.map((d) => features(d.body)).join(','));
    }
    expect(await openSpools()).toEqual([]);
  });

  it('is the same answer held, byte for byte, in every format, with grid cells, stations, rare and non-finite values', async () => {
    const stations = `/api/v1/sensor-readings/aggregate?${WINDOW}&interval=hour&groupBy=stationId&stats=airTemperatureC.sum,airTemperatureC.mean,airTemperatureC.max,airTemperatureC.count`;
    const grid = `/api/v1/hotspots/aggregate?${WINDOW}${GRID}`;
    expect(STATIONS * 24 * DAYS.length).toBeGreaterThan(SPOOL_GROUPS);
    // GeoJSON's meta says how old the data is at the moment of each request: the one thing that may differ.
    const clockless = (b: Buffer) => b.toString().replace(/"ageSeconds":\d+/, '"ageSeconds":0');
    for (const url of [stations, grid]) {
      for (const [format, accept] of [['&format=csv', undefined], ['', undefined], ['', ARROW], ['', PARQUET]] as const) {
        const [spooled, reference] = await Promise.all([fetchBytes(server.get, url + format, accept), fetchBytes(held.get, url + format, accept)]);
        expect([spooled.status, reference.status]).toEqual([200, 200]);
        expect(spooled.headers.get('x-returned')).toBe(reference.headers.get('x-returned'));
        expect(Number(spooled.headers.get('x-returned'))).toBeGreaterThan(SPOOL_GROUPS);
        if (format === '' && accept === undefined) expect(clockless(spooled.bytes)).toBe(clockless(reference.bytes));
        else expect(spooled.bytes.equals(reference.bytes)).toBe(true);
      }
    }
    // What the answers hold: points for registered stations, null for the others; sums of rare values, null past a NaN.
    const csv = (await text(server, `${stations}&format=csv`)).body;
    expect(csv).toContain(',3000000.0000001,');
    const features = await (await server.get(stations)).text();
    expect(features).toContain(`"stationId":"ST${String(STATIONS - 1).padStart(4, '0')}"`);
    expect([features.includes('"geometry":{"type":"Point"'), features.includes('"geometry":null')]).toEqual([true, true]);
    expect(await openSpools()).toEqual([]);
  });

  it('is cut before the first day that does not fit whole, and the next page is the rest', async () => {
    const first = await text(cut, `/api/v1/hotspots/aggregate?${WINDOW}${GRID}&format=csv`);
    expect([first.headers.get('x-returned'), first.headers.get('x-truncated')]).toEqual([String(2 * DAY_ROWS), 'true']);
    const days = await Promise.all(DAYS.map((day) => text(server, `/api/v1/hotspots/aggregate?from=${day}&to=${nextDay(day)}${GRID}&format=csv`)));
    expect(csvRows(first.body)).toBe(csvRows(days[0]!.body) + csvRows(days[1]!.body));
    const rest = await text(cut, `/api/v1/hotspots/aggregate?from=2025-08-03&to=2025-08-04${GRID}&format=csv`);
    expect([rest.headers.get('x-returned'), rest.headers.get('x-truncated')]).toEqual([String(DAY_ROWS), 'false']);
    expect(csvRows(rest.body)).toBe(csvRows(days[2]!.body));
    expect(await spoolFiles()).toEqual([]);
  });

  it('is cut inside a first day that alone is past the limit: its first groups, and no next page', async () => {
    /** The first `n` lines of `body` (a CSV's rows or a GeoJSON's features: each ends its line). */
    const lines = (body: string, n: number) => body.split('\n').slice(0, n).join('\n') + '\n';
    for (const format of ['&format=csv', '']) {
      const first = await text(firstCut, `/api/v1/hotspots/aggregate?${WINDOW}${GRID}${format}`);
      expect([first.headers.get('x-returned'), first.headers.get('x-truncated')]).toEqual([String(FIRST_LIMIT), 'true']);
      const day = (await text(server, `/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-02${GRID}${format}`)).body;
      if (format) expect(csvRows(first.body)).toBe(lines(csvRows(day), FIRST_LIMIT));
      else expect(features(first.body)).toBe(lines(features(day), FIRST_LIMIT));
      expect(first.headers.get('x-next-from')).toBeNull();
      if (!format) expect((JSON.parse(first.body) as { meta: { next: unknown } }).meta.next).toBeNull();
    }
    expect(await openSpools()).toEqual([]);
  });

  it('removes its temp files and gives their space back when the client hangs up mid-body', async () => {
    const budget = server.context.extract.tempBudget;
    let received: http.IncomingMessage | undefined;
    const request = stalledGet(`${server.url}/api/v1/hotspots/aggregate?${LARGE_WINDOW}${GRID}`, server.auth, (res) => (received = res));
    // The body is being sent from the spool: its space is held while the client reads nothing.
    expect(await waitFor(() => received !== undefined, 60_000)).toBe(true);
    expect(budget.usedBytes).toBeGreaterThan(0);
    request.destroy();
    expect(await waitFor(() => budget.usedBytes === 0, 30_000)).toBe(true);
    let left: string[] = ['?'];
    expect(await waitFor(() => (void openSpools().then((f) => (left = f)), left.length === 0), 30_000)).toBe(true);
  });

  it('is kept by the aggregate cache as it is first read: the same request again is a hit, byte for byte the answer computed and held', async () => {
    const grid = `/api/v1/hotspots/aggregate?${WINDOW}${GRID}`;
    const stations = `/api/v1/sensor-readings/aggregate?${WINDOW}&interval=hour&groupBy=stationId&stats=airTemperatureC.sum,airTemperatureC.max`;
    const clockless = (b: Buffer) => b.toString().replace(/"ageSeconds":\d+/, '"ageSeconds":0');
    let asked = 0;
    for (const url of [grid, stations]) {
      for (const [format, accept] of [['&format=csv', undefined], ['', undefined], ['', ARROW], ['', PARQUET]] as const) {
        const [first, again, reference] = [await fetchBytes(kept.get, url + format, accept), await fetchBytes(kept.get, url + format, accept), await fetchBytes(held.get, url + format, accept)];
        expect(await counts(kept)).toEqual({ hits: ++asked, misses: asked });
        expect([first.status, Number(first.headers.get('x-returned')) > SPOOL_GROUPS]).toEqual([200, true]);
        const same = (a: Buffer, b: Buffer) => (format === '' && accept === undefined ? clockless(a) === clockless(b) : a.equals(b));
        expect([same(again.bytes, first.bytes), same(first.bytes, reference.bytes)]).toEqual([true, true]);
      }
    }
    expect(await openSpools()).toEqual([]);
  });

  it('keeps nothing of a spooled answer whose client hangs up mid-body', async () => {
    const url = `/api/v1/hotspots/aggregate?${LARGE_WINDOW}&interval=day&groupBy=grid&cell=0.01&stats=frp.max`;
    const before = await counts(kept);
    let received: http.IncomingMessage | undefined;
    const request = stalledGet(`${kept.url}${url}`, kept.auth, (res) => (received = res));
    expect(await waitFor(() => received !== undefined, 60_000)).toBe(true);
    // The spool is still held: its read has not ended, the client reading nothing.
    expect(kept.context.extract.tempBudget.usedBytes).toBeGreaterThan(0);
    request.destroy();
    expect(await waitFor(() => kept.context.extract.tempBudget.usedBytes === 0, 30_000)).toBe(true);
    const next = await kept.get(url);
    expect(next.status).toBe(200);
    await next.arrayBuffer();
    expect(await counts(kept)).toEqual({ hits: before.hits, misses: before.misses + 2 });
  });

  it('is a 503 with Retry-After when the temp budget cannot hold it, as an extract is, and leaves no file', async () => {
    const r = await tiny.get(`/api/v1/hotspots/aggregate?${WINDOW}${GRID}&format=csv`);
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await spoolFiles()).toEqual([]);
    expect(tiny.context.extract.tempBudget.usedBytes).toBe(0);
  });
});
