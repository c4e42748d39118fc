import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fileColumns, type Column, type DatasetDescriptor } from '../../../datasets/index.ts';
import { square, writeWkb } from './wkb-writer.ts';

/**
 * Parquet files of every dataset whose values are edge cases of their types, written by DuckDB
 * from SQL expressions (a string through its UTF-8 bytes, so NUL and every control character
 * arrive as they are): the input on which two Feature encoders must agree byte for byte.
 */

/** A deterministic generator (mulberry32), so a failure names the same rows on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIXED_DOUBLES = [
  '0', '-0.0', '1', '-1', '100', '0.5', '330.25', '-8.25', '39.5', '123456.789', '0.30000000000000004',
  '1e15', '-1e15', '999999999999999', '-999999999999999', '999999999999999.9', '1000000000000000.5', '4503599627370495.5',
  '9007199254740993', '123456789012345678', '1e16', '1e20', '1e21', '1e22', '1e300', '1.7976931348623157e308', '-1.7976931348623157e308',
  '5e-324', '-5e-324', '2.2250738585072014e-308', '1e-300', '1e-7', '1e-6', '1.5e-5', '-1e-5', '0.0001', '0.00012', '-0.00003',
  'nan', '-nan', 'inf', '-inf',
];

/** Edge doubles, then doubles of every magnitude (random bit patterns) and everyday decimals. */
function doubles(next: () => number): string[] {
  const view = new DataView(new ArrayBuffer(8));
  const bits = Array.from({ length: 300 }, () => {
    view.setUint32(0, Math.floor(next() * 2 ** 32));
    view.setUint32(4, Math.floor(next() * 2 ** 32));
    return String(view.getFloat64(0));
  });
  const decimals = Array.from({ length: 100 }, () => String(Math.round((next() - 0.5) * 10 ** Math.floor(next() * 9)) / 10 ** Math.floor(next() * 7)));
  return [...FIXED_DOUBLES, ...bits, ...decimals].map((v) => `CAST('${v}' AS DOUBLE)`).concat('CAST(NULL AS DOUBLE)');
}

const CONTROL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
const STRINGS = [
  '', 'plain', 'PT', 'é ñ ü ß', '中文字', '😀🔥', '"', '\\', '/', '\\"', "O'Brien", 'a,b', 'line1\r\nline2', '\t\b\f',
  CONTROL, '\u0000', 'nul\u0000inside', '\u007f\u0080\u009f', '\u2028\u2029', '\ufeff', '\uffff', '</script>', '{"json":[1]}', 'x'.repeat(3000),
];
const text = (s: string) => `decode(from_hex('${Buffer.from(s, 'utf8').toString('hex')}'))`;
const strings = [...STRINGS.map(text), 'CAST(NULL AS VARCHAR)'];

const US = [
  1754006400000000n, 1754042400500000n, 1754049600000001n, 1754006400123450n, -62135596800000000n, 253402300799999999n,
  -500000n, 253402300800250000n, -63000000000000000n, 9223371331200000000n, 0n, 1n,
];
const times = [...US.map((us) => `make_timestamptz(${us}::BIGINT)`), 'CAST(NULL AS TIMESTAMPTZ)'];
const integers = ['0', '-1', '1', '3', '2147483647', '-2147483648', 'NULL'].map((v) => `CAST(${v} AS INTEGER)`);
const bigints = ['0', '-1', '42', '9223372036854775807', '-9223372036854775808', 'NULL'].map((v) => `CAST(${v} AS BIGINT)`);
const booleans = ['true', 'false', 'NULL'].map((v) => `CAST(${v} AS BOOLEAN)`);

const EDGE_XY = [0, -0, 1e-7, -5e-324, 1e300, -180, 180, 90.5, 1.5e-5, 1e21, 100, NaN, Infinity];
const SHAPES = [
  writeWkb({ type: 'Polygon', at: [square(10, 40, 11, 41)] }),
  writeWkb({ type: 'Polygon', at: [square(-0, 1e-7, 1.5e-5, 100), square(0.25, 1e-6, 0.5, 0.75)] }, { bigEndian: true }),
  writeWkb({ type: 'MultiPolygon', members: EDGE_XY.map((x, i) => ({ type: 'Polygon' as const, at: [square(x, EDGE_XY[(i + 3) % EDGE_XY.length]!, 1e15, -1e16)] })) }),
  writeWkb({ type: 'Polygon', at: [square(1, 2, 3, 4).map(([x, y]) => [x!, y!, 1e-7])] }, { flavour: 1000 }),
  writeWkb({ type: 'Point', at: [NaN, NaN] }),
];
const shapes = [...SHAPES.map((w) => `ST_GeomFromWKB(from_hex('${Buffer.from(w).toString('hex')}'))`), 'CAST(NULL AS GEOMETRY)'];

const pools = (next: () => number): Record<Column['type'], string[]> => ({ DOUBLE: doubles(next), VARCHAR: strings, TIMESTAMPTZ: times, INTEGER: integers, BIGINT: bigints, BOOLEAN: booleans, GEOMETRY: shapes });

/** Row `i`'s value of column `j`: each column walks its pool at its own stride, so values meet in many combinations. */
const pick = (pool: readonly string[], i: number, j: number) => pool[(i * (2 * j + 1) + 7 * j) % pool.length]!;

/** A key unique to row `k` that still carries an edge string (or edge id), so the total order has no ties. */
const uniqueKey = (c: Column, k: number, unknown = false): string =>
  c.type === 'BIGINT' ? (k < bigints.length - 1 ? bigints[k]! : `CAST(${k} AS BIGINT)`) : unknown ? text('zz-unknown') : `${text(String(k).padStart(4, '0'))} || ${strings[k % (strings.length - 1)]!}`;

export const EDGE_ROWS = 480;
/** Stations in the edge data; every reading names one of them, or none (`zz-unknown`). */
export const STATIONS = 39;

function rowValues(d: DatasetDescriptor, i: number, pool: Record<Column['type'], string[]>): string[] {
  const [first, last] = [d.orderBy[0], d.orderBy[d.orderBy.length - 1]];
  return fileColumns(d).map((c, j) => {
    if (d.time && c.name === first) return times[i % (times.length - 1)]!;
    if (d.name === 'sensor-readings' && c.name === last) {
      const k = Math.floor(i / (times.length - 1)) % (STATIONS + 1);
      return uniqueKey(c, k, k === STATIONS);
    }
    if (c.name === last) return uniqueKey(c, i);
    return pick(pool[c.type], i, j);
  });
}

/** One Parquet file of edge rows for dataset `d` under `dataDir`. */
export async function writeEdgeFile(c: DuckDBConnection, dataDir: string, d: DatasetDescriptor, seed: number): Promise<string> {
  const file = path.join(dataDir, d.name, 'edges.parquet');
  await mkdir(path.dirname(file), { recursive: true });
  const pool = pools(random(seed));
  const rows = d.name === 'sensor-stations' ? STATIONS : EDGE_ROWS;
  const names = fileColumns(d).map((col) => `"${col.name}"`).join(', ');
  const values = Array.from({ length: rows }, (_, i) => `(${rowValues(d, i, pool).join(', ')})`).join(',\n');
  await c.run(`COPY (SELECT * FROM (VALUES ${values}) AS t(${names})) TO '${file}' (FORMAT parquet)`);
  return file;
}
