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

/**
 * The weight Accept gives one media type (RFC 9110 §12.5.1): that of the most specific range that
 * matches it (`type/subtype`, else `type/*`, else the range of every type), 0 when none does:
 * `text/html;q=0` refuses HTML however much the range of every type welcomes it.
 */
export function acceptWeight(accept: readonly Weighted[], mediaType: string): number {
  const type = mediaType.slice(0, mediaType.indexOf('/'));
  for (const range of [mediaType, `${type}/*`, '*/*']) {
    const entry = accept.find((e) => e.value === range);
    if (entry) return entry.q;
  }
  return 0;
}

/**
 * Of `offers` (lower-case, in the server's order of preference), the one Accept weighs highest: the
 * first on a tie, and the first when there is no Accept or it accepts none of them (the server then
 * sends its default rather than a 406).
 */
export function preferredMediaType(header: string | undefined, offers: readonly [string, ...string[]]): string {
  if (!header) return offers[0];
  const accept = weightedList(header);
  let best = { offer: offers[0], q: acceptWeight(accept, offers[0]) };
  for (const offer of offers.slice(1)) {
    const q = acceptWeight(accept, offer);
    if (q > best.q) best = { offer, q };
  }
  return best.offer;
}
