import { randomUUID } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../../datasets/burnt-areas.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import { col, fileColumns, type DatasetDescriptor } from '../../../datasets/index.ts';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { FileChecker, schemaProblem } from '../../../queries/files/check.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import { parseInstant } from '../../../queries/instant.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import { hotspot, station, tempDir } from '../../helpers/fixtures.ts';
import { writeParquet, type Row } from '../../helpers/parquet.ts';
import { burnt, openDuck } from '../sql/compile-fixtures.ts';

const TYPE_NAME = { VARCHAR: 'VARCHAR', DOUBLE: 'DOUBLE', INTEGER: 'INTEGER', BIGINT: 'BIGINT', BOOLEAN: 'BOOLEAN', TIMESTAMPTZ: 'TIMESTAMP WITH TIME ZONE', GEOMETRY: 'GEOMETRY' };
const described = (d: DatasetDescriptor) => new Map(fileColumns(d).map((c) => [c.name, TYPE_NAME[c.type]]));
const without = (m: Map<string, string>, name: string) => new Map([...m].filter(([k]) => k !== name));

describe('schemaProblem', () => {
  it('accepts every column with its type, extra columns included', () => {
    expect(schemaProblem(hotspots, described(hotspots))).toBeNull();
    expect(schemaProblem(hotspots, new Map([...described(hotspots), ['extra', 'VARCHAR']]))).toBeNull();
  });

  it('names a missing column', () => {
    expect(schemaProblem(hotspots, without(described(hotspots), 'country'))).toBe('column country missing');
  });

  it('names a column of the wrong type with the type found and expected', () => {
    expect(schemaProblem(hotspots, new Map([...described(hotspots), ['type', 'VARCHAR']]))).toBe('column type is VARCHAR, expected INTEGER');
    expect(schemaProblem(hotspots, new Map([...described(hotspots), ['acquiredAtUtc', 'TIMESTAMP']]))).toMatch(/acquiredAtUtc is TIMESTAMP, expected TIMESTAMPTZ/);
    expect(schemaProblem(burntAreas, new Map([...described(burntAreas), ['id', 'INTEGER']]))).toMatch(/column id is INTEGER/);
  });

  it('accepts GEOMETRY with a CRS and refuses plain BLOB', () => {
    expect(schemaProblem(burntAreas, new Map([...described(burntAreas), ['geometry', "GEOMETRY('OGC:CRS84')"]]))).toBeNull();
    expect(schemaProblem(burntAreas, new Map([...described(burntAreas), ['geometry', 'BLOB']]))).toMatch(/geometry is BLOB/);
  });

  it('does not require the wire-only computed columns (series, correctionModel) in the file', () => {
    expect(described(sensorReadings).has('series')).toBe(false);
    expect(schemaProblem(sensorReadings, described(sensorReadings))).toBeNull();
  });
});

describe('FileChecker on real files', () => {
  let instance: DuckDBInstance;
  let c: DuckDBConnection;
  let dir: string;
  const file = async (name: string): Promise<DataFile> => {
    const s = await stat(path.join(dir, name));
    return { path: path.join(dir, name), size: s.size, mtimeMs: s.mtimeMs };
  };
  const hotspotRows = [hotspot('a', '2025-08-01T10:00:00Z')];
  const asVarchar = fileColumns(hotspots).map((x) => (x.name === 'type' ? col('type', 'VARCHAR', true, '') : x));

  beforeAll(async () => {
    ({ instance, c } = await openDuck());
    dir = await tempDir();
    await writeParquet(path.join(dir, 'good.parquet'), hotspots, hotspotRows);
    await writeParquet(path.join(dir, 'extra.parquet'), hotspots, hotspotRows, [...fileColumns(hotspots), col('extra', 'DOUBLE', true, '')]);
    await writeParquet(path.join(dir, 'missing.parquet'), hotspots, hotspotRows, fileColumns(hotspots).filter((x) => x.name !== 'country'));
    await writeParquet(path.join(dir, 'wrong-type.parquet'), hotspots, [{ ...hotspotRows[0], type: 'x' }], asVarchar);
    await writeParquet(path.join(dir, 'burnt.parquet'), burntAreas, [burnt(1, '2025-08-01T00:00:00Z')]);
    const bytes = await readFile(path.join(dir, 'good.parquet'));
    await writeFile(path.join(dir, 'truncated.parquet'), bytes.subarray(0, bytes.length - 10));
  });
  afterAll(() => instance.closeSync());

  it('accepts a matching file and returns its footer hash', async () => {
    const f = await file('good.parquet');
    expect(await new FileChecker(dir).check(c, hotspots, f)).toEqual({ ok: true, footerHash: await hashFooter(f), sorted: false, rows: null });
  });

  it('accepts a file with extra columns', async () => {
    expect((await new FileChecker(dir).check(c, hotspots, await file('extra.parquet'))).ok).toBe(true);
  });

  it('accepts a GeoParquet geometry column written by DuckDB', async () => {
    expect(await new FileChecker(dir).check(c, burntAreas, await file('burnt.parquet'))).toMatchObject({ ok: true });
  });

  it.each([
    ['missing.parquet', hotspots, /^column country missing$/],
    ['wrong-type.parquet', hotspots, /^column type is VARCHAR, expected INTEGER$/],
    ['truncated.parquet', hotspots, /^unreadable: /],
    ['good.parquet', sensorStations, /^column stationId missing$/],
  ] as const)('reports %s against %s', async (name, d, problem) => {
    const verdict = await new FileChecker(dir).check(c, d, await file(name));
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.problem).toMatch(problem);
  });

  it('gives no verdict for a check cut short by its signal: a hang-up says nothing about the file', async () => {
    const heard: string[] = [];
    const checker = new FileChecker(dir, (_d, f) => heard.push(f.path));
    const gone = AbortSignal.abort();
    // A failing file checked for a request that is already gone: the failure may be the interrupt.
    await expect(checker.check(c, hotspots, await file('truncated.parquet'), gone)).rejects.toThrow(/abort/i);
    expect(heard).toEqual([]);
    // A file that passes is still a verdict (an ok read cannot come from an interrupt), and is heard.
    expect((await checker.check(c, hotspots, await file('good.parquet'), gone)).ok).toBe(true);
    expect(heard).toEqual([path.join(dir, 'good.parquet')]);
    // Without a signal, or with one still live, the failure is the verdict.
    expect((await checker.check(c, hotspots, await file('truncated.parquet'), new AbortController().signal)).ok).toBe(false);
    expect(heard).toHaveLength(2);
  });

  it('caches by (path, size, mtime) and re-checks a rewritten file whose size changed', async () => {
    const checker = new FileChecker(dir);
    await writeParquet(path.join(dir, 'rewritten.parquet'), sensorStations, [station('S1')]);
    const before = await file('rewritten.parquet');
    expect((await checker.check(c, sensorStations, before)).ok).toBe(true);

    await writeFile(before.path, 'not parquet any more');
    const after = await file('rewritten.parquet');
    expect(after.size).not.toBe(before.size);
    // Same key as listed before: the cached verdict, without reading the file again.
    expect((await checker.check(c, sensorStations, before)).ok).toBe(true);
    // A size change alone (an append within the clock's mtime granularity) is enough to re-check.
    expect((await checker.check(c, sensorStations, { ...before, size: after.size })).ok).toBe(false);
    expect(await checker.check(c, sensorStations, after)).toMatchObject({ ok: false, problem: expect.stringMatching(/^unreadable/) });
  });

  it('re-checks a file rewritten at the same size when its modification time changed', async () => {
    const checker = new FileChecker(dir);
    const target = path.join(dir, 'same-size.parquet');
    const bytes = await readFile(path.join(dir, 'good.parquet'));
    await writeFile(target, bytes);
    const listed = await file('same-size.parquet');
    expect((await checker.check(c, hotspots, listed)).ok).toBe(true);
    await writeFile(target, Buffer.alloc(bytes.length, 0x41));
    expect((await checker.check(c, hotspots, listed)).ok).toBe(true);
    expect((await checker.check(c, hotspots, { ...listed, mtimeMs: listed.mtimeMs + 1 })).ok).toBe(false);
  });

  describe('stored order (a presorted file needs no sort)', () => {
    const AUG_1 = { start: parseInstant('2025-08-01')!, end: parseInstant('2025-08-02')! };
    const inPartition = async (name: string, rows: Row[]): Promise<DataFile> => {
      await writeParquet(path.join(dir, name), hotspots, rows);
      return { ...(await file(name)), partition: AUG_1 };
    };
    const verdict = async (rows: Row[]) => new FileChecker(dir).check(c, hotspots, await inPartition(`order-${randomUUID()}.parquet`, rows));

    it('is sorted when (acquiredAtUtc, id) strictly ascends in file order, ties on time broken by id', async () => {
      const rows = [hotspot('a', '2025-08-01T01:00:00Z'), hotspot('b', '2025-08-01T01:00:00Z'), hotspot('a', '2025-08-01T02:00:00Z')];
      expect(await verdict(rows)).toMatchObject({ ok: true, sorted: true, rows: 3 });
    });

    it.each([
      ['time goes back', [hotspot('a', '2025-08-01T02:00:00Z'), hotspot('b', '2025-08-01T01:00:00Z')]],
      ['id goes back at the same time', [hotspot('b', '2025-08-01T01:00:00Z'), hotspot('a', '2025-08-01T01:00:00Z')]],
      ['a key repeats', [hotspot('a', '2025-08-01T01:00:00Z'), hotspot('a', '2025-08-01T01:00:00Z')]],
      ['a key is null', [hotspot('a', '2025-08-01T01:00:00Z'), hotspot(null as unknown as string, '2025-08-01T02:00:00Z')]],
      ['only the last row is out of place', [...Array.from({ length: 50 }, (_, i) => hotspot(`k${String(i).padStart(3, '0')}`, '2025-08-01T03:00:00Z')), hotspot('z', '2025-08-01T00:00:00Z')]],
    ] as const)('is not sorted when %s (the file is still served, with a sort)', async (_, rows) => {
      expect(await verdict([...rows])).toMatchObject({ ok: true, sorted: false });
    });

    describe('facts an aggregate may skip a per-row test for', () => {
      const at = (i: number) => `2025-08-01T0${i}:00:00Z`;
      const factsOf = async (rows: Row[]) => {
        const v = await verdict(rows);
        if (!v.ok) throw new Error(v.problem);
        return v.facts!;
      };

      it('finds every measure in the common lane, and every position inside the grid, for ordinary rows (nulls and zeros too)', async () => {
        const facts = await factsOf([hotspot('a', at(1), { frp: 12.5, scan: 0 }), hotspot('b', at(2), { frp: null, longitude: 180, latitude: -90 }), hotspot('c', at(3), { longitude: -180, latitude: 90 })]);
        expect(facts).toEqual({ common: [...hotspots.aggregate!.measures], inGrid: true });
      });

      it.each([
        ['a value below the common lane', 1e-6],
        ['a value above it', 2 ** 17],
        ['a negative value above it', -(2 ** 20)],
        ['not a number', Number.NaN],
        ['an infinity', Number.POSITIVE_INFINITY],
      ])('leaves out a measure holding %s, and only that one', async (_, frp) => {
        const facts = await factsOf([hotspot('a', at(1), { frp: 3.5 }), hotspot('b', at(2), { frp })]);
        expect(facts.common).toEqual(hotspots.aggregate!.measures.filter((m) => m !== 'frp'));
        expect(facts.inGrid).toBe(true);
      });

      it.each([
        ['a longitude beyond 180', { longitude: 180.000001 }],
        ['a latitude beyond 90', { latitude: 90.5 }],
        ['a longitude that is not a number', { longitude: Number.NaN }],
      ])('is not inside the grid with %s', async (_, position) => {
        expect((await factsOf([hotspot('a', at(1)), hotspot('b', at(2), position)])).inGrid).toBe(false);
      });

      it.each([
        ['minus zero', -0],
        ['a value just inside the lane below', 2 ** -15],
        ['a value just inside it above', 131071.99996],
      ])('keeps a measure holding %s', async (_, frp) => {
        expect((await factsOf([hotspot('a', at(1), { frp })])).common).toContain('frp');
      });

      it.each([
        ['minus infinity', Number.NEGATIVE_INFINITY],
        ['a subnormal', 5e-324],
        ['a value just outside the lane above', 131072],
      ])('leaves out a measure holding %s too', async (_, frp) => {
        expect((await factsOf([hotspot('a', at(1), { frp })])).common).not.toContain('frp');
      });

      it('is not inside the grid with a latitude that is not a number; a file of no rows proves everything', async () => {
        expect((await factsOf([hotspot('a', at(1), { latitude: Number.NaN })])).inGrid).toBe(false);
        expect(await factsOf([])).toEqual({ common: [...hotspots.aggregate!.measures], inGrid: true });
      });

      it('keeps the facts it has over a verdict without them for the same footer (a request\'s check that ended later)', async () => {
        const name = `facts-${randomUUID()}.parquet`;
        const f = await inPartition(name, [hotspot('a', at(1))]);
        const checker = new FileChecker(dir);
        const full = await checker.check(c, hotspots, f);
        const light = await new FileChecker(dir).check(c, hotspots, f, undefined, { facts: false });
        expect(light).not.toHaveProperty('facts');
        checker.remember(hotspots, f, light);
        expect(checker.cached(hotspots, f)).toEqual(full);
        // Facts found later take a light verdict's place.
        const other = new FileChecker(dir);
        other.remember(hotspots, f, light);
        other.remember(hotspots, f, full);
        expect(other.cached(hotspots, f)).toEqual(full);
      });

      it('knows nothing of a file it did not inspect row by row (no partition), nor of a dataset without aggregates', async () => {
        await writeParquet(path.join(dir, 'unpartitioned.parquet'), hotspots, [hotspot('a', at(1))]);
        expect(await new FileChecker(dir).check(c, hotspots, await file('unpartitioned.parquet'))).not.toHaveProperty('facts');
        await writeParquet(path.join(dir, 'stations.parquet'), sensorStations, [station('s1')]);
        expect(await new FileChecker(dir).check(c, sensorStations, await file('stations.parquet'))).not.toHaveProperty('facts');
      });
    });

    it('reports rows outside the partition whatever their order', async () => {
      const rows = [hotspot('a', '2025-08-01T01:00:00Z'), hotspot('b', '2025-08-02T00:00:00Z')];
      expect(await verdict(rows)).toMatchObject({ ok: false, problem: "rows outside the partition's time range" });
    });
  });
});
