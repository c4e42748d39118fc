import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCitation } from '../../client/citation.ts';
import { extractCommand } from '../../client/extract.ts';
import { Manifest } from '../../client/manifest.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { parseCsv, writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, readManifestFile, sha256 } from './harness.ts';

let server: TestServer;
let out: string;

beforeAll(async () => {
  // Sample data: ST0002 is a simulated station with one reading in the window.
  server = await startServer(await writeSampleData(), { ROW_LIMIT: '2' });
  out = await tempDir('fire-api-citable-');
});
afterAll(() => server.close());

async function extract(name: string, extra: string[]): Promise<{ file: string; manifest: Manifest }> {
  const file = path.join(out, name);
  const cap = captureIo();
  const code = await extractCommand(['sensor-readings', '--from', '2025-08-01', '--to', '2025-08-02', '--out', file, '--base-url', server.url, '--key', server.key, ...extra], {}, cap.io);
  expect([code, cap.stderr()]).toEqual([0, '']);
  return { file, manifest: await readManifestFile(`${file}.manifest.json`) };
}

const stations = async (file: string) => parseCsv(await readFile(file, 'utf8')).slice(1).map((r) => `${r[0]} ${r[2]}`);

describe('citable extracts leave simulated series out', () => {
  it('sensor-readings is requested with simulated=false by default, recorded in the manifest, and citable', async () => {
    const { file, manifest } = await extract('real.csv', []);
    expect(await stations(file)).toEqual(['ST0001 false', 'ST0001 false']);
    expect(manifest.parameters).toEqual({ simulated: 'false' });
    expect(manifest).toMatchObject({ citable: true, simulatedSeries: 'excluded' });
    expect(manifest.citation?.text).toMatch(/simulated series excluded/);
    expect(await verifyCommand([`${file}.manifest.json`, '--key', server.key], {}, captureIo().io)).toBe(0);
  });

  it('--include-simulated keeps them and marks the extract not citable', async () => {
    const { file, manifest } = await extract('all.csv', ['--include-simulated']);
    expect(await stations(file)).toEqual(['ST0001 false', 'ST0002 true', 'ST0001 false']);
    expect(manifest.parameters).toEqual({});
    expect(manifest).toMatchObject({ citable: false, simulatedSeries: 'included' });
    expect(manifest.citation?.text).toMatch(/simulated series included \(not citable as observations\)/);
  });

  it('--include-simulated on a dataset without simulated series is a usage error', async () => {
    const cap = captureIo();
    const code = await extractCommand(['hotspots', '--from', '2025-08-01', '--to', '2025-08-02', '--out', path.join(out, 'h.csv'), '--base-url', server.url, '--key', server.key, '--include-simulated'], {}, cap.io);
    expect([code, cap.stderr()]).toEqual([2, expect.stringMatching(/--include-simulated applies to sensor-stations and sensor-readings only/)]);
  });
});

describe('sensor-stations: an extract without a time window', () => {
  const stationsExtract = async (name: string, extra: string[]) => {
    const file = path.join(out, name);
    const cap = captureIo();
    const code = await extractCommand(['sensor-stations', '--out', file, '--base-url', server.url, '--key', server.key, ...extra], {}, cap.io);
    return { code, stderr: cap.stderr(), file };
  };

  it('is one request with simulated=false, no window in the manifest or the citation, and verifies', async () => {
    const { code, stderr, file } = await stationsExtract('stations.csv', []);
    expect([code, stderr]).toEqual([0, '']);
    expect(parseCsv(await readFile(file, 'utf8')).slice(1).map((r) => r[0])).toEqual(['ST0001']);
    const m = await readManifestFile(`${file}.manifest.json`);
    expect(m).toMatchObject({ window: null, parameters: { simulated: 'false' }, citable: true, simulatedSeries: 'excluded', rows: 1 });
    expect(m.pages.map((p) => p.request)).toEqual([null]);
    expect(m.citation?.text).toContain('sensor-stations, no time window');
    expect(await verifyCommand([`${file}.manifest.json`, '--key', server.key], {}, captureIo().io)).toBe(0);
  });

  it('--include-simulated lists every station and is not citable; --from is a usage error', async () => {
    const all = await stationsExtract('all-stations.geojson', ['--include-simulated']);
    expect(all.code).toBe(0);
    const doc = JSON.parse(await readFile(all.file, 'utf8')) as { features: { id: string }[] };
    expect(doc.features.map((f) => f.id)).toEqual(['ST0001', 'ST0002']);
    expect(await readManifestFile(`${all.file}.manifest.json`)).toMatchObject({ citable: false, simulatedSeries: 'included' });
    const bad = await stationsExtract('bad.csv', ['--from', '2025-08-01']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/sensor-stations has no time window/)]);
  });
});

describe('the citation block', () => {
  it('names service, dataset, window, parameters, retrieval date, data versions and file SHA-256 in text, BibTeX and CSL-JSON', async () => {
    const { file, manifest } = await extract('cite_me.csv', ['--series', 'corrected']);
    const c = manifest.citation!;
    const fileSha = sha256(await readFile(file));
    const retrieved = manifest.completedAtUtc.slice(0, 10);
    const versions = [...new Set(manifest.pages.map((p) => p.dataVersion))];
    for (const part of [`${server.url}/api/v1/sensor-readings`, '2025-08-01T00:00:00Z to 2025-08-02T00:00:00Z', 'series=corrected, simulated=false', `Retrieved ${retrieved}`, ...versions, fileSha]) {
      expect(c.text).toContain(part);
    }
    expect(c.bibtex).toMatch(new RegExp(`^@misc\\{fireapi_sensorreadings_20250801_${fileSha.slice(0, 8)},\\n`));
    expect(c.bibtex).toContain(`urldate = {${retrieved}}`);
    expect(c.bibtex).toContain('cite\\_me.csv'); // BibTeX special characters escaped
    expect(c.bibtex).toContain(fileSha);
    expect(c.cslJson).toMatchObject({ type: 'dataset', URL: `${server.url}/api/v1/sensor-readings`, author: [{ literal: 'Research Read API' }], version: versions.join(', ') });
    expect((c.cslJson.accessed as { 'date-parts': number[][] })['date-parts']).toEqual([retrieved.split('-').map(Number)]);
  });

  it('is built from the manifest alone: the same manifest gives the same citation, another file hash another one', async () => {
    const { manifest } = await extract('again.csv', []);
    const { citation, ...rest } = manifest;
    expect(buildCitation(rest)).toEqual(citation);
    // The time of day is not part of it, only the retrieval date.
    expect(buildCitation({ ...rest, completedAtUtc: `${rest.completedAtUtc.slice(0, 10)}T23:59:59.999Z` })).toEqual(citation);
    expect(buildCitation({ ...rest, file: { ...rest.file, sha256: 'f'.repeat(64) } }).text).not.toBe(citation!.text);
  });

  it('a manifest written before citations existed still reads (the new fields are optional)', async () => {
    const { manifest } = await extract('old.csv', []);
    const { citation: _c, citable: _t, simulatedSeries: _s, ...old } = manifest;
    expect(Manifest.parse(old)).toEqual(old);
  });
});

describe('filters as extract options', () => {
  it('--bbox=W,S,E,N (negative first number), --station-id and --area-code reach the server and the manifest', async () => {
    const file = path.join(out, 'iberia.csv');
    const cap = captureIo();
    const args = ['hotspots', '--from', '2025-08-01', '--to', '2025-08-02', '--out', file, '--base-url', server.url, '--key', server.key, '--bbox=-9,39,-8.3,40'];
    expect([await extractCommand(args, {}, cap.io), cap.stderr()]).toEqual([0, '']);
    expect((await readManifestFile(`${file}.manifest.json`)).parameters).toEqual({ bbox: '-9,39,-8.3,40' });
    // Every sample detection lies at -8.25: the box, sent, leaves none.
    expect(parseCsv(await readFile(file, 'utf8')).slice(1)).toEqual([]);
    const { manifest } = await extract('one-station.csv', ['--station-id', 'ST0002', '--include-simulated']);
    expect([manifest.parameters, manifest.rows]).toEqual([{ stationId: 'ST0002' }, 1]);
  });
});

describe('verify across a server that learned new filters', () => {
  it('a recorded meta.query without the new (null) filters is still identical; a recorded value that differs is not', async () => {
    const file = path.join(out, 'older.geojson');
    const args = ['hotspots', '--from', '2025-08-01', '--to', '2025-08-02', '--out', file, '--base-url', server.url, '--key', server.key];
    expect(await extractCommand(args, {}, captureIo().io)).toBe(0);
    const manifestFile = `${file}.manifest.json`;
    const m = await readManifestFile(manifestFile);
    expect(m.queryInEffect).toEqual({ country: null, bbox: null });
    const verify = async (queryInEffect: Record<string, string | null>) => {
      await writeFile(manifestFile, JSON.stringify({ ...m, queryInEffect }));
      const cap = captureIo();
      return [await verifyCommand([manifestFile, '--key', server.key], {}, cap.io), cap.stdout()] as const;
    };
    expect((await verify({ country: null }))[0]).toBe(0);
    const [code, report] = await verify({ country: 'ES' });
    expect(code).toBe(1);
    expect(report).toMatch(/parameters in effect differ/);
  });
});
