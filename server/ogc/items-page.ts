import type { DatasetDescriptor } from '../../datasets/index.ts';
import { FORMATS } from '../../queries/formats.ts';
import { formatInstant, type Instant } from '../../queries/instant.ts';
import type { Extract } from '../../queries/sources/context.ts';
import type { PageShape } from '../params/page-shape.ts';
import { encodeCursor, type Cursor } from './cursor.ts';
import { featureNotFound, OGC_ROOT, type Link } from './documents.ts';
import type { ItemsQuery } from './items-query.ts';

const GEOJSON = 'application/geo+json';

/**
 * Where the walk continues after this page: from the instant the page was cut at, or, when it
 * ended inside one instant (or the collection has no time), after the order key of its last row.
 */
export function nextCursor(d: DatasetDescriptor, x: Pick<Extract, 'next' | 'lastKey'>): Cursor | null {
  if (x.next) return { from: formatInstant(x.next.from), after: null };
  if (d.time && d.orderBy[0] !== d.time.column) throw new Error(`${d.name}: keyset pages need the time first in the order`);
  if (x.lastKey) return { from: d.time ? x.lastKey[0]! : null, after: x.lastKey };
  return null;
}

/** A link as an HTTP Link header field value (RFC 8288). */
const linkHeader = (l: Link) => `<${l.href}>; rel="${l.rel}"; type="${l.type}"`;

/**
 * An items page: a GeoJSON FeatureCollection with `numberReturned` (and `numberMatched` when this
 * page is the whole result), `timeStamp` (when the preflight had read the data's version, whole
 * seconds UTC: the one clock value in the body) and its links (self, alternate, next, collection)
 * before the features, the same links in a Link header.
 */
export function itemsPage(base: string, d: DatasetDescriptor, iq: ItemsQuery, cursor: string | undefined): PageShape {
  const collection = `${base}${OGC_ROOT}/collections/${d.name}`;
  const url = (params: Record<string, string>) => {
    const query = new URLSearchParams(params).toString();
    return `${collection}/items${query ? `?${query}` : ''}`;
  };
  const links = (x: Extract): Link[] => {
    const next = nextCursor(d, x);
    return [
      { href: url({ ...iq.kept, ...(cursor === undefined ? {} : { cursor }) }), rel: 'self', type: GEOJSON, title: 'This page' },
      { href: url({ ...iq.kept, ...(cursor === undefined ? {} : { cursor }), f: 'html' }), rel: 'alternate', type: 'text/html', title: 'This page with a map' },
      ...(next ? [{ href: url({ ...iq.kept, cursor: encodeCursor(next, iq.scope) }), rel: 'next', type: GEOJSON, title: 'The next page' }] : []),
      { href: collection, rel: 'collection', type: 'application/json', title: d.title },
    ];
  };
  // Known only when the first page is the whole result: later pages count only what is left.
  const matched = (x: Extract) => (cursor === undefined && nextCursor(d, x) === null ? `"numberMatched":${x.returned},` : '');
  return {
    rowLimit: iq.limit,
    keyed: true,
    mediaType: GEOJSON,
    framing: (x: Extract, readAt: Instant) => {
      const head = `{"type":"FeatureCollection",${matched(x)}"numberReturned":${x.returned},"timeStamp":"${formatInstant(readAt)}",`;
      return { prefix: `${head}"links":${JSON.stringify(links(x))},"features":[`, suffix: FORMATS.geojson.body.kind === 'text' ? FORMATS.geojson.body.suffix : ']}\n' };
    },
    headers: (x) => ({ link: links(x).map(linkHeader).join(', ') }),
  };
}

/**
 * One Feature (items/{featureId}): the row as an items page has it, with its links (self,
 * alternate, collection: OGC API – Features' /req/core/f-links) added to the object and sent as a
 * Link header too; a 404 when no row has the id.
 */
export function featurePage(base: string, d: DatasetDescriptor, id: string): PageShape {
  const collection = `${base}${OGC_ROOT}/collections/${d.name}`;
  const self = `${collection}/items/${encodeURIComponent(id)}`;
  const links: Link[] = [
    { href: self, rel: 'self', type: GEOJSON, title: 'This feature' },
    { href: `${self}?f=html`, rel: 'alternate', type: 'text/html', title: 'This feature on a map' },
    { href: collection, rel: 'collection', type: 'application/json', title: d.title },
  ];
  return {
    rowLimit: 1,
    keyed: false,
    mediaType: GEOJSON,
    framing: () => ({ prefix: '', suffix: '' }),
    headers: () => ({ link: links.map(linkHeader).join(', ') }),
    refuse: (x) => (x.returned === 0 ? featureNotFound(d) : null),
    rewrite: (text) => {
      const feature = text.trimEnd();
      if (!feature.endsWith('}')) throw new Error(`${d.name}: a Feature's text ends with its closing brace`);
      return `${feature.slice(0, -1)},"links":${JSON.stringify(links)}}\n`;
    },
  };
}
