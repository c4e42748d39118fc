import type { DuckDBBlobValue, DuckDBConnection } from '@duckdb/node-api';
import { shapeMeetsBox } from './box.ts';
import { compileShapeCandidates, type QuerySpec } from './compile.ts';
import { DatasetUnavailableError } from '../errors.ts';
import type { RowFilter } from './filter-sql.ts';
import type { Window } from '../window.ts';

type BoxFilter = Extract<RowFilter, { kind: 'box' }>;

const needsShapes = (spec: QuerySpec) => spec.descriptor.geometry.kind === 'wkb' && spec.filters.some((f) => f.kind === 'box' && f.shapes === null);

/**
 * Decides a box filter on WKB geometry exactly, before anything is counted: DuckDB here has no
 * spatial predicate beyond envelopes, so the shapes whose envelope meets the box (a few thousand a
 * month for burnt areas) are tested in JavaScript and the ones that meet it go back into the SQL
 * as a bound list. Counts, cuts and rows then all see the same exact filter.
 */
export async function resolveShapes(c: DuckDBConnection, spec: QuerySpec, files: readonly string[], w: Window | null): Promise<QuerySpec> {
  if (!needsShapes(spec)) return spec;
  const box = spec.filters.find((f): f is BoxFilter => f.kind === 'box')!.box;
  let shapes: string[] = [];
  if (files.length > 0) {
    const q = compileShapeCandidates(spec, files, w?.from ?? null, w?.to ?? null);
    const rows = (await c.runAndReadAll(q.sql, q.params)).getRows();
    shapes = rows.filter(([, wkb]) => meets(spec, (wkb as DuckDBBlobValue | null)?.bytes, box)).map(([k]) => String(k));
  }
  const filters = spec.filters.map((f): RowFilter => (f.kind === 'box' ? { ...f, shapes } : f));
  return { ...spec, filters };
}

function meets(spec: QuerySpec, wkb: Uint8Array | undefined, box: BoxFilter['box']): boolean {
  if (!wkb) return false;
  try {
    return shapeMeetsBox(wkb, box);
  } catch {
    throw new DatasetUnavailableError(spec.descriptor.name, 'a geometry is not a readable Polygon or MultiPolygon');
  }
}
