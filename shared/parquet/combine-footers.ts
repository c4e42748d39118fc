import { open } from 'node:fs/promises';
import { decodeStruct, encodeStruct, field, T, type Field, type ThriftList } from './thrift-compact.ts';

export const PARQUET_MAGIC = Buffer.from('PAR1', 'latin1');

/** What the combined file says made it: fixed, so the bytes never carry DuckDB's build. */
export const PARQUET_CREATED_BY = 'research-read-api version 1.0.0 (row groups by DuckDB)';

/** A group written as its own Parquet file: its footer, decoded, and where its row-group bytes end. */
export interface GroupFooter {
  /** Offset of the footer in the group's file: the bytes [4, bodyEnd) are what the response sends. */
  bodyEnd: number;
  meta: Field[];
}

// FileMetaData, RowGroup, ColumnChunk and ColumnMetaData field ids (parquet.thrift).
const FILE = { version: 1, schema: 2, numRows: 3, rowGroups: 4, keyValues: 5, createdBy: 6, columnOrders: 7 };
const GROUP = { columns: 1, fileOffset: 5, ordinal: 7 };
const CHUNK = { fileOffset: 2, metaData: 3, firstPageIndexField: 4, lastPageIndexField: 7 };
const COLUMN_OFFSETS = [9, 10, 11, 14]; // data page, index page, dictionary page, bloom filter

/**
 * The footer of the Parquet file held in bytes [start, end) of `file`: a group's own file (the
 * whole of it), or one page of an extract kept in a file of pages one after the other.
 */
export async function readGroupFooter(file: string, segment?: { start: number; end: number }, maxFooterBytes = Infinity): Promise<GroupFooter> {
  const handle = await open(file, 'r');
  try {
    const start = segment?.start ?? 0;
    const size = (segment?.end ?? (await handle.stat()).size) - start;
    const tail = Buffer.alloc(8);
    if (size < 12 || (await handle.read(tail, 0, 8, start + size - 8)).bytesRead !== 8 || !tail.subarray(4).equals(PARQUET_MAGIC)) throw new Error('not a Parquet file');
    const length = tail.readUInt32LE(0);
    const bodyEnd = size - 8 - length;
    if (bodyEnd < 4 || length > maxFooterBytes) throw new Error('bad Parquet footer length');
    const footer = Buffer.alloc(length);
    await handle.read(footer, 0, length, start + bodyEnd);
    return { bodyEnd, meta: decodeStruct(footer) };
  } finally {
    await handle.close();
  }
}

const shift = (f: Field | undefined, delta: bigint) => {
  if (f && f.type === T.I64 && (f.value as bigint) > 0n) f.value = (f.value as bigint) + delta;
};

/**
 * A group's row groups moved `delta` bytes further into the combined file. Page indexes are left
 * out: their page locations are absolute offsets inside the group's bytes (DuckDB writes none today).
 */
function movedRowGroups(meta: Field[], delta: bigint, firstOrdinal: number): Field[][] {
  const groups = (field(meta, FILE.rowGroups)?.value as ThriftList | undefined)?.items ?? [];
  // Each footer is combined once: its row groups are edited in place.
  return groups.map((g, i) => {
    const rg = g as Field[];
    shift(field(rg, GROUP.fileOffset), delta);
    const ordinal = field(rg, GROUP.ordinal);
    if (ordinal) ordinal.value = firstOrdinal + i;
    for (const chunk of (field(rg, GROUP.columns)!.value as ThriftList).items as Field[][]) {
      shift(field(chunk, CHUNK.fileOffset), delta);
      const md = field(chunk, CHUNK.metaData)?.value as Field[] | undefined;
      for (const id of COLUMN_OFFSETS) shift(md && field(md, id), delta);
      chunk.splice(0, chunk.length, ...chunk.filter((f) => f.id < CHUNK.firstPageIndexField || f.id > CHUNK.lastPageIndexField));
    }
    return rg;
  });
}

const keyValue = (key: string, value: string): Field[] => [
  { id: 1, type: T.BINARY, value: Buffer.from(key) },
  { id: 2, type: T.BINARY, value: Buffer.from(value) },
];

/** The value written under `key` in a footer's key-value metadata (FileMetaData field 5), as UTF-8. */
export function groupKeyValue(meta: Field[], key: string): string | undefined {
  const list = field(meta, FILE.keyValues);
  if (list?.type !== T.LIST) return undefined;
  const kv = ((list.value as ThriftList).items as Field[][]).find((i) => (field(i, 1)?.value as Buffer | undefined)?.toString() === key);
  const value = kv && field(kv, 2)?.value;
  return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
}

/**
 * The footer of the response: the groups' row groups one after the other (offsets moved to where
 * their bytes were sent), the schema of the first group (every group is the same select), the
 * given key-value metadata in key order and a fixed writer string. Returns footer, length, magic.
 */
export function combineFooters(groups: readonly GroupFooter[], keyValues: Readonly<Record<string, string>>): Buffer {
  const first = groups[0];
  if (!first) throw new Error('no group to take the schema from');
  const schema = encodeStruct([field(first.meta, FILE.schema)!]);
  const rowGroups: Field[][] = [];
  let delta = 0n;
  let rows = 0n;
  for (const g of groups) {
    if (!encodeStruct([field(g.meta, FILE.schema)!]).equals(schema)) throw new Error('groups of one response differ in schema');
    rowGroups.push(...movedRowGroups(g.meta, delta, rowGroups.length));
    delta += BigInt(g.bodyEnd - PARQUET_MAGIC.length);
    rows += field(g.meta, FILE.numRows)!.value as bigint;
  }
  const kv = Object.keys(keyValues)
    .sort()
    .map((k) => keyValue(k, keyValues[k]!));
  const meta: Field[] = [
    field(first.meta, FILE.version)!,
    field(first.meta, FILE.schema)!,
    { id: FILE.numRows, type: T.I64, value: rows },
    { id: FILE.rowGroups, type: T.LIST, value: { elementType: T.STRUCT, items: rowGroups } },
    { id: FILE.keyValues, type: T.LIST, value: { elementType: T.STRUCT, items: kv } },
    { id: FILE.createdBy, type: T.BINARY, value: Buffer.from(PARQUET_CREATED_BY) },
    ...first.meta.filter((f) => f.id === FILE.columnOrders),
  ];
  const footer = encodeStruct(meta);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length, 0);
  return Buffer.concat([footer, length, PARQUET_MAGIC]);
}
