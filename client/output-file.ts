import { createReadStream } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { writeFileAtomic } from '../shared/atomic-file.ts';

const FLUSH_BYTES = 1 << 20;

/**
 * The partial output: appends are buffered and written at explicit positions, so a failed page
 * can be cut off again (`truncate`) and a resumed run can continue from a recorded offset.
 */
export class OutputFile {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  private constructor(
    private readonly handle: FileHandle,
    private written: number,
  ) {}

  /** Opens `file` keeping its first `keepBytes` bytes (0: a fresh file). */
  static async open(file: string, keepBytes: number): Promise<OutputFile> {
    const handle = await open(file, keepBytes > 0 ? 'r+' : 'w');
    await handle.truncate(keepBytes);
    return new OutputFile(handle, keepBytes);
  }

  /** Bytes appended so far, buffered ones included. */
  get size(): number {
    return this.written + this.pendingBytes;
  }

  append(data: Buffer | string): void {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
  }

  async drain(): Promise<void> {
    if (this.pendingBytes >= FLUSH_BYTES) await this.flush();
  }

  async truncate(size: number): Promise<void> {
    this.pending = [];
    this.pendingBytes = 0;
    await this.handle.truncate(size);
    this.written = size;
  }

  /** Everything appended is on disk before the resume state may point past it. */
  async sync(): Promise<void> {
    await this.flush();
    await this.handle.datasync();
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  private async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const bytes = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    await this.handle.write(bytes, 0, bytes.length, this.written);
    this.written += bytes.length;
  }
}

export async function fileSize(file: string): Promise<number | null> {
  return stat(file).then(
    (s) => s.size,
    () => null,
  );
}

export async function sha256File(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** JSON (indented, final newline) written atomically: see writeFileAtomic. */
export const writeJsonAtomic = (file: string, value: unknown): Promise<void> => writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n');
