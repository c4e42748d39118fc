import { Message } from 'apache-arrow';
import { decodeStruct, field } from '../../shared/parquet/thrift-compact.ts';

/**
 * Rows of a Parquet body from its footer (FileMetaData.num_rows), keeping only the body's last
 * chunks: enough for the footer of a year (a few hundred row groups) without holding the file.
 */
export function parquetRowCounter(keepBytes = 8 * 1024 * 1024) {
  const chunks: Buffer[] = [];
  let kept = 0;
  return {
    add(chunk: Buffer): void {
      chunks.push(chunk);
      kept += chunk.length;
      while (chunks.length > 1 && kept - chunks[0]!.length >= keepBytes) kept -= chunks.shift()!.length;
    },
    /** null when the body does not end in a readable footer. */
    rows(): number | null {
      const tail = Buffer.concat(chunks);
      if (tail.length < 12 || tail.subarray(-4).toString('latin1') !== 'PAR1') return null;
      const length = tail.readUInt32LE(tail.length - 8);
      if (length + 8 > tail.length) return null;
      const numRows = field(decodeStruct(tail.subarray(tail.length - 8 - length, tail.length - 8)), 3)?.value;
      return typeof numRows === 'bigint' ? Number(numRows) : null;
    },
  };
}

/**
 * Rows of an Arrow IPC stream, summed from its record-batch messages as they pass: only the
 * message headers are decoded, the bodies are skipped. `ended` once the end-of-stream marker came.
 */
export function arrowRowCounter() {
  let pending: Buffer = Buffer.alloc(0);
  let skip = 0;
  let rows = 0;
  let ended = false;
  const next = (): boolean => {
    if (pending.length < 8) return false;
    const length = pending.readInt32LE(4);
    if (length === 0) {
      ended = true;
      pending = pending.subarray(8);
      return false;
    }
    if (pending.length < 8 + length) return false;
    const message = Message.decode(pending.subarray(8, 8 + length));
    if (message.isRecordBatch()) rows += Number(message.header().length);
    pending = pending.subarray(8 + length);
    skip = Number(message.bodyLength);
    return true;
  };
  return {
    add(chunk: Buffer): void {
      let data = chunk;
      if (skip > 0) {
        const n = Math.min(skip, data.length);
        skip -= n;
        data = data.subarray(n);
      }
      pending = pending.length ? Buffer.concat([pending, data]) : data;
      while (!ended && skip === 0 && next()) {
        const n = Math.min(skip, pending.length);
        skip -= n;
        pending = pending.subarray(n);
      }
    },
    rows: () => (ended ? rows : null),
  };
}
