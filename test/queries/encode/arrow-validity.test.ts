import { describe, expect, it } from 'vitest';
import { BatchValidity, clearPast } from '../../../queries/encode/arrow-validity.ts';

/** A deterministic generator, so a failure names the same case on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a * 1664525 + 1013904223) >>> 0;
    return a / 2 ** 32;
  };
}

const bit = (bytes: Uint8Array, i: number) => (bytes[i >> 3]! >> (i & 7)) & 1;

describe('validity of an Arrow batch copied from DuckDB masks', () => {
  it('equals a bit-by-bit copy for every alignment of source and target, with and without a mask', () => {
    const next = random(7);
    const capacity = 300;
    for (let trial = 0; trial < 2000; trial++) {
      const v = new BatchValidity(capacity);
      // Stale bits of an earlier batch: a copy must overwrite them.
      v.bits.fill(trial % 2 ? 0xff : 0x00);
      const model: number[] = [];
      let at = 0;
      let nulls = 0;
      while (at < capacity) {
        const rows = 1 + Math.floor(next() * 200);
        const from = Math.floor(next() * rows);
        const count = Math.min(rows - from, capacity - at, 1 + Math.floor(next() * 90));
        const density = next();
        const mask = next() < 0.2 ? null : Uint8Array.from({ length: Math.ceil(rows / 64) * 8 }, () => (next() < density ? 0xff : Math.floor(next() * 256)));
        const got = v.copy(mask, from, count, at);
        let expected = 0;
        for (let i = 0; i < count; i++) {
          const b = mask ? bit(mask, from + i) : 1;
          model.push(b);
          expected += 1 - b;
        }
        expect(got, `trial ${trial}: nulls of rows ${from}..${from + count} copied to ${at}`).toBe(expected);
        nulls += expected;
        at += count;
      }
      expect(v.nulls).toBe(nulls);
      expect(model.map((_, i) => (v.valid(i) ? 1 : 0)), `trial ${trial}`).toEqual(model);
      const seen: number[] = [];
      v.forEachNull(0, capacity, (i) => seen.push(i));
      expect(seen).toEqual(model.flatMap((b, i) => (b ? [] : [i])));
    }
  });

  it("a batch's bitmap is null without nulls, and clears the bits past its length", () => {
    const v = new BatchValidity(64);
    v.copy(null, 0, 20, 0);
    expect(v.bitmap(20)).toBeNull();
    v.reset();
    v.bits.fill(0xff);
    v.copy(Uint8Array.of(0b11111110, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 0, 11, 0);
    expect([...v.bitmap(11)!]).toEqual([0b11111110, 0b00000111]);
    expect([...clearPast(Uint8Array.of(0xff, 0xff), 16)]).toEqual([0xff, 0xff]);
  });
});
