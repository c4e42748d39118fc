import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { fileColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';

let instance: Promise<DuckDBInstance> | null = null;
const writer = () => (instance ??= DuckDBInstance.create(':memory:'));

const SQL_TYPE: Record<Column['type'], string> = {
  VARCHAR: 'VARCHAR',
  DOUBLE: 'DOUBLE',
  INTEGER: 'INTEGER',
  BIGINT: 'BIGINT',
  BOOLEAN: 'BOOLEAN',
  TIMESTAMPTZ: 'TIMESTAMPTZ',
  GEOMETRY: 'GEOMETRY',
};

function literal(c: Column, v: unknown): string {
  if (v === null || v === undefined) return `CAST(NULL AS ${SQL_TYPE[c.type]})`;
  if (c.type === 'GEOMETRY') return `ST_GeomFromWKB(from_hex('${Buffer.from(v as Uint8Array).toString('hex')}'))`;
  const text = typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v);
  return `CAST(${text} AS ${SQL_TYPE[c.type]})`;
}

export type Row = Record<string, unknown>;

/** Writes rows as one Parquet file with the descriptor's file columns (or `columns`, to make a mismatching file). */
export async function writeParquet(file: string, d: DatasetDescriptor, rows: readonly Row[], columns: readonly Column[] = fileColumns(d)): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const c = await (await writer()).connect();
  try {
    const names = columns.map((col) => `"${col.name}"`).join(', ');
    const tuple = (r: Row) => `(${columns.map((col) => literal(col, r[col.name])).join(', ')})`;
    const values = (rows.length ? rows : [{}]).map(tuple).join(',\n');
    const body = `SELECT * FROM (VALUES ${values}) AS t(${names})${rows.length ? '' : ' LIMIT 0'}`;
    await c.run(`COPY (${body}) TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
  } finally {
    c.closeSync();
  }
}
