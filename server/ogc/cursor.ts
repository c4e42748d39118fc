import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * Where a keyset walk over a collection continues: rows from `from` on (a time as an ISO instant;
 * null for a dataset without time), and of those only the ones after `after` in the dataset's
 * order (its order key, one text per column), when the page before ended inside one instant.
 */
export interface Cursor {
  from: string | null;
  after: readonly string[] | null;
}

const Wire = z.strictObject({
  v: z.literal(1),
  q: z.string(),
  f: z.string().nullable(),
  a: z.array(z.string()).min(1).max(8).nullable(),
});

/**
 * The query a cursor belongs to: the collection and every parameter that picks rows (not `limit`,
 * `f` or the cursor itself), sorted. A cursor used with another query would skip or repeat rows.
 */
export function cursorScope(collection: string, params: Readonly<Record<string, string>>): string {
  const picked = Object.entries(params)
    .filter(([k]) => k !== 'limit' && k !== 'f' && k !== 'cursor')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify([collection, picked])).digest('base64url').slice(0, 16);
}

/** The cursor as the opaque text a `next` link carries. */
export function encodeCursor(c: Cursor, scope: string): string {
  return Buffer.from(JSON.stringify({ v: 1, q: scope, f: c.from, a: c.after })).toString('base64url');
}

export const RESTART = 'is not a cursor of this query (it may belong to other parameters or to an earlier version of the service): start the walk again without it';

/** The cursor a `next` link carried, or the message of the 400 that tells the client to restart. */
export function decodeCursor(text: string, scope: string): Cursor | string {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return RESTART;
  }
  const parsed = Wire.safeParse(json);
  if (!parsed.success || parsed.data.q !== scope) return RESTART;
  return { from: parsed.data.f, after: parsed.data.a };
}
