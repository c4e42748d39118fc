import { generateKey } from './key-format.ts';
import { updateRegistry, type KeyRecord } from './registry-file.ts';

export interface Holder {
  name: string;
  institution: string;
  purpose: string;
  email: string;
}

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

/** Creates a key valid for `days`; only its hash reaches the registry. Returns the key once. */
export async function issueKey(file: string, holder: Holder, days: number, nowMs = Date.now()): Promise<{ key: string; record: KeyRecord }> {
  if (!(days > 0)) throw new Error('a research key needs an expiry of at least one day');
  return updateRegistry(file, (registry) => {
    let k = generateKey();
    while (registry.keys.some((r) => r.id === k.id)) k = generateKey();
    const record: KeyRecord = { id: k.id, sha256: k.sha256, ...holder, issuedAtUtc: iso(nowMs), expiresAtUtc: iso(nowMs + days * DAY_MS), revokedAtUtc: null };
    registry.keys.push(record);
    return { key: k.key, record };
  });
}

/** Marks a key revoked (idempotent: an already revoked key keeps its first revocation time). */
export async function revokeKey(file: string, id: string, nowMs = Date.now()): Promise<KeyRecord | null> {
  return updateRegistry(file, (registry) => {
    const record = registry.keys.find((r) => r.id === id);
    if (record && record.revokedAtUtc === null) record.revokedAtUtc = iso(nowMs);
    return record ?? null;
  });
}

export type KeyState = 'active' | 'revoked' | 'expired';

export function keyState(r: KeyRecord, nowMs = Date.now()): KeyState {
  if (r.revokedAtUtc !== null && Date.parse(r.revokedAtUtc) <= nowMs) return 'revoked';
  return Date.parse(r.expiresAtUtc) <= nowMs ? 'expired' : 'active';
}
