import { createHash, randomBytes, randomInt } from 'node:crypto';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const KEY = /^frk_([a-z0-9]{8})_([A-Za-z0-9_-]{43,})$/;

export interface NewKey {
  /** The secret, shown once to the operator and never stored. */
  key: string;
  id: string;
  sha256: string;
}

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** `frk_<8-char id>_<32 random bytes, base64url>`: the id is public (logs, CLI), the rest is the secret. */
export function generateKey(): NewKey {
  let id = '';
  for (let i = 0; i < 8; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  const key = `frk_${id}_${randomBytes(32).toString('base64url')}`;
  return { key, id, sha256: hashKey(key) };
}

/** The key id of a well-formed key, or null. */
export const keyIdOf = (token: string): string | null => KEY.exec(token)?.[1] ?? null;
