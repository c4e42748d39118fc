// Seeded randomness for the demo generator. Every stream is derived from (seed, keys...)
// so a day, a station or an event can be regenerated on its own, in any order, and come
// out the same: that is what makes a partition independent of the window it was made in.

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  between(min: number, max: number): number;
  /** Integer in [0, n). */
  int(n: number): number;
  normal(): number;
  /** exp(N(mu, sigma)). */
  logNormal(mu: number, sigma: number): number;
  poisson(mean: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A 32-bit seed for a child stream or for the SQL-side hash. */
  seed32(): number;
}

/** Mixes integers into one 32-bit seed (murmur3 finaliser per step). */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Split so that non-32-bit integers (epoch days * 1e5, negative seeds) keep every bit.
    const low = part | 0;
    const high = Math.floor(part / 4294967296) | 0;
    h = fmix32(h ^ fmix32(low + 0x7f4a7c15));
    h = fmix32(h ^ fmix32(high + 0x2545f491));
  }
  return h >>> 0;
}

function fmix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** mulberry32: tiny, fast and good enough for synthetic data (not for cryptography). */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return {
    next,
    between: (min, max) => min + (max - min) * next(),
    int: (n) => Math.floor(next() * n),
    normal,
    logNormal: (mu, sigma) => Math.exp(mu + sigma * normal()),
    poisson: (mean) => samplePoisson(mean, next, normal),
    chance: (p) => next() < p,
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    seed32: () => Math.floor(next() * 4294967296),
  };
}

/** Shorthand for a stream keyed by (seed, keys...). */
export function rngFor(...keys: number[]): Rng {
  return createRng(mixSeed(...keys));
}

function samplePoisson(mean: number, next: () => number, normal: () => number): number {
  if (mean <= 0) return 0;
  // Knuth's product method is exact but O(mean); above 30 the normal approximation is
  // indistinguishable for event counts.
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal()));
  const limit = Math.exp(-mean);
  let count = 0;
  let product = next();
  while (product > limit) {
    count += 1;
    product *= next();
  }
  return count;
}

/** Rounds so that the expected value is preserved (2.3 -> 2 or 3, 3 with probability 0.3). */
export function roundStochastic(value: number, rng: Rng): number {
  const floor = Math.floor(value);
  return floor + (rng.next() < value - floor ? 1 : 0);
}

/** Weighted choice; weights need not sum to 1. */
export function pickWeighted<T>(items: readonly T[], weightOf: (item: T) => number, rng: Rng): T {
  const total = items.reduce((sum, item) => sum + weightOf(item), 0);
  let target = rng.next() * total;
  for (const item of items) {
    target -= weightOf(item);
    if (target < 0) return item;
  }
  const last = items[items.length - 1];
  if (last === undefined) throw new Error('pickWeighted from an empty list');
  return last;
}
