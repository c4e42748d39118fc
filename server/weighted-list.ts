/** One entry of an Accept-style header (RFC 9110 §12.4.2): its value, lower-cased, and its weight. */
export interface Weighted {
  value: string;
  /** 1 unless `q=` says otherwise; 0 when `q` is not a number. */
  q: number;
}

/** The comma-separated entries of Accept or Accept-Encoding, parameters other than `q` dropped; empty entries kept. */
export function weightedList(header: string): Weighted[] {
  return header.split(',').map((part) => {
    const [value = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return { value, q: Number.isFinite(q) ? q : 0 };
  });
}
