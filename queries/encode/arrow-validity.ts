/** Zero bits per byte value: nulls in a byte of a validity mask. */
const ZERO_BITS = Uint8Array.from({ length: 256 }, (_, b) => 8 - b.toString(2).replaceAll('0', '').length);

/** The bytes of a bitmap's first `length` bits, the bits after them cleared (a reused bitmap keeps an earlier batch's). */
export function clearPast(bits: Uint8Array, length: number): Uint8Array {
  if (length & 7) bits[length >> 3]! &= (1 << (length & 7)) - 1;
  return bits.subarray(0, (length + 7) >> 3);
}

/**
 * The validity bitmap of one column of a batch under construction. Arrow's bitmap and DuckDB's
 * mask (64-bit words, little-endian) share one layout: bit `i & 7` of byte `i >> 3` is set when
 * row `i` has a value. Whole bytes are copied where both sides are byte-aligned (always, unless a
 * chunk is split at a row that is not a multiple of 8); single bits only at the edges.
 */
export class BatchValidity {
  readonly bits: Uint8Array;
  nulls = 0;

  constructor(capacity: number) {
    this.bits = new Uint8Array((capacity + 7) >> 3);
  }

  /** Rows `[at, at + count)` take the mask's rows `[from, from + count)` (a null mask: every row valid). Returns the nulls among them. */
  copy(mask: Uint8Array | null, from: number, count: number, at: number): number {
    if (!mask) return this.fill(at, count), 0;
    let i = 0;
    let nulls = 0;
    const bit = (j: number) => (mask[(from + j) >> 3]! >> ((from + j) & 7)) & 1;
    for (; i < count && ((at + i) & 7) !== 0; i++) nulls += this.set(at + i, bit(i));
    if (((from + i) & 7) === 0) {
      const bytes = (count - i) >> 3;
      const src = (from + i) >> 3;
      const dst = (at + i) >> 3;
      for (let b = 0; b < bytes; b++) nulls += ZERO_BITS[(this.bits[dst + b] = mask[src + b]!)]!;
      i += bytes << 3;
    }
    for (; i < count; i++) nulls += this.set(at + i, bit(i));
    this.nulls += nulls;
    return nulls;
  }

  /** Whether row `i` has a value. */
  valid(i: number): boolean {
    return ((this.bits[i >> 3]! >> (i & 7)) & 1) === 1;
  }

  /** Calls `each` with every null row in `[at, at + count)`. */
  forEachNull(at: number, count: number, each: (row: number) => void): void {
    for (let i = at; i < at + count; i++) if (this.bits[i >> 3] !== 0xff && !this.valid(i)) each(i);
  }

  /** The bitmap of the first `length` rows (bits past them clear), or null when none is null (as Arrow writers expect). */
  bitmap(length: number): Uint8Array | null {
    return this.nulls ? clearPast(this.bits, length) : null;
  }

  /** Starts the next batch. */
  reset(): void {
    this.nulls = 0;
  }

  private fill(at: number, count: number): void {
    let i = at;
    const end = at + count;
    for (; i < end && (i & 7) !== 0; i++) this.set(i, 1);
    const whole = (end - i) >> 3;
    this.bits.fill(0xff, i >> 3, (i >> 3) + whole);
    for (i += whole << 3; i < end; i++) this.set(i, 1);
  }

  /** Sets or clears one bit; returns 1 for a null. */
  private set(i: number, value: number): number {
    if (value) this.bits[i >> 3]! |= 1 << (i & 7);
    else this.bits[i >> 3]! &= ~(1 << (i & 7));
    return value ? 0 : 1;
  }
}
