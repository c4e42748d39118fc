import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sensorStations } from '../../datasets/sensor-stations.ts';
import { fetchBytes } from '../helpers/columnar.ts';
import { cellsOf, corrected, FORMATS, MODEL_A, MODEL_B, publish, WINDOW, withdraw, writeCorrectionReadings } from '../helpers/corrections.ts';
import { station, tempDir, writeChain } from '../helpers/fixtures.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

// Three servers over one data folder, so that every read path answers: small GeoJSON windows staged
// in memory (default), whole windows copied to temp files (IN_MEMORY_ROWS=0), and responses cut at
// 4 rows and streamed group by group (ROW_LIMIT=4, GROUP_ROWS=2); the first also keeps rows in its cache.
let dir: string;
const servers: Record<string, TestServer> = {};
beforeAll(async () => {
  dir = await tempDir();
  await writeParquet(path.join(dir, 'sensor-stations/stations.parquet'), sensorStations, [station('ST0001'), station('ST0002')]);
  await writeCorrectionReadings(dir);
  for (const name of ['sensor-stations', 'sensor-readings']) await writeChain(dir, name, CHAIN);
  servers.memory = await startServer(dir, { RESPONSE_CACHE_MB: '4' });
  servers.copied = await startServer(dir, { IN_MEMORY_ROWS: '0' });
  servers.streamed = await startServer(dir, { ROW_LIMIT: '4', GROUP_ROWS: '2' });
}, 60_000);
afterAll(async () => {
  for (const s of Object.values(servers)) await s.close();
});

const URL = `/api/v1/sensor-readings?${WINDOW}`;

/** Every format from every server: status, ETag, meta headers and the body (the chain's age, which moves with the clock, blanked). */
async function answers(query: string) {
  const out: Record<string, { status: number; etag: string | null; version: string | null; query: string | null; body: Buffer }> = {};
  for (const [server, s] of Object.entries(servers)) {
    for (const f of FORMATS) {
      // Asked twice: the second answer of a small window comes from the rows cache.
      for (const round of [1, 2]) {
        const r = await fetchBytes(s.get, `${query}${f.suffix}`, f.accept);
        const body = f.name === 'geojson' ? Buffer.from(r.bytes.toString('utf8').replace(/"ageSeconds":\d+/, '"ageSeconds":0')) : r.bytes;
        out[`${server} ${f.name} ${round}`] = { status: r.status, etag: r.headers.get('etag'), version: r.headers.get('x-data-version'), query: r.headers.get('x-query'), body };
      }
    }
  }
  return out;
}

describe('versioned correction models', () => {
  let rawBefore: Awaited<ReturnType<typeof answers>>;
  let correctedNone: Awaited<ReturnType<typeof answers>>;
  let correctedA: Awaited<ReturnType<typeof answers>>;

  it('without a model the corrected series is the raw values with correctionModel null (and none echoed)', async () => {
    rawBefore = await answers(URL);
    correctedNone = await answers(`${URL}&series=corrected`);
    for (const [key, a] of Object.entries(correctedNone)) {
      const format = key.split(' ')[1] as (typeof FORMATS)[number]['name'];
      const raw = await cellsOf(format, rawBefore[key]!.body);
      expect(await cellsOf(format, a.body), key).toEqual(raw.map((r) => r.map((v, i) => (i === 3 ? 'corrected' : v))));
      expect(JSON.parse(a.query!)).not.toHaveProperty('correctionModel');
      // Raw answers echo what they echoed before correction models existed.
      expect(JSON.parse(rawBefore[key]!.query!)).not.toHaveProperty('correctionModel');
    }
  });

  it('a published model corrects its rules\' readings in every format and read path, raw elsewhere, edges included and excluded', async () => {
    await publish(dir, MODEL_A);
    correctedA = await answers(`${URL}&series=corrected`);
    for (const [key, a] of Object.entries(correctedA)) {
      const format = key.split(' ')[1] as (typeof FORMATS)[number]['name'];
      expect(a.status, key).toBe(200);
      expect(await cellsOf(format, a.body), key).toEqual(corrected(await cellsOf(format, rawBefore[key]!.body), MODEL_A));
      expect(JSON.parse(a.query!), key).toMatchObject({ series: 'corrected', correctionModel: MODEL_A.id });
      expect(a.version, key).not.toBe(correctedNone[key]!.version);
      expect(a.etag, key).not.toBe(correctedNone[key]!.etag);
    }
    // The edges, spelt out: ST0001 12:10 is corrected (fromUtc included), 12:30 is not (toUtc excluded).
    const csv = (await cellsOf('csv', correctedA['copied csv 1']!.body)).map((r) => [r[0], r[5]]);
    const raw = (await cellsOf('csv', rawBefore['copied csv 1']!.body)).map((r) => [r[0], r[5]]);
    expect(csv[2]).toEqual(['ST0001', (raw[2]![1] as number) * 1.07 - 2.5]);
    expect(csv[4]).toEqual(['ST0001', (raw[4]![1] as number) * 1.07 - 2.5]);
    expect(csv[0]).toEqual(raw[0]);
    expect(csv[6]).toEqual(raw[6]);
    expect(csv[3]).toEqual(raw[3]);
  });

  it('the newest model is the default; pinning the first gives back its earlier bytes exactly', async () => {
    await publish(dir, MODEL_B);
    const correctedB = await answers(`${URL}&series=corrected`);
    const pinnedA = await answers(`${URL}&series=corrected&correctionModel=${MODEL_A.id}`);
    for (const [key, b] of Object.entries(correctedB)) {
      const format = key.split(' ')[1] as (typeof FORMATS)[number]['name'];
      expect(await cellsOf(format, b.body), key).toEqual(corrected(await cellsOf(format, rawBefore[key]!.body), MODEL_B));
      expect(b.etag, key).not.toBe(correctedA[key]!.etag);
      expect(b.version, key).not.toBe(correctedA[key]!.version);
      expect(pinnedA[key]!.body.equals(correctedA[key]!.body), key).toBe(true);
      expect([pinnedA[key]!.etag, pinnedA[key]!.version, pinnedA[key]!.query], key).toEqual([correctedA[key]!.etag, correctedA[key]!.version, correctedA[key]!.query]);
    }
    // A client holding the first model's answer: a 304 only while it asks for that model.
    const s = servers.copied!;
    const held = { headers: { 'if-none-match': correctedA['copied csv 1']!.etag! } };
    expect((await s.get(`${URL}&series=corrected&format=csv`, held)).status).toBe(200);
    expect((await s.get(`${URL}&series=corrected&format=csv&correctionModel=${MODEL_A.id}`, held)).status).toBe(304);
  });

  it('publishing models changes no byte of any raw response', async () => {
    const rawAfter = await answers(URL);
    for (const [key, a] of Object.entries(rawAfter)) {
      expect(a.body.equals(rawBefore[key]!.body), key).toBe(true);
      expect([a.status, a.etag, a.version, a.query], key).toEqual([rawBefore[key]!.status, rawBefore[key]!.etag, rawBefore[key]!.version, rawBefore[key]!.query]);
    }
  });

  it('lists the published models behind the key, oldest first, the default named', async () => {
    const s = servers.memory!;
    expect((await fetch(`${s.url}/api/v1/sensor-readings/corrections`)).status).toBe(401);
    const r = await s.get('/api/v1/sensor-readings/corrections');
    expect(await r.json()).toEqual({ dataset: 'sensor-readings', latest: MODEL_B.id, models: [MODEL_A, MODEL_B] });
    expect((await s.get('/api/v1/sensor-readings/corrections?x=1')).status).toBe(400);
  });

  it('an unknown model is a 400 listing the published ones; a model on the raw series is a 400', async () => {
    const s = servers.memory!;
    const unknown = await s.get(`${URL}&series=corrected&correctionModel=nope`);
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { errors: unknown[] }).errors).toEqual([
      { parameter: 'correctionModel', message: `unknown correctionModel 'nope'; published: ${MODEL_A.id}, ${MODEL_B.id}` },
    ]);
    for (const q of [`${URL}&correctionModel=${MODEL_A.id}`, `${URL}&series=raw&correctionModel=${MODEL_A.id}`]) {
      const r = await s.get(q);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { errors: { parameter: string }[] }).errors[0]!.parameter).toBe('correctionModel');
    }
    expect((await s.get(`${URL}&series=corrected&correctionModel=..%2Fkeys`)).status).toBe(400);
  });

  it('an invalid model file makes the corrected series a 503 that says so, raw answers as before; /readyz and /metrics show it', async () => {
    await publish(dir, '{"id": "broken", "rules": [', 'broken');
    try {
      for (const s of Object.values(servers)) {
        const r = await s.get(`${URL}&series=corrected&correctionModel=${MODEL_A.id}`);
        expect(r.status).toBe(503);
        expect(r.headers.get('retry-after')).not.toBeNull();
        expect(((await r.json()) as { detail: string }).detail).toMatch(/correction model .* cannot be read or is invalid.*raw series/);
        expect((await s.get('/api/v1/sensor-readings/corrections')).status).toBe(503);
      }
      const rawNow = await answers(URL);
      for (const [key, a] of Object.entries(rawNow)) expect(a.body.equals(rawBefore[key]!.body), key).toBe(true);
      const ready = (await (await fetch(`${servers.memory!.url}/readyz`)).json()) as { corrections: unknown[] };
      expect(ready.corrections).toEqual([{ dataset: 'sensor-readings', published: 2, latest: MODEL_B.id, failing: [{ path: 'sensor-readings/_corrections/broken.json', problem: expect.stringMatching(/^not JSON/) }] }]);
      const metrics = await (await fetch(`${servers.memory!.url}/metrics`)).text();
      expect(metrics).toContain('fire_api_correction_models{dataset="sensor-readings",state="failing"} 1');
      expect(metrics).toContain('fire_api_correction_models{dataset="sensor-readings",state="published"} 2');
    } finally {
      await withdraw(dir, 'broken');
    }
    expect((await servers.memory!.get(`${URL}&series=corrected`)).status).toBe(200);
  });
});
