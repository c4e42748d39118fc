import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { fireApi } from '../helpers/cli.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { allFiles, checkPartition, MODIS_HEADER, VIIRS_HEADER } from './ops-fixtures.ts';

// As FIRMS delivers VIIRS NRT: acq_time without leading zeros, one pixel offshore (no country).
const VIIRS_ROWS = [
  '39.51234,-8.25123,340.5,0.39,0.36,2026-03-04,5,N,VIIRS,n,2.0NRT,290.25,12.5,N',
  '37.98,23.73,350.1,0.4,0.37,2026-03-04,1330,1,VIIRS,h,2.0NRT,295.5,22.1,D',
  '38.0,-12.5,330,0.4,0.37,2026-03-04,130,N,VIIRS,l,2.0NRT,291,3.2,N',
  '40.1,-3.7,333.3,0.41,0.38,2026-03-05,0945,N,VIIRS,n,2.0NRT,292,4,D',
];
const MODIS_ROWS = ['41.15,-8.61,320.4,1.1,1.0,2025-08-01,1042,Terra,MODIS,77,6.1,295.2,15.75,D,0,PRT'];

let dir: string;
let dataDir: string;
const ingest = (...args: string[]) => fireApi(['ingest', 'hotspots', '--data-dir', dataDir, ...args]);
const source = async (name: string, header: string, rows: string[]) => {
  const file = path.join(dir, name);
  await writeFile(file, `${header}\n${rows.join('\n')}\n`);
  return file;
};

beforeAll(async () => {
  dir = await tempDir('fire-api-firms-');
  dataDir = path.join(dir, 'data');
});

describe('fire-api ingest hotspots (FIRMS CSV)', () => {
  let server: TestServer;
  let first: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    first = await ingest(await source('viirs.csv', VIIRS_HEADER, VIIRS_ROWS));
    server = await startServer(dataDir);
  });
  afterAll(() => server?.close());

  it('writes one sorted file per day touched, none left under a hidden name, each passing the server check as stored in order', async () => {
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/4 rows read, 0 bad, 0 repeated in the input, 0 already present; wrote 4 rows in 2 files, 2 partitions touched/);
    const files = await allFiles(path.join(dataDir, 'hotspots'));
    expect(files).toHaveLength(2);
    expect(files.every((f) => /^date=2026-03-0[45]\/ingest-[^/]+\.parquet$/.test(f))).toBe(true);
    for (const day of ['date=2026-03-04', 'date=2026-03-05']) {
      const verdicts = await checkPartition(dataDir, hotspots, day);
      expect(verdicts).toEqual([expect.objectContaining({ ok: true, sorted: true })]);
    }
  }, 120_000);

  it('serves the FIRMS columns as delivered, acq_time padded, product and time derived, country from the pixel centre (null offshore)', async () => {
    const body = (await (await server.get('/api/v1/hotspots?from=2026-03-04&to=2026-03-06')).json()) as { features: { properties: Record<string, unknown> }[] };
    const rows = body.features.map((f) => f.properties);
    expect(rows.map((r) => [r.acquiredAtUtc, r.acq_time, r.product, r.country])).toEqual([
      ['2026-03-04T00:05:00Z', '0005', 'VIIRS_SNPP_NRT', 'PT'],
      ['2026-03-04T01:30:00Z', '0130', 'VIIRS_SNPP_NRT', null],
      ['2026-03-04T13:30:00Z', '1330', 'VIIRS_NOAA20_NRT', 'GR'],
      ['2026-03-05T09:45:00Z', '0945', 'VIIRS_SNPP_NRT', 'ES'],
    ]);
    expect(rows[0]).toMatchObject({ latitude: 39.51234, longitude: -8.25123, bright_ti4: 340.5, bright_ti5: 290.25, brightness: null, scan: 0.39, track: 0.36, acq_date: '2026-03-04', satellite: 'N', instrument: 'VIIRS', confidence: 'n', version: '2.0NRT', frp: 12.5, daynight: 'N', type: null });
    expect(rows[0]!.id).toMatch(/^VIIRS_SNPP_NRT_20260304_[0-9a-f]{20}$/);
  }, 120_000);

  it('adds nothing when the same detections are ingested again, even re-downloaded with other number spellings', async () => {
    const again = await ingest(await source('viirs-again.csv', VIIRS_HEADER, [VIIRS_ROWS[0]!.replace('39.51234', '39.512340').replace(',5,', ',0005,'), ...VIIRS_ROWS.slice(1)]));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/4 already present; wrote 0 rows in 0 files/);
    expect(await allFiles(path.join(dataDir, 'hotspots'))).toHaveLength(2);
  }, 120_000);

  it('writes only the new rows of a partly known file, repeated input rows once, as a new file beside the old', async () => {
    const late = '39.6,-8.3,345,0.39,0.36,2026-03-04,2215,N,VIIRS,n,2.0NRT,291,9.5,N';
    const r = await ingest(await source('late.csv', VIIRS_HEADER, [VIIRS_ROWS[0]!, late, late]));
    expect(r.stdout).toMatch(/3 rows read, 0 bad, 1 repeated in the input, 1 already present; wrote 1 rows in 1 files, 1 partitions touched/);
    const body = (await (await server.get('/api/v1/hotspots?from=2026-03-04&to=2026-03-05&format=csv')).text()).trim().split('\n');
    expect(body).toHaveLength(1 + 4);
    expect(body.at(-1)).toContain('2026-03-04T22:15:00Z');
  }, 120_000);
});

describe('fire-api ingest hotspots: bad rows, MODIS, dry run', () => {
  it('reports bad rows with file and line and writes nothing; --skip-bad-rows writes the good ones', async () => {
    const file = await source('bad.csv', VIIRS_HEADER, [VIIRS_ROWS[0]!.replace('2026-03-04', '2026-02-01'), '39.5,-8.2,abc,0.39,0.36,2026-02-01,1200,N,VIIRS,n,2.0NRT,290,1,D', '39.5,-8.2,340,0.39,0.36,2026-02-01,2460,N,VIIRS,n,2.0NRT,290,1,D']);
    const refused = await ingest(file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${file}:3: bright_ti4: 'abc' is not a number`);
    expect(refused.stderr).toContain(`${file}:4: acq_time: '2460' is not a time of day`);
    expect(refused.stdout).toMatch(/nothing written: bad rows/);
    expect(await allFiles(path.join(dataDir, 'hotspots/date=2026-02-01'))).toEqual([]);
    const skipped = await ingest('--skip-bad-rows', file);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toMatch(/3 rows read, 2 bad \(skipped\).*wrote 1 rows in 1 files/);
    expect(await allFiles(path.join(dataDir, 'hotspots/date=2026-02-01'))).toHaveLength(1);
  }, 120_000);

  it('counts every bad row of a wholly wrong file but keeps only the first thousand, and lists 20 on stderr', async () => {
    const file = await source('all-bad.csv', VIIRS_HEADER, Array.from({ length: 1500 }, (_, i) => `39.5,-8.2,340,0.39,0.36,2026-02-0${(i % 9) + 1},9999,N,VIIRS,n,2.0NRT,290,1,D`));
    const text = await ingest(file);
    expect(text.stderr).toContain(`${file}:21: acq_time: '9999' is not a time of day`);
    expect(text.stderr).toContain('... and 1,480 more bad rows');
    const json = JSON.parse((await ingest('--json', file)).stdout);
    expect([json.badRowCount, json.badRows.length, json.stopped]).toEqual([1500, 1000, 'bad rows (--skip-bad-rows writes the others)']);
  }, 120_000);

  it('refuses a file that is not FIRMS CSV as a whole, naming the missing columns, even with --skip-bad-rows', async () => {
    const r = await ingest('--skip-bad-rows', await source('other.csv', 'lat,lon,when', ['1,2,3']));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/other\.csv: not a FIRMS CSV: column latitude, longitude, acq_date, acq_time missing/);
  }, 120_000);

  it('reads MODIS archive CSV (type, country_id) as MODIS_SP and --dry-run counts without writing', async () => {
    const file = await source('modis.csv', MODIS_HEADER, MODIS_ROWS);
    const dry = await ingest('--dry-run', '--json', file);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, rowsRead: 1, rowsWritten: 1, partitions: [{ dir: 'date=2025-08-01', rows: 1, present: 0, file: null }] });
    expect(await allFiles(path.join(dataDir, 'hotspots/date=2025-08-01'))).toEqual([]);
    expect((await ingest(file)).code).toBe(0);
    const server = await startServer(dataDir);
    try {
      const csv = await (await server.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv')).text();
      expect(csv.split('\n')[1]).toMatch(/^MODIS_SP_20250801_[0-9a-f]{20},MODIS_SP,2025-08-01T10:42:00Z,PT,41.15,-8.61,320.4,295.2,,,1.1,1,2025-08-01,1042,Terra,MODIS,77,6.1,15.75,D,0$/);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('fire-api ingest and compact usage', () => {
  it('exit 2 with the usage text for an unknown dataset, no files, or --product on another dataset', async () => {
    for (const args of [['ingest', 'fires', 'x.csv'], ['ingest', 'hotspots'], ['ingest', 'fire-danger', '--product', 'X', 'a.csv'], ['compact', 'hotspots', '--from', '2026-02-01', '--to', '2026-01-01']]) {
      const r = await fireApi([...args, '--data-dir', dir]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/Usage: fire-api (ingest|compact)/);
    }
  }, 120_000);
});

describe('one ingest or compact of a dataset at a time', () => {
  it('refuses to run while another live process holds the dataset, and takes over a lock its dead holder left', async () => {
    const lock = path.join(dataDir, 'hotspots/_ops.lock');
    await mkdir(path.dirname(lock), { recursive: true });
    await writeFile(lock, `${process.pid}\n`);
    const file = await source('locked.csv', VIIRS_HEADER, [VIIRS_ROWS[0]!.replaceAll('2026-03-04', '2026-01-15')]);
    for (const args of [['ingest', 'hotspots', file], ['compact', 'hotspots']]) {
      const r = await fireApi([...args, '--data-dir', dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`another ingest or compact of hotspots is running (${lock}, pid ${process.pid})`);
    }
    // A pid that has certainly exited: a child that ran and was reaped.
    const child = execFile(process.execPath, ['-e', '']);
    await promisify((cb: () => void) => child.once('exit', () => cb()))();
    await writeFile(lock, `${child.pid}\n`);
    const r = await fireApi(['ingest', 'hotspots', '--data-dir', dataDir, file]);
    expect(r.code, r.stderr).toBe(0);
    expect(await allFiles(path.join(dataDir, 'hotspots/date=2026-01-15'))).toHaveLength(1);
    await rm(lock, { force: true });
  }, 120_000);
});

describe('fire-api ingest into a partition holding a broken file', () => {
  it('stops there with exit 1 naming the partition, keeps the partitions before it, and adds the rest when run again', async () => {
    const data = path.join(dir, 'broken-data');
    const broken = path.join(data, 'hotspots/date=2026-03-05/broken.parquet');
    await mkdir(path.dirname(broken), { recursive: true });
    await writeFile(broken, 'not parquet at all');
    const file = await source('two-days.csv', VIIRS_HEADER, VIIRS_ROWS);
    const r = await fireApi(['ingest', 'hotspots', '--data-dir', data, file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/stopped after writing 3 rows: date=2026-03-05: .* \(1 partitions before it written; run the same ingest again once it is fixed\)/);
    expect(await allFiles(path.join(data, 'hotspots/date=2026-03-04'))).toHaveLength(1);
    await rm(broken);
    const again = await fireApi(['ingest', 'hotspots', '--data-dir', data, file]);
    expect(again.stdout).toMatch(/3 already present; wrote 1 rows in 1 files/);
  }, 120_000);
});
