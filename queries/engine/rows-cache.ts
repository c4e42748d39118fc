const MAX_SEEN = 20_000;

/** The rows of one small response, as sent, with what the response says about them. */
export interface CachedRows {
  bytes: Buffer;
  returned: number;
  dataVersion: string;
}

/**
 * Recently sent small responses' rows, keyed by their entity tag (data version of every file the
 * window depends on + normalised query + format + ROW_LIMIT): a key can only name one content, so
 * new or changed data is a new key and never a stale hit. Bounded by bytes, least recently used
 * first out, and only for a response asked for a second time (most windows are asked once: keeping
 * them would cost a copy and memory for nothing). Everything else in a response (meta, observation
 * age, headers) is built per request.
 */
export class RowsCache {
  private readonly entries = new Map<string, CachedRows>();
  /** Keys asked for once: a response is kept only when its key is asked for again. */
  private readonly seen = new Set<string>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    readonly maxBytes: number,
    /** Larger responses are streamed and not kept. */
    readonly maxEntryBytes: number,
  ) {}

  get size(): number {
    return this.bytes;
  }

  get(key: string): CachedRows | undefined {
    const hit = this.entries.get(key);
    if (!hit) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /** True when `key` was asked for before (its rows are worth keeping); remembers it otherwise. */
  admit(key: string): boolean {
    if (this.seen.delete(key)) return true;
    this.seen.add(key);
    // Oldest first out, so the set stays small however many distinct windows are asked.
    if (this.seen.size > MAX_SEEN) this.seen.delete(this.seen.values().next().value!);
    return false;
  }

  set(key: string, rows: CachedRows): void {
    if (rows.bytes.length > this.maxEntryBytes || rows.bytes.length > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes.length;
    }
    this.entries.set(key, rows);
    this.bytes += rows.bytes.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.bytes.length;
    }
  }
}
