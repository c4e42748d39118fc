import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combineFooters, PARQUET_CREATED_BY, PARQUET_MAGIC, readGroupFooter } from '../../shared/parquet/combine-footers.ts';
import { geoMetadata } from '../../shared/parquet/geo-metadata.ts';
import { decodeStruct, encodeStruct, T, type Field } from '../../shared/parquet/thrift-compact.ts';
import { tempDir } from '../helpers/fixtures.ts';

let dir: string;
let c: DuckDBConnection;
beforeAll(async () => {
  dir = await tempDir();
  c = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => c.closeSync());

/** A group file as the server writes it: ordered rows with a point geometry, small row groups. */
async function group(name: string, from: number, rows: number, x: number): Promise<string> {
  const file = path.join(dir, name);
  await c.run(`COPY (SELECT i AS id, 'row ' || i AS label, TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_microseconds(i) AS t,
      CAST('POINT (' || CAST(${x} + i / 1000 AS VARCHAR) || ' 45.5)' AS GEOMETRY) AS geometry
    FROM range(${from}, ${from + rows}) r(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 1000, COMPRESSION zstd)`);
  return file;
}

describe('Thrift compact codec', () => {
  it('decodes and re-encodes a DuckDB footer to the same bytes', async () => {
    const file = await group('round.parquet', 0, 2500, 1);
    const bytes = await readFile(file);
    const { bodyEnd } = await readGroupFooter(file);
    const footer = bytes.subarray(bodyEnd, bytes.length - 8);
    expect(encodeStruct(decodeStruct(footer)).equals(footer)).toBe(true);
  });

  it('keeps negative and 64-bit values, long lists, booleans, doubles, maps and far field ids', () => {
    const fields: Field[] = [
      { id: 1, type: T.I64, value: -(2n ** 62n) },
      { id: 2, type: T.I32, value: -7 },
      { id: 3, type: T.TRUE, value: true },
      { id: 4, type: T.FALSE, value: false },
      { id: 5, type: T.LIST, value: { elementType: T.I64, items: Array.from({ length: 40 }, (_, i) => BigInt(i) * 1000n) } },
      { id: 6, type: T.DOUBLE, value: -0.1 },
      { id: 7, type: T.MAP, value: { keyType: T.BINARY, valueType: T.I32, entries: [[Buffer.from('k'), 3]] } },
      { id: 40, type: T.LIST, value: { elementType: T.TRUE, items: [true, false, true] } },
      { id: 41, type: T.I8, value: -3 },
    ];
    expect(decodeStruct(encodeStruct(fields))).toEqual(fields);
  });

  it('refuses truncated input instead of reading past it', () => {
    const bytes = encodeStruct([{ id: 1, type: T.BINARY, value: Buffer.from('abcdef') }]);
    expect(() => decodeStruct(bytes.subarray(0, 4))).toThrow(/ends early/);
  });
});

describe('combined footer over group files', () => {
  it('the groups sent one after the other under one footer read back as one file: rows, order, row groups, metadata', async () => {
    const files = [await group('g0.parquet', 0, 1500, 1), await group('g1.parquet', 1500, 2700, -3), await group('g2.parquet', 4200, 10, 2)];
    const footers = await Promise.all(files.map((f) => readGroupFooter(f)));
    const bodies = await Promise.all(files.map(async (f, i) => (await readFile(f)).subarray(4, footers[i]!.bodyEnd)));
    const geo = geoMetadata(footers, 'geometry');
    const combined = Buffer.concat([PARQUET_MAGIC, ...bodies, combineFooters(footers, { 'fire_api:meta': '{"returned":4210}', geo })]);
    const out = path.join(dir, 'combined.parquet');
    await writeFile(out, combined);
    const read = (sql: string) => c.runAndReadAll(sql).then((r) => r.getRows());
    expect(await read(`SELECT count(*), min(id), max(id), bool_and(label = 'row ' || id) FROM '${out}'`)).toEqual([[4210n, 0n, 4209n, true]]);
    const ids = (await read(`SELECT id FROM '${out}'`)).map((r) => Number(r[0]));
    expect(ids).toEqual(Array.from({ length: 4210 }, (_, i) => i));
    const rowGroups = async (f: string) => Number((await read(`SELECT count(*) FROM parquet_metadata('${f}') WHERE column_id = 0`))[0]![0]);
    const perGroup = await Promise.all(files.map(rowGroups));
    expect(perGroup[1]).toBeGreaterThan(1);
    expect(await rowGroups(out)).toBe(perGroup.reduce((a, b) => a + b, 0));
    expect(await read(`SELECT created_by FROM parquet_file_metadata('${out}')`)).toEqual([[PARQUET_CREATED_BY]]);
    const kv = Object.fromEntries((await read(`SELECT decode(key), decode(value) FROM parquet_kv_metadata('${out}')`)).map((r) => [r[0], r[1]]));
    expect(kv['fire_api:meta']).toBe('{"returned":4210}');
    const box = (JSON.parse(kv.geo as string) as { columns: { geometry: { bbox: number[] } } }).columns.geometry.bbox;
    // x = offset + id / 1000 per group: the lowest in the second group, the highest in the third.
    expect(box).toEqual([-3 + 1500 / 1000, 45.5, 2 + 4209 / 1000, 45.5]);
    expect(await read(`SELECT typeof(geometry), ST_AsText(geometry) FROM '${out}' WHERE id = 1500`)).toEqual([["GEOMETRY('OGC:CRS84')", 'POINT (-1.5 45.5)']]);
  });

  it('groups of different schemas are refused rather than combined', async () => {
    const a = await group('s0.parquet', 0, 10, 0);
    const b = path.join(dir, 's1.parquet');
    await c.run(`COPY (SELECT 1 AS other) TO '${b}' (FORMAT parquet)`);
    const footers = await Promise.all([a, b].map((f) => readGroupFooter(f)));
    expect(() => combineFooters(footers, {})).toThrow(/differ in schema/);
  });
});
