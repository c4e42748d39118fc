import { describe, expect, it } from 'vitest';
import { makeCounter } from '../../bench/http/http-run.ts';

// The bench counts the Features it received chunk by chunk: the count must not depend on where the chunks were cut.
describe('bench/http/http-run.ts: counting a needle across chunks', () => {
  const needle = Buffer.from('{"type":"Feature",');
  const body = Buffer.from(`{"type":"FeatureCollection","features":[${Array.from({ length: 40 }, (_, i) => `{"type":"Feature","id":${i},"p":"${'x'.repeat(i % 7)}"}`).join(',')}]}\n`);

  it('every cut of the body into chunks of 1 to 40 bytes counts every Feature once', () => {
    for (let size = 1; size <= 40; size++) {
      for (let offset = 0; offset < size; offset++) {
        const count = makeCounter(needle);
        let n = count(body.subarray(0, offset));
        for (let at = offset; at < body.length; at += size) n += count(body.subarray(at, at + size));
        expect([size, offset, n]).toEqual([size, offset, 40]);
      }
    }
  });

  it('a needle cut at each of its bytes, and empty chunks between, is counted once', () => {
    for (let cut = 1; cut < needle.length; cut++) {
      const count = makeCounter(needle);
      expect(count(Buffer.from('ab')) + count(needle.subarray(0, cut)) + count(Buffer.alloc(0)) + count(needle.subarray(cut)) + count(needle)).toBe(2);
    }
  });
});
