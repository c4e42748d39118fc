import { groupKeyValue, type GroupFooter } from './combine-footers.ts';

interface GroupGeo {
  geometry_types?: string[];
  bbox?: number[];
}

/** The group's own `geo` block as DuckDB wrote it (absent for a group without geometry). */
function groupGeo(g: GroupFooter, column: string): GroupGeo | null {
  const text = groupKeyValue(g.meta, 'geo');
  if (!text) return null;
  const geo = JSON.parse(text) as { columns?: Record<string, GroupGeo> };
  return geo.columns?.[column] ?? null;
}

/**
 * GeoParquet 1.1 file metadata for the combined file: WKB in `column`, CRS84 (GeoParquet's
 * default when `crs` is absent), the geometry types and the bounding box over every group.
 * A file without rows has no box.
 */
export function geoMetadata(groups: readonly GroupFooter[], column: string): string {
  const types = new Set<string>();
  let box: number[] | null = null;
  for (const g of groups) {
    const geo = groupGeo(g, column);
    for (const t of geo?.geometry_types ?? []) types.add(t);
    const b = geo?.bbox;
    if (!b || b.length !== 4) continue;
    box = box ? [Math.min(box[0]!, b[0]!), Math.min(box[1]!, b[1]!), Math.max(box[2]!, b[2]!), Math.max(box[3]!, b[3]!)] : [...b];
  }
  const meta = { encoding: 'WKB', geometry_types: [...types].sort(), ...(box ? { bbox: box } : {}) };
  return JSON.stringify({ version: '1.1.0', primary_column: column, columns: { [column]: meta } });
}
