import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { StagedRow, StageValue } from './values.ts';

/** `\N` is null; every string is quoted, so an empty string stays one. */
export const STAGE_NULL = '\\N';

const field = (v: StageValue): string => {
  if (v === null) return STAGE_NULL;
  if (typeof v === 'string') return `"${v.replaceAll('"', '""')}"`;
  return String(v);
};

/**
 * The rows of every source file, in the contract's schema, as one CSV for DuckDB to load in bulk
 * (faster than appending value by value): source file number, line, partition folder, columns.
 */
export class StageFile {
  private readonly out: WriteStream;
  rows = 0;

  constructor(readonly path: string) {
    this.out = createWriteStream(path, { encoding: 'utf8' });
  }

  /** False when the caller should wait for `drained()` before adding more. */
  add(fileNo: number, line: number, row: StagedRow): boolean {
    this.rows++;
    return this.out.write(`${fileNo},${line},${field(row.dir)},${row.values.map(field).join(',')}\n`);
  }

  async drained(): Promise<void> {
    await once(this.out, 'drain');
  }

  async close(): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
  }
}
