import { wireColumns, type Column } from '../../../datasets/index.ts';
import { featureRows, type QuerySpec, type RowSelect } from '../../../queries/sql/compile.ts';
import { ident, numberText, sqlString, timestampText } from '../../../queries/sql/sql.ts';

/**
 * The GeoJSON Feature SQL as it was when v1's GeoJSON bytes were fixed (json_object over values
 * cast to JSON), kept only as the reference the product's Feature text must equal byte for byte:
 * citations record a hash of the features' bytes, so the same window must keep the same bytes.
 */

const col = (name: string) => `t.${ident(name)}`;

function valueExpr(c: Column, spec: QuerySpec, params: string[]): string {
  if (!c.computed) return col(c.name);
  // The reference knows no correction model: the raw series, correctionModel null.
  if (c.computed.kind === 'correctionModel') return 'CAST(NULL AS VARCHAR)';
  params.push(spec.params[c.computed.param] ?? '');
  return `CAST($${params.length} AS VARCHAR)`;
}

function jsonValue(c: Column, expr: string): string {
  if (c.type === 'TIMESTAMPTZ') return timestampText(expr);
  if (c.type === 'DOUBLE') return `(${numberText(expr)})::JSON`;
  return expr;
}

const pointJson = (lat: string, lon: string) =>
  `CASE WHEN isfinite(${lat}) AND isfinite(${lon}) THEN '{"type":"Point","coordinates":[' || ${numberText(lon)} || ',' || ${numberText(lat)} || ']}' ELSE 'null' END`;

function featureColumns(spec: QuerySpec, params: string[]): string {
  const d = spec.descriptor;
  const props = wireColumns(d).map((c) => `${sqlString(c.name)}, ${jsonValue(c, valueExpr(c, spec, params))}`);
  const id = d.featureId ? `'"id":' || coalesce(to_json(${col(d.featureId)}), 'null') || ','` : `''`;
  const head = `'{"type":"Feature",' || ${id} || '"geometry":'`;
  const tail = `',"properties":' || json_object(${props.join(', ')}) || '}'`;
  const g = d.geometry;
  if (g.kind === 'wkb') return `${head} AS head, ST_AsWKB(${col(g.column)}) AS wkb, ${tail} AS tail`;
  const stations = spec.stationFiles !== null && spec.stationFiles.length > 0;
  const geometry = g.kind === 'point' ? pointJson(col(g.latitude), col(g.longitude)) : g.kind === 'station' && stations ? pointJson('s.lat', 's.lon') : `'null'`;
  return `${head} || ${geometry} || ${tail} AS feature`;
}

/** The reference Feature rows, with the product's own join (the station lookup is not what is compared). */
export const referenceFeatureRows: RowSelect = (spec, params) => ({ fields: featureColumns(spec, params), join: featureRows(spec, []).join });
