// EFFIS burnt-area perimeters (GeoJSON or shapefile features) to the burnt-areas schema:
// attributes by their EFFIS names, geometry as WKT for DuckDB to store as GeoParquet WKB.

import { open as openFile, readFile } from 'node:fs/promises';
import type { Feature, Geometry, Position } from 'geojson';
import * as shapefile from 'shapefile';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { FileProblem, RowProblem, typedRow, type StageValue } from './values.ts';

/** A feature of a source file and where it is (1-based), for reports. */
export interface SourceFeature {
  line: number;
  feature: Feature;
}

const ring = (positions: Position[]): string => `(${positions.map((p) => `${p[0]} ${p[1]}`).join(', ')})`;
const polygon = (rings: Position[][]): string => `(${rings.map(ring).join(', ')})`;

/** Polygon and MultiPolygon (the perimeter types EFFIS delivers) as WKT; anything else is a bad row. */
export function geometryWkt(geometry: Geometry | null): string {
  if (geometry?.type === 'Polygon' && geometry.coordinates.length > 0) return `POLYGON ${polygon(geometry.coordinates)}`;
  if (geometry?.type === 'MultiPolygon' && geometry.coordinates.length > 0) return `MULTIPOLYGON (${geometry.coordinates.map(polygon).join(', ')})`;
  throw new RowProblem(`geometry: ${geometry ? `${geometry.type}` : 'none'}, expected a Polygon or MultiPolygon`);
}

/** Attribute text: dates from a shapefile (local midnight as the reader builds them) are that calendar day, UTC. */
function attributeText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) {
    const day = (n: number) => String(n).padStart(2, '0');
    return `${value.getFullYear()}-${day(value.getMonth() + 1)}-${day(value.getDate())}`;
  }
  return String(value);
}

export function effisRow(feature: Feature): StageValue[] {
  const properties = feature.properties ?? {};
  const wkt = geometryWkt(feature.geometry);
  return typedRow(burntAreas, (name) => (name === 'geometry' ? wkt : attributeText(properties[name])));
}

export async function* readGeoJson(file: string): AsyncGenerator<SourceFeature> {
  let parsed: { type?: unknown; features?: unknown };
  try {
    parsed = JSON.parse(await readFile(file, 'utf8')) as typeof parsed;
  } catch (e) {
    throw new FileProblem(`not JSON: ${(e as Error).message}`);
  }
  if (parsed.type !== 'FeatureCollection' || !Array.isArray(parsed.features)) throw new FileProblem('not a GeoJSON FeatureCollection');
  let line = 0;
  for (const feature of parsed.features as Feature[]) yield { line: ++line, feature };
}

/** Perimeters are stored in CRS84: a shapefile in a projected system would need reprojecting first. */
async function checkProjection(shp: string): Promise<void> {
  const prj = shp.replace(/\.shp$/i, '.prj');
  const handle = await openFile(prj, 'r').catch(() => null);
  if (!handle) return;
  try {
    const text = (await handle.readFile('utf8')).trim();
    if (!text.startsWith('GEOGCS[') || !/WGS.?(19)?84/i.test(text)) throw new FileProblem('coordinates are not WGS 84 longitude/latitude (.prj): reproject to EPSG:4326 first');
  } finally {
    await handle.close();
  }
}

export async function* readShapefile(file: string): AsyncGenerator<SourceFeature> {
  await checkProjection(file);
  const source = await shapefile.open(file, file.replace(/\.shp$/i, '.dbf'), { encoding: 'utf-8' }).catch((e: Error) => {
    throw new FileProblem(`unreadable shapefile: ${e.message}`);
  });
  let line = 0;
  for (let next = await source.read(); !next.done; next = await source.read()) yield { line: ++line, feature: next.value };
}
