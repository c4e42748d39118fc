// Checks of OGC API – Features – Part 1: Core 1.0.1 responses, written from its requirement
// classes (core, geojson): each returns what is wrong, named by the requirement it breaks.

export type Json = Record<string, any>;
interface Answer {
  status: number;
  type: string;
  link: string;
  body: Json;
}

const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
const GREGORIAN = 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const GEOMETRY_TYPES = ['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon'];

export const rels = (links: unknown): string[] => (Array.isArray(links) ? links.map((l: Json) => String(l.rel)) : []);

/** Links: an array of objects with an absolute `href` and a `rel`, and a `type` where given. */
function checkLinks(links: unknown, where: string): string[] {
  if (!Array.isArray(links)) return [`${where}: links is not an array`];
  return links.flatMap((l: Json, i) => {
    const wrong: string[] = [];
    if (typeof l.href !== 'string' || !/^https?:\/\//.test(l.href)) wrong.push(`${where}: links[${i}].href is not an absolute URL`);
    if (typeof l.rel !== 'string' || l.rel === '') wrong.push(`${where}: links[${i}].rel missing`);
    if (l.type !== undefined && typeof l.type !== 'string') wrong.push(`${where}: links[${i}].type is not a string`);
    return wrong;
  });
}

/** /req/core/root-success: links to the API definition, the conformance declaration and the collections. */
export function checkLanding(body: Json): string[] {
  const r = rels(body.links);
  const wrong = checkLinks(body.links, '/req/core/root-success');
  if (!r.includes('service-desc') && !r.includes('service-doc')) wrong.push('/req/core/root-success: no service-desc or service-doc link');
  for (const rel of ['conformance', 'data']) if (!r.includes(rel)) wrong.push(`/req/core/root-success: no ${rel} link`);
  return wrong;
}

/** /req/core/fc-md-items, fc-md-extent: an id, links with items, and extents in CRS84 and the Gregorian calendar. */
export function checkCollection(c: Json, base: string): string[] {
  const wrong = checkLinks(c.links, `/req/core/fc-md-links ${c.id}`);
  if (typeof c.id !== 'string') wrong.push('/req/core/fc-md-items: id is not a string');
  const items = (c.links as Json[]).find((l) => l.rel === 'items');
  if (items?.href !== `${base}/api/v1/ogc/collections/${c.id}/items`) wrong.push(`/req/core/fc-md-items: ${c.id} has no items link to its items`);
  const spatial = c.extent?.spatial;
  if (spatial) {
    if (spatial.crs !== undefined && spatial.crs !== CRS84) wrong.push(`/req/core/fc-md-extent: ${c.id} spatial crs ${spatial.crs}`);
    for (const box of spatial.bbox as number[][]) {
      const [w, s, e, n] = box.length === 6 ? [box[0], box[1], box[3], box[4]] : box;
      const ok = (box.length === 4 || box.length === 6) && box.every(Number.isFinite) && Math.abs(w!) <= 180 && Math.abs(e!) <= 180 && Math.abs(s!) <= 90 && Math.abs(n!) <= 90 && s! <= n!;
      if (!ok) wrong.push(`/req/core/fc-md-extent: ${c.id} bbox ${JSON.stringify(box)}`);
    }
  }
  const temporal = c.extent?.temporal;
  if (temporal) {
    if (temporal.trs !== undefined && temporal.trs !== GREGORIAN) wrong.push(`/req/core/fc-md-extent: ${c.id} trs ${temporal.trs}`);
    for (const interval of temporal.interval as unknown[][]) {
      const ok = interval.length === 2 && interval.every((t) => t === null || (typeof t === 'string' && RFC3339.test(t))) && (interval[0] === null || interval[1] === null || Date.parse(interval[0] as string) <= Date.parse(interval[1] as string));
      if (!ok) wrong.push(`/req/core/fc-md-extent: ${c.id} interval ${JSON.stringify(interval)}`);
    }
  }
  return wrong;
}

/** RFC 7946 as /req/geojson/content asks: a geometry object of a known type with positions of 2 or 3 numbers, or null. */
function checkGeometry(g: unknown): boolean {
  if (g === null) return true;
  const o = g as Json;
  if (typeof o !== 'object' || !GEOMETRY_TYPES.includes(o.type)) return false;
  const depth = { Point: 0, MultiPoint: 1, LineString: 1, MultiLineString: 2, Polygon: 2, MultiPolygon: 3 }[o.type as string]!;
  const positions = (x: unknown, d: number): boolean => (d === 0 ? Array.isArray(x) && (x.length === 2 || x.length === 3) && x.every(Number.isFinite) : Array.isArray(x) && x.every((y) => positions(y, d - 1)));
  return positions(o.coordinates, depth);
}

/** /req/geojson/content: a GeoJSON Feature, with an id that is a string or a number when there is one. */
function checkGeoJsonFeature(f: Json, where: string): string[] {
  const wrong: string[] = [];
  if (f.type !== 'Feature') wrong.push(`${where}: type is not Feature`);
  if (!checkGeometry(f.geometry)) wrong.push(`${where}: geometry is not GeoJSON`);
  if (f.properties !== null && (typeof f.properties !== 'object' || Array.isArray(f.properties))) wrong.push(`${where}: properties is not an object`);
  if (f.id !== undefined && typeof f.id !== 'string' && typeof f.id !== 'number') wrong.push(`${where}: id is neither string nor number`);
  return wrong;
}

/**
 * /req/core/fc-response, fc-links, fc-timeStamp, fc-numberMatched, fc-numberReturned,
 * fc-limit-response-1, /req/geojson/content: an items page; `before`/`after` bound when it was read (ms).
 */
export function checkItems(page: Answer, o: { limit: number; before: number; after: number }): string[] {
  const b = page.body;
  const wrong = checkLinks(b.links, '/req/core/fc-links');
  if (page.status !== 200 || page.type !== 'application/geo+json') wrong.push(`/req/geojson/content: ${page.status} ${page.type}`);
  if (b.type !== 'FeatureCollection' || !Array.isArray(b.features)) return [...wrong, '/req/core/fc-response: not a FeatureCollection'];
  const r = rels(b.links);
  if (!r.includes('self') || !r.includes('alternate')) wrong.push('/req/core/fc-links: self and alternate links missing');
  if ((b.links as Json[]).find((l) => l.rel === 'self')?.type !== 'application/geo+json') wrong.push('/req/core/fc-links: self is not application/geo+json');
  if (b.numberReturned !== b.features.length) wrong.push('/req/core/fc-numberReturned: not the number of features');
  if (b.numberMatched !== undefined && !(Number.isInteger(b.numberMatched) && b.numberMatched >= b.numberReturned)) wrong.push('/req/core/fc-numberMatched: fewer than returned');
  if (b.features.length > o.limit) wrong.push(`/req/core/fc-limit-response-1: ${b.features.length} features, limit ${o.limit}`);
  const t = Date.parse(b.timeStamp);
  if (typeof b.timeStamp !== 'string' || !RFC3339.test(b.timeStamp) || !b.timeStamp.endsWith('Z') || !(t >= o.before && t <= o.after)) wrong.push(`/req/core/fc-timeStamp: ${b.timeStamp}`);
  if (!page.link.includes('rel="self"')) wrong.push('Link header lacks self');
  return [...wrong, ...(b.features as Json[]).flatMap((f, i) => checkGeoJsonFeature(f, `/req/geojson/content features[${i}]`))];
}

/** /req/core/f-success, /req/core/f-links: one Feature, its id the one asked for, links self, alternate and collection. */
export function checkFeature(answer: Answer, collection: string, id: string): string[] {
  const f = answer.body;
  const wrong = [...checkLinks(f.links, '/req/core/f-links'), ...checkGeoJsonFeature(f, '/req/geojson/content')];
  if (answer.status !== 200 || answer.type !== 'application/geo+json') wrong.push(`/req/geojson/content: ${answer.status} ${answer.type}`);
  if (String(f.id) !== String(id)) wrong.push(`/req/core/f-success: id ${f.id}, asked for ${id}`);
  const href = (rel: string) => (f.links as Json[] | undefined)?.find((l) => l.rel === rel)?.href;
  const self = `${collection}/items/${encodeURIComponent(id)}`;
  if (href('self') !== self) wrong.push(`/req/core/f-links: self ${href('self')}`);
  if (typeof href('alternate') !== 'string') wrong.push('/req/core/f-links: no alternate');
  if (href('collection') !== collection) wrong.push(`/req/core/f-links: collection ${href('collection')}`);
  for (const rel of ['self', 'alternate', 'collection']) if (!answer.link.includes(`rel="${rel}"`)) wrong.push(`Link header lacks ${rel}`);
  return wrong;
}

/** The exception of 1.0.1 (`code` required, `description` optional) and the RFC 9457 problem of the 1.1 draft, in one body. */
export function checkException(answer: Answer): string[] {
  const b = answer.body;
  const wrong: string[] = [];
  if (!answer.type.startsWith('application/problem+json')) wrong.push(`exception media type ${answer.type}`);
  if (typeof b.code !== 'string' || b.code === '') wrong.push('exception: code missing');
  if (b.status !== answer.status || typeof b.type !== 'string' || typeof b.title !== 'string' || typeof b.detail !== 'string') wrong.push('problem: type, title, status or detail missing');
  if (b.description !== undefined && typeof b.description !== 'string') wrong.push('exception: description is not a string');
  return wrong;
}
