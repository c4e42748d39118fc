import { parseArgs } from 'node:util';
import { UsageError } from '../shared/command-io.ts';
import { issueKey, keyState, revokeKey } from '../server/keys/key-admin.ts';
import { readRegistry, type KeyRecord } from '../server/keys/registry-file.ts';

export const KEYS_USAGE = `  keys issue --name N --institution I --purpose P --email E [--days D]
                             Issue a key (default 365 days); prints the key alone on stdout
  keys revoke ID             Revoke a key (takes effect on running servers within 2 s)
  keys list [--json]         List keys (never their secrets)
  keys show ID               Show one key's holder, dates and state`;

const out = (text: string) => process.stdout.write(text + '\n');
const err = (text: string) => process.stderr.write(text + '\n');

const describe = (r: KeyRecord) => ({ ...r, sha256: undefined, state: keyState(r) });

function required(values: Record<string, string | boolean | undefined>, names: string[]): Record<string, string> {
  const missing = names.filter((n) => typeof values[n] !== 'string' || values[n] === '');
  if (missing.length) throw new UsageError(`keys issue needs ${missing.map((m) => `--${m}`).join(', ')}`);
  return Object.fromEntries(names.map((n) => [n, String(values[n])]));
}

async function issue(file: string, args: string[]): Promise<void> {
  const options = { name: { type: 'string' }, institution: { type: 'string' }, purpose: { type: 'string' }, email: { type: 'string' }, days: { type: 'string' } } as const;
  const { values } = parseArgs({ args, options });
  const holder = required(values, ['name', 'institution', 'purpose', 'email']) as { name: string; institution: string; purpose: string; email: string };
  const days = values.days === undefined ? 365 : Number(values.days);
  if (!Number.isInteger(days) || days < 1) throw new UsageError('--days must be a whole number of days >= 1');
  const { key, record } = await issueKey(file, holder, days);
  err(`issued key ${record.id} for ${record.name} (${record.institution}), expires ${record.expiresAtUtc}`);
  err('the key is shown once, below; only its hash is stored');
  out(key);
}

async function find(file: string, id: string | undefined): Promise<KeyRecord> {
  if (!id) throw new UsageError('give the key id (8 characters, as in `keys list`)');
  const record = (await readRegistry(file)).keys.find((k) => k.id === id);
  if (!record) throw new UsageError(`no key with id ${id}`);
  return record;
}

async function list(file: string, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' } } });
  const keys = (await readRegistry(file)).keys.map(describe);
  if (values.json) return void out(JSON.stringify(keys, null, 2));
  out(['id', 'state', 'expiresAtUtc', 'name', 'institution', 'email'].join('\t'));
  for (const k of keys) out([k.id, k.state, k.expiresAtUtc, k.name, k.institution, k.email].join('\t'));
}

/** `fire-api keys ...`: the operator's side of the key registry in KEYS_FILE. */
export async function keysCommand(file: string, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'issue') return issue(file, rest);
  if (sub === 'list') return list(file, rest);
  if (sub === 'show') return void out(JSON.stringify(describe(await find(file, rest[0])), null, 2));
  if (sub === 'revoke') {
    await find(file, rest[0]);
    const record = await revokeKey(file, rest[0]!);
    return void err(`key ${record?.id} revoked at ${record?.revokedAtUtc}`);
  }
  throw new UsageError(`unknown keys command '${sub ?? ''}'`);
}
