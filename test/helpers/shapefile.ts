// A small ESRI shapefile writer (polygons, .shp/.shx/.dbf) for ingest tests: real files made by
// code, read back by the same reader the ingest uses.

import { writeFile } from 'node:fs/promises';

export interface DbfField {
  name: string;
  /** C text, N number, D date (YYYYMMDD). */
  type: 'C' | 'N' | 'D';
  length: number;
  decimals?: number;
}

export interface ShapeRecord {
  /** Rings of [lon, lat]; outer rings clockwise, as the format has them. */
  rings: number[][][];
  attributes: Record<string, string | number | null>;
}

function header(shapeType: number, lengthWords: number, bbox: number[]): Buffer {
  const b = Buffer.alloc(100);
  b.writeInt32BE(9994, 0);
  b.writeInt32BE(lengthWords, 24);
  b.writeInt32LE(1000, 28);
  b.writeInt32LE(shapeType, 32);
  bbox.forEach((v, i) => b.writeDoubleLE(v, 36 + 8 * i));
  return b;
}

function boundingBox(points: number[][]): number[] {
  const xs = points.map((p) => p[0]!);
  const ys = points.map((p) => p[1]!);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

function polygonContent(rings: number[][][]): Buffer {
  const points = rings.flat();
  const b = Buffer.alloc(44 + 4 * rings.length + 16 * points.length);
  b.writeInt32LE(5, 0);
  boundingBox(points).forEach((v, i) => b.writeDoubleLE(v, 4 + 8 * i));
  b.writeInt32LE(rings.length, 36);
  b.writeInt32LE(points.length, 40);
  let start = 0;
  rings.forEach((ring, i) => {
    b.writeInt32LE(start, 44 + 4 * i);
    start += ring.length;
  });
  points.forEach(([x, y], i) => {
    b.writeDoubleLE(x!, 44 + 4 * rings.length + 16 * i);
    b.writeDoubleLE(y!, 52 + 4 * rings.length + 16 * i);
  });
  return b;
}

function dbfValue(field: DbfField, value: string | number | null): Buffer {
  const text = value === null ? '' : field.type === 'N' && typeof value === 'number' ? value.toFixed(field.decimals ?? 0) : String(value);
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > field.length) throw new Error(`${field.name}: '${text}' longer than ${field.length} bytes`);
  const cell = Buffer.alloc(field.length, 0x20);
  bytes.copy(cell, field.type === 'N' ? field.length - bytes.length : 0);
  return cell;
}

function dbf(fields: readonly DbfField[], records: readonly ShapeRecord[]): Buffer {
  const headerLength = 32 + 32 * fields.length + 1;
  const recordLength = 1 + fields.reduce((n, f) => n + f.length, 0);
  const head = Buffer.alloc(headerLength);
  head.writeUInt8(3, 0);
  head.writeUInt8(126, 1);
  head.writeUInt8(1, 2);
  head.writeUInt8(1, 3);
  head.writeUInt32LE(records.length, 4);
  head.writeUInt16LE(headerLength, 8);
  head.writeUInt16LE(recordLength, 10);
  fields.forEach((f, i) => {
    head.write(f.name, 32 + 32 * i, 'latin1');
    head.write(f.type, 32 + 32 * i + 11, 'latin1');
    head.writeUInt8(f.length, 32 + 32 * i + 16);
    head.writeUInt8(f.decimals ?? 0, 32 + 32 * i + 17);
  });
  head.writeUInt8(0x0d, headerLength - 1);
  const rows = records.map((r) => Buffer.concat([Buffer.from(' '), ...fields.map((f) => dbfValue(f, r.attributes[f.name] ?? null))]));
  return Buffer.concat([head, ...rows, Buffer.from([0x1a])]);
}

/** Writes `base`.shp, .shx and .dbf (and a WGS 84 .prj) holding the polygons. */
export async function writePolygonShapefile(base: string, fields: readonly DbfField[], records: readonly ShapeRecord[]): Promise<void> {
  const contents = records.map((r) => polygonContent(r.rings));
  const bbox = boundingBox(records.flatMap((r) => r.rings.flat()));
  const shpWords = 50 + contents.reduce((n, c) => n + 4 + c.length / 2, 0);
  const shpRecords: Buffer[] = [];
  const shxRecords: Buffer[] = [];
  let offsetWords = 50;
  contents.forEach((content, i) => {
    const recordHeader = Buffer.alloc(8);
    recordHeader.writeInt32BE(i + 1, 0);
    recordHeader.writeInt32BE(content.length / 2, 4);
    shpRecords.push(recordHeader, content);
    const index = Buffer.alloc(8);
    index.writeInt32BE(offsetWords, 0);
    index.writeInt32BE(content.length / 2, 4);
    shxRecords.push(index);
    offsetWords += 4 + content.length / 2;
  });
  await writeFile(`${base}.shp`, Buffer.concat([header(5, shpWords, bbox), ...shpRecords]));
  await writeFile(`${base}.shx`, Buffer.concat([header(5, 50 + 4 * records.length, bbox), ...shxRecords]));
  await writeFile(`${base}.dbf`, dbf(fields, records));
  await writeFile(`${base}.prj`, 'GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]');
}
