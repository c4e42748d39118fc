import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { UnreadableFileError } from '../errors.ts';
import type { DataFile } from './data-file.ts';

const MAGIC = 'PAR1';

/** The footer bytes of a Parquet file (schema, row groups, statistics, key-value metadata). */
export async function readFooter(file: DataFile): Promise<Buffer> {
  if (file.size < 12) throw new UnreadableFileError('too small to be Parquet');
  const handle = await open(file.path, 'r');
  try {
    const tail = Buffer.alloc(8);
    await handle.read(tail, 0, 8, file.size - 8);
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (tail.toString('latin1', 4) !== MAGIC || head.toString('latin1') !== MAGIC) throw new UnreadableFileError('no Parquet magic');
    const length = tail.readUInt32LE(0);
    if (length <= 0 || length > file.size - 12) throw new UnreadableFileError('bad footer length');
    const footer = Buffer.alloc(length);
    await handle.read(footer, 0, length, file.size - 8 - length);
    return footer;
  } finally {
    await handle.close();
  }
}

/**
 * SHA-256 of a Parquet file's footer (schema, row groups, row counts, statistics). Identical content
 * under another name or time hashes the same; a truncated file fails here, before any byte is sent.
 */
export async function hashFooter(file: DataFile): Promise<string> {
  return createHash('sha256').update(await readFooter(file)).digest('hex');
}

/** Fingerprint of a set of files: their footer hashes, sorted, so order and names do not matter. */
export function fingerprint(footerHashes: readonly string[]): string {
  const h = createHash('sha256');
  for (const f of [...footerHashes].sort()) h.update(f);
  return `sha256:${h.digest('hex')}`;
}
