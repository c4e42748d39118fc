import { FORMAT_NAMES, FORMATS, type Format } from '../queries/formats.ts';
import { weightedList } from './weighted-list.ts';

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
