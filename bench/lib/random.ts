/**
 * mulberry32, a small seeded generator: the "random" windows and abort points are the same in
 * every run, so two runs of the bench ask the server exactly the same things and compare.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** An integer in [min, max). */
export const randomInt = (random: () => number, min: number, max: number): number => min + Math.floor(random() * (max - min));

/** Log-uniform in [min, max]: as many small values as large ones per doubling, so both ends of the range get exercised. */
export const randomLogUniform = (random: () => number, min: number, max: number): number =>
  Math.round(Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min))));
