import duckdb from '@duckdb/node-bindings';

/**
 * The smallest memory page of any platform Node runs on. Two valid strings less than a page apart
 * leave no whole page between them, so every byte between them lies on a page that holds part of
 * one of them: mapped, and safe to read.
 */
const PAGE = 4096;
/** The most bytes read at once for a run of strings. */
const MAX_RUN = 1 << 20;
const WORD = 2 ** 32;

/**
 * The strings of a chunk that DuckDB keeps out of line (longer than 12 bytes: ids, product names,
 * WKB), copied into a batch's data buffer with one native read per run of strings that lie close
 * together in DuckDB's memory (they usually do: a Parquet page, a sort block) instead of one per
 * string, which cost more than everything else in an Arrow batch together. A run grows only by
 * strings less than a page from it, so it never spans a page without a string's byte on it.
 */
export class OutOfLineStrings {
  private readonly pointers: Float64Array;
  private readonly lengths: Int32Array;
  private readonly targets: Int32Array;
  private count = 0;
  /** A `string_t` pointer of our own, pointing at a run's first byte, for the bindings' read. */
  private readonly pointer = new Uint32Array(2);

  constructor(capacity: number) {
    this.pointers = new Float64Array(capacity);
    this.lengths = new Int32Array(capacity);
    this.targets = new Int32Array(capacity);
  }

  /** The string of `string_t` number `row` (words: the vector's data as 32-bit words) goes to `target`. */
  add(words: Uint32Array, row: number, length: number, target: number): void {
    this.pointers[this.count] = words[row * 4 + 2]! + words[row * 4 + 3]! * WORD;
    this.lengths[this.count] = length;
    this.targets[this.count++] = target;
  }

  /** Copies every string added into `data` at its target, and forgets them. */
  copyInto(data: Uint8Array): void {
    let first = 0;
    let [lo, hi] = [0, 0];
    for (let i = 0; i < this.count; i++) {
      const start = this.pointers[i]!;
      const end = start + this.lengths[i]!;
      const [from, to] = [Math.min(lo, start), Math.max(hi, end)];
      if (i > first && start - hi < PAGE && lo - end < PAGE && to - from <= MAX_RUN) [lo, hi] = [from, to];
      else {
        if (i > first) this.copyRun(data, first, i, lo, hi);
        [first, lo, hi] = [i, start, end];
      }
    }
    if (this.count > first) this.copyRun(data, first, this.count, lo, hi);
    this.count = 0;
  }

  private copyRun(data: Uint8Array, first: number, end: number, lo: number, hi: number): void {
    this.pointer[0] = lo % WORD;
    this.pointer[1] = Math.floor(lo / WORD);
    const run = duckdb.get_data_from_pointer(this.pointer.buffer as ArrayBuffer, 0, hi - lo);
    for (let i = first; i < end; i++) {
      const at = this.pointers[i]! - lo;
      const length = this.lengths[i]!;
      const target = this.targets[i]!;
      if (length > 64) data.set(run.subarray(at, at + length), target);
      else for (let b = 0; b < length; b++) data[target + b] = run[at + b]!;
    }
  }
}
