import { closeSync, openSync, readSync } from 'node:fs';
import { readRows } from '../aggregate-codec.ts';
import type { AggregateColumn, AggregateRow } from '../aggregate-rows.ts';
import type { Spool, SpooledPart } from './aggregate-spool.ts';

/** Bytes read back from a spool at a time. */
const READ_BYTES = 1 << 15;
/** Groups handed on per batch. */
const BATCH_ROWS = 256;

/**
 * One part's groups, at most `most` of them, a batch at a time. The part must hold them all and
 * end on a whole group: anything else throws (a short part is never filled by the next one's).
 */
function* readPart(spool: Spool, part: SpooledPart, columns: readonly AggregateColumn[], most: number): Generator<AggregateRow[]> {
  const want = Math.min(part.rows, most);
  const fd = openSync(part.path, 'r');
  // Read from the open file, gone from the folder: nothing is left to remove once the read ends, however it ends.
  spool.forget(part.path);
  try {
    let [buffer, held, offset, read] = [Buffer.allocUnsafe(READ_BYTES), 0, 0, 0];
    // Read on the event loop a buffer at a time: each read is short, and the groups are sent between reads.
    while (read < want) {
      if (held === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)]);
      const n = readSync(fd, buffer, held, buffer.length - held, offset);
      if (n === 0) break;
      [held, offset] = [held + n, offset + n];
      const { rows, at } = readRows(columns, buffer.subarray(0, held), 0, want - read);
      for (let i = 0; i < rows.length; i += BATCH_ROWS) yield rows.slice(i, i + BATCH_ROWS);
      read += rows.length;
      held -= at;
      buffer.copy(buffer, 0, at, at + held);
    }
    if (read < want || (want === part.rows && held > 0)) throw new Error(`an aggregate part held ${read} whole groups of the ${want} sent from it`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The spooled parts' groups in order, `count` of them, a batch at a time, read back from disk once
 * (a cut answer stops at the cut). Reading fewer than `count` throws: the transfer is cut, never
 * ended short. The spool is disposed when the read ends, however it ends.
 */
export function* readSpool(spool: Spool, parts: readonly SpooledPart[], columns: readonly AggregateColumn[], count: number): Generator<AggregateRow[]> {
  let left = count;
  try {
    for (const part of parts) {
      if (left === 0) break;
      yield* readPart(spool, part, columns, left);
      left -= Math.min(part.rows, left);
    }
    if (left > 0) throw new Error(`the aggregate's spool held ${count - left} of the ${count} groups sent`);
  } finally {
    spool.dispose();
  }
}
