import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { UnreadableFileError } from '../errors.ts';
import { asListed, type DataFile } from './data-file.ts';

const MAGIC = 'PAR1';
/** Bytes of a file's tail read at once: a footer of up to this (nearly every one) costs one read. */
const TAIL_BYTES = 16_384;

/** The footer bytes of an open Parquet file of `size` bytes, from its tail (a second read only for a larger footer). */
async function tailFooter(handle: FileHandle, size: number): Promise<Buffer> {
  if (size < 12) throw new UnreadableFileError('too small to be Parquet');
  const n = Math.min(size, TAIL_BYTES);
  const tail = Buffer.alloc(n);
  await handle.read(tail, 0, n, size - n);
  if (tail.toString('latin1', n - 4) !== MAGIC) throw new UnreadableFileError('no Parquet magic');
  const length = tail.readUInt32LE(n - 8);
  if (length <= 0 || length > size - 12) throw new UnreadableFileError('bad footer length');
  if (length + 8 <= n) return tail.subarray(n - 8 - length, n - 8);
  const footer = Buffer.alloc(length);
  await handle.read(footer, 0, length, size - 8 - length);
  return footer;
}

/** The footer bytes of a Parquet file (schema, row groups, statistics, key-value metadata). */
export async function readFooter(file: DataFile): Promise<Buffer> {
  const handle = await open(file.path, 'r');
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (head.toString('latin1') !== MAGIC) throw new UnreadableFileError('no Parquet magic');
    return await tailFooter(handle, file.size);
  } finally {
    await handle.close();
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Whether the file at `file.path` is still the one listed (see `asListed`) with the
 * footer hashed `footerHash`: one open, its status and one read of its tail (a check after every
 * read of a year's hundreds of files).
 */
export async function sameFooter(file: DataFile, footerHash: string): Promise<boolean> {
  const handle = await open(file.path, 'r').catch(() => null);
  if (!handle) return false;
  try {
    const now = await handle.stat();
    if (!asListed(file, now)) return false;
    return sha256(await tailFooter(handle, file.size)) === footerHash;
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}

/**
 * SHA-256 of a Parquet file's footer (schema, row groups, row counts, statistics). Identical content
 * under another name or time hashes the same; a truncated file fails here, before any byte is sent.
 */
export async function hashFooter(file: DataFile): Promise<string> {
  return sha256(await readFooter(file));
}

/** Fingerprint of a set of files: their footer hashes, sorted, so order and names do not matter. */
export function fingerprint(footerHashes: readonly string[]): string {
  const h = createHash('sha256');
  for (const f of [...footerHashes].sort()) h.update(f);
  return `sha256:${h.digest('hex')}`;
}
