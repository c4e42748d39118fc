import { readFile, stat } from 'node:fs/promises';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { keyState } from './key-admin.ts';
import { hashKey, keyIdOf } from './key-format.ts';
import { RegistryFile, type KeyRecord } from './registry-file.ts';

export type KeyVerdict =
  | { status: 'valid'; id: string }
  | { status: 'revoked' | 'expired'; id: string }
  | { status: 'unknown' };

/**
 * The server's view of KEYS_FILE, reloaded when the file changes (polled, so it works for every
 * instance reading the file, also across NFS and editors that replace the file).
 */
export class KeyRegistry {
  private byId = new Map<string, KeyRecord>();
  private signature = '';
  private timer: NodeJS.Timeout | null = null;
  private reloading = false;

  constructor(private readonly file: string, private readonly log: FastifyBaseLogger) {}

  /** First load: a malformed registry stops the server from starting. */
  async load(): Promise<void> {
    await this.reload(true);
  }

  watch(intervalMs: number): void {
    this.timer = setInterval(() => void this.reload(false), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get size(): number {
    return this.byId.size;
  }

  private async reload(strict: boolean): Promise<void> {
    // Polls overlap when a read is slow; a late one must not undo a newer one.
    if (this.reloading) return;
    this.reloading = true;
    try {
      await this.reloadOnce(strict);
    } finally {
      this.reloading = false;
    }
  }

  private async reloadOnce(strict: boolean): Promise<void> {
    const s = await stat(this.file).catch(() => null);
    const signature = s ? `${s.ino}:${s.size}:${s.mtimeMs}` : 'absent';
    if (signature === this.signature) return;
    try {
      // Read here rather than with readRegistry, which reads a missing file as an empty registry.
      const text = await readFile(this.file, 'utf8').catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e)));
      if (text === null && !strict) {
        // A deleted registry is an operator's accident, not "no keys": keep serving the last good one.
        this.signature = 'absent';
        return this.log.error({ keys: this.byId.size }, 'key registry file is missing; keeping the previous one');
      }
      const registry = text === null ? { keys: [] } : RegistryFile.parse(JSON.parse(text));
      this.byId = new Map(registry.keys.map((k) => [k.id, k]));
      this.signature = signature;
      if (!strict) this.log.info({ keys: this.byId.size }, 'key registry reloaded');
    } catch (e) {
      if (strict) throw new Error(`key registry ${this.file} is not valid: ${(e as Error).message}`);
      // Keep serving with the last good registry rather than locking everyone out.
      this.log.error({ err: e }, 'key registry unreadable; keeping the previous one');
    }
  }

  /** Revoked/expired only once the secret matched: a wrong secret for a real id is just unknown. */
  verify(token: string, nowMs: number): KeyVerdict {
    const id = keyIdOf(token);
    const record = id === null ? undefined : this.byId.get(id);
    if (!record || !sameHash(hashKey(token), record.sha256)) return { status: 'unknown' };
    const state = keyState(record, nowMs);
    return state === 'active' ? { status: 'valid', id: record.id } : { status: state, id: record.id };
  }
}

const sameHash = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
