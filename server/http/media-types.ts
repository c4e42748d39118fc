import { FORMAT_NAMES, FORMATS, type Format } from '../../queries/formats.ts';
import { preferredMediaType, weightedList } from './weighted-list.ts';

/** The formats Accept chooses, by media type. */
const BY_MEDIA_TYPE = new Map(FORMAT_NAMES.filter((f) => FORMATS[f].negotiation === 'accept').map((f) => [FORMATS[f].mediaType, f]));

/** Key the cache of a response on: the format chosen from Accept and the coding from Accept-Encoding are part of what is sent. */
export const DATA_VARY = 'Accept, Accept-Encoding, Authorization';

/**
 * The response format: `format=csv` is CSV whatever Accept says (v1); otherwise Parquet or Arrow
 * when Accept names one of their media types (the higher q of the two; the first on a tie) and no
 * other entry is preferred to it; GeoJSON for every other Accept, as in v1.
 */
export function negotiateFormat(format: 'csv' | 'geojson', accept: string | undefined): Format {
  if (FORMATS[format].negotiation === 'pinned' || !accept) return format;
  let best: { format: Format; q: number } | null = null;
  let otherQ = 0;
  for (const e of weightedList(accept)) {
    const named = BY_MEDIA_TYPE.get(e.value);
    if (!named) otherQ = Math.max(otherQ, e.q);
    else if (e.q > 0 && (!best || e.q > best.q)) best = { format: named, q: e.q };
  }
  return best && best.q >= otherQ ? best.format : format;
}

/** The JSON the service sends where a page for a person could be sent instead: documents, GeoJSON pages, queryables, the API definition. */
const JSON_TYPES = ['application/json', 'application/geo+json', 'application/schema+json'] as const;

/**
 * Whether Accept weighs `text/html` above every JSON type, as a browser's does. No Accept, one
 * that takes every type alike, a tie, or `text/html;q=0` keep the JSON. The OGC routes decide by
 * it which requests are for a page shell, and so may come without a key: the key hook and the
 * route ask the same function of the same request.
 */
export const prefersHtml = (accept: string | undefined): boolean => preferredMediaType(accept, [...JSON_TYPES, 'text/html']) === 'text/html';
