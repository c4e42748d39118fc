import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fireApi } from '../helpers/cli.ts';
import { tempDir } from '../helpers/fixtures.ts';

const holder = ['--name', 'Ana Silva', '--institution', 'Univ. Lisboa', '--purpose', 'thesis on WUI fires', '--email', 'ana@example.org'];

describe('fire-api keys', () => {
  it('issue prints the key alone on stdout, details on stderr, and stores only its hash', async () => {
    const file = path.join(await tempDir(), 'keys.json');
    const r = await fireApi(['keys', 'issue', ...holder, '--days', '90'], { KEYS_FILE: file });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('Ana Silva') });
    const key = r.stdout.trim();
    expect(r.stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^frk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    const stored = await readFile(file, 'utf8');
    expect(stored).not.toContain(key.slice(13));
    const record = JSON.parse(stored).keys[0];
    expect(record).toMatchObject({ id: key.slice(4, 12), name: 'Ana Silva', institution: 'Univ. Lisboa', purpose: 'thesis on WUI fires', email: 'ana@example.org', revokedAtUtc: null });
    const days = (Date.parse(record.expiresAtUtc) - Date.parse(record.issuedAtUtc)) / 86_400_000;
    expect(days).toBe(90);
  });

  it('defaults research keys to 365 days and refuses a missing holder detail or a bad expiry', async () => {
    const file = path.join(await tempDir(), 'keys.json');
    await fireApi(['keys', 'issue', ...holder], { KEYS_FILE: file });
    const record = JSON.parse(await readFile(file, 'utf8')).keys[0];
    expect((Date.parse(record.expiresAtUtc) - Date.parse(record.issuedAtUtc)) / 86_400_000).toBe(365);
    const noEmail = await fireApi(['keys', 'issue', ...holder.slice(0, 6)], { KEYS_FILE: file });
    expect(noEmail.code).toBe(2);
    expect(noEmail.stderr).toContain('--email');
    expect((await fireApi(['keys', 'issue', ...holder, '--days', '0'], { KEYS_FILE: file })).code).toBe(2);
    expect(JSON.parse(await readFile(file, 'utf8')).keys).toHaveLength(1);
  });

  it('list, list --json and show never reveal secrets or hashes; revoke marks the key', async () => {
    const file = path.join(await tempDir(), 'keys.json');
    const key = (await fireApi(['keys', 'issue', ...holder], { KEYS_FILE: file })).stdout.trim();
    const id = key.slice(4, 12);
    const { sha256 } = JSON.parse(await readFile(file, 'utf8')).keys[0];
    for (const args of [['keys', 'list'], ['keys', 'list', '--json'], ['keys', 'show', id]]) {
      const r = await fireApi(args, { KEYS_FILE: file });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(id);
      expect(r.stdout).not.toContain(key.slice(13));
      expect(r.stdout).not.toContain(sha256);
    }
    expect(JSON.parse((await fireApi(['keys', 'list', '--json'], { KEYS_FILE: file })).stdout)[0].state).toBe('active');
    expect((await fireApi(['keys', 'revoke', id], { KEYS_FILE: file })).code).toBe(0);
    expect(JSON.parse((await fireApi(['keys', 'show', id], { KEYS_FILE: file })).stdout).state).toBe('revoked');
    expect((await fireApi(['keys', 'revoke', 'zzzzzzzz'], { KEYS_FILE: file })).code).toBe(2);
  });

  it('concurrent issue runs lose no key', async () => {
    const file = path.join(await tempDir(), 'keys.json');
    const runs = await Promise.all(Array.from({ length: 8 }, () => fireApi(['keys', 'issue', ...holder], { KEYS_FILE: file })));
    expect(runs.map((r) => r.code)).toEqual(Array(8).fill(0));
    const ids = JSON.parse(await readFile(file, 'utf8')).keys.map((k: { id: string }) => k.id);
    expect(new Set(ids).size).toBe(8);
    expect(ids.sort()).toEqual(runs.map((r) => r.stdout.trim().slice(4, 12)).sort());
  });
});
