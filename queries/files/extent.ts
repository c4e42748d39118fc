import path from 'node:path';
import type { DuckDBBlobValue, DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { footerFields } from '../../shared/parquet/footer-fields.ts';
import { STATIONS_DATASET, type DatasetDescriptor } from '../../datasets/index.ts';
import type { Engine } from '../engine/engine.ts';
import { StreamIncompleteError } from '../errors.ts';
import { ident, quoteFilePath, readParquet, SOURCE_FILE_COLUMN } from '../sql/sql.ts';
import { unionBox, wkbBounds, type Box } from '../sql/wkb-bounds.ts';
import { requestConnection } from '../engine/request-connection.ts';
import { fileIdentity as identity, type DataFile } from './data-file.ts';
import { readFooter } from './footer.ts';
import { listDatasetFiles } from './partitions.ts';

const MAX_CACHED = 200_000;
/** Files measured by one statement. */
const BATCH = 256;

/** A GeoParquet `bbox` (2D or 3D) as a box on the globe; null when absent or not one. */
export function geoParquetBox(geo: string | undefined, column: string): Box | null {
  let b: unknown;
  try {
    b = (JSON.parse(geo ?? 'null') as { columns?: Record<string, { bbox?: unknown }> } | null)?.columns?.[column]?.bbox;
  } catch {
    return null;
  }
  if (!Array.isArray(b) || (b.length !== 4 && b.length !== 6) || !b.every((v) => typeof v === 'number' && Number.isFinite(v))) return null;
  const [x0, y0, x1, y1] = (b.length === 4 ? b : [b[0], b[1], b[3], b[4]]) as number[];
  const onGlobe = [x0!, x1!].every((x) => x >= -180 && x <= 180) && [y0!, y1!].every((y) => y >= -90 && y <= 90) && y0! <= y1!;
  if (!onGlobe) return null;
  // GeoParquet 1.1: a west edge east of the east edge crosses the antimeridian; the box then spans every longitude.
  return x0! <= x1! ? [x0!, y0!, x1!, y1!] : [-180, y0!, 180, y1!];
}

/**
 * The bounding box (CRS84) of a dataset's rows, from its files: points by the min and max of their
 * coordinate columns, WKB geometry by each file's GeoParquet `bbox`, or by reading every geometry
 * where a file states none. Coordinates that are not finite or off the globe are left out. Each
 * file's box is kept by its identity (path, size, time, inode): a new or replaced file is read once.
 * A file that cannot be read, or a dataset folder that cannot be listed, adds nothing (its windows
 * answer 503 and say why); only a busy engine or a request gone away stops the measuring.
 */
export class Extents {
  private readonly boxes = new Map<string, Box | null>();

  constructor(
    private readonly dataDir: string,
    private readonly engine: Engine,
  ) {}

  /** Null: the dataset has no geometry, or no row with a position on the globe. */
  async of(d: DatasetDescriptor, signal: AbortSignal): Promise<Box | null> {
    const g = d.geometry;
    if (g.kind === 'none') return null;
    if (g.kind === 'station') return this.of(STATIONS_DATASET, signal);
    // A folder that cannot be listed has no extent (its items say why), as it has no time span.
    const files = await listDatasetFiles(this.dataDir, d).then((l) => l.files, () => []);
    const missing = files.filter((f) => !this.boxes.has(identity(f)));
    if (missing.length > 0) {
      const lease = requestConnection(this.engine, signal);
      try {
        const c = await lease.connection();
        for (let i = 0; i < missing.length; i += BATCH) await this.measure(c, d, missing.slice(i, i + BATCH), signal);
      } finally {
        lease.release();
      }
    }
    return files.reduce<Box | null>((box, f) => unionBox(box, this.boxes.get(identity(f)) ?? null), null);
  }

  /** Boxes of files not measured yet. A file that fails is not kept: it is measured again next time. */
  private async measure(c: DuckDBConnection, d: DatasetDescriptor, files: DataFile[], signal: AbortSignal): Promise<void> {
    const g = d.geometry;
    if (g.kind === 'point') {
      let found: Map<string, Box>;
      try {
        found = await this.pointBoxes(c, g, files);
      } catch {
        signal.throwIfAborted();
        // One unreadable file fails the statement: each is then measured alone.
        if (files.length > 1) for (const f of files) await this.measure(c, d, [f], signal);
        return;
      }
      for (const f of files) this.keep(f, found.get(path.resolve(f.path)) ?? null);
    }
    if (g.kind !== 'wkb') return;
    for (const f of files) {
      try {
        this.keep(f, await this.geometryBox(c, f, g.column));
      } catch {
        signal.throwIfAborted();
      }
    }
  }

  private keep(f: DataFile, box: Box | null): void {
    if (this.boxes.size >= MAX_CACHED) this.boxes.clear();
    this.boxes.set(identity(f), box);
  }

  /** Each file's box by one grouped statement over the coordinate columns. */
  private async pointBoxes(c: DuckDBConnection, g: { latitude: string; longitude: string }, files: DataFile[]): Promise<Map<string, Box>> {
    const [x, y] = [ident(g.longitude), ident(g.latitude)];
    const sql = `SELECT ${SOURCE_FILE_COLUMN}, min(${x}), min(${y}), max(${x}), max(${y}) FROM ${readParquet(files.map((f) => f.path), this.dataDir, true)}
      WHERE ${x} BETWEEN -180 AND 180 AND ${y} BETWEEN -90 AND 90 GROUP BY ALL`;
    const rows = (await c.runAndReadAll(sql)).getRows();
    return new Map(rows.map((r) => [String(r[0]), r.slice(1).map(Number) as Box]));
  }

  /**
   * A WKB file's box: its GeoParquet `bbox`, else every geometry read chunk by chunk. The rows read
   * are counted against the footer's: a read that ends early (DuckDB may end a failed stream as if
   * it were done) throws instead of giving a box too small.
   */
  private async geometryBox(c: DuckDBConnection, f: DataFile, column: string): Promise<Box | null> {
    const footer = footerFields(await readFooter(f));
    const stated = geoParquetBox(footer.keyValues.get('geo'), column);
    if (stated) return stated;
    const result = await c.stream(`SELECT ST_AsWKB(${ident(column)}) FROM read_parquet(${quoteFilePath(f.path, this.dataDir)})`);
    let box: Box | null = null;
    let rows = 0;
    for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; rows += chunk.rowCount) {
      for (const wkb of chunk.getColumnValues(0) as (DuckDBBlobValue | null)[]) if (wkb) box = wkbBounds(wkb.bytes, box);
    }
    // A stream that ends short failed (the client reports no error): a read failure, not a bug.
    if (rows !== footer.rows) throw new StreamIncompleteError(footer.rows ?? -1, rows);
    return box;
  }
}
