import type { Format } from '../queries/sql/compile.ts';
import { PARQUET_MEDIA_TYPE } from '../shared/wire.ts';

/** The media type of each response format (the Content-Type sent, and what Accept asks for). */
export const MEDIA_TYPES: Record<Format, string> = {
  csv: 'text/csv; charset=utf-8',
  geojson: 'application/geo+json',
  parquet: PARQUET_MEDIA_TYPE,
  arrow: 'application/vnd.apache.arrow.stream',
};

const COLUMNAR: Record<string, 'parquet' | 'arrow'> = {
  [MEDIA_TYPES.parquet]: 'parquet',
  [MEDIA_TYPES.arrow]: 'arrow',
};

/** Key the cache of a response on: the format chosen from Accept is part of what is sent. */
export const DATA_VARY = 'Accept, Authorization';

interface AcceptEntry {
  type: string;
  q: number;
}

function acceptEntries(accept: string): AcceptEntry[] {
  return accept.split(',').map((part) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return { type, q: Number.isFinite(q) ? q : 0 };
  });
}

/**
 * The response format: `format=csv` is CSV whatever Accept says (v1); otherwise Parquet or Arrow
 * when Accept names one of their media types (the higher q of the two; the first on a tie) and no
 * other entry is preferred to it; GeoJSON for every other Accept, as in v1.
 */
export function negotiateFormat(format: 'csv' | 'geojson', accept: string | undefined): Format {
  if (format === 'csv' || !accept) return format;
  let best: { format: 'parquet' | 'arrow'; q: number } | null = null;
  let otherQ = 0;
  for (const e of acceptEntries(accept)) {
    const columnar = COLUMNAR[e.type];
    if (!columnar) otherQ = Math.max(otherQ, e.q);
    else if (e.q > 0 && (!best || e.q > best.q)) best = { format: columnar, q: e.q };
  }
  return best && best.q >= otherQ ? best.format : format;
}
