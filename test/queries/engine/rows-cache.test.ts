import { describe, expect, it } from 'vitest';
import { RowsCache } from '../../../queries/engine/rows-cache.ts';

const rows = (n: number) => ({ bytes: Buffer.alloc(n, 0x61), returned: n, dataVersion: `v${n}` });

describe('RowsCache', () => {
  it('answers a key it holds and counts hits and misses', () => {
    const cache = new RowsCache(100, 50);
    cache.set('a', rows(10));
    expect(cache.get('a')?.returned).toBe(10);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.hits, cache.misses, cache.size]).toEqual([1, 1, 10]);
  });

  it('stays within its bytes, dropping the least recently used first', () => {
    const cache = new RowsCache(100, 50);
    cache.set('a', rows(40));
    cache.set('b', rows(40));
    cache.get('a');
    cache.set('c', rows(40));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.returned).toBe(40);
    expect(cache.get('c')?.returned).toBe(40);
    expect(cache.size).toBe(80);
  });

  it('does not keep an entry above its per-entry limit, and replaces an entry under the same key', () => {
    const cache = new RowsCache(100, 50);
    cache.set('big', rows(51));
    expect(cache.get('big')).toBeUndefined();
    cache.set('a', rows(10));
    cache.set('a', rows(20));
    expect([cache.get('a')?.returned, cache.size]).toEqual([20, 20]);
  });

  it('admits a key the second time it is asked for, and forgets the oldest of many keys asked once', () => {
    const cache = new RowsCache(100, 50);
    expect(cache.admit('a')).toBe(false);
    expect(cache.admit('a')).toBe(true);
    for (let i = 0; i < 20_001; i++) cache.admit(`k${i}`);
    expect(cache.admit('k0')).toBe(false);
    expect(cache.admit('k20000')).toBe(true);
  });
});
