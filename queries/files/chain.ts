import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { FolderListings } from './folder-listings.ts';

/** The feeding chain's status file, in each dataset's folder beside the data. */
export const CHAIN_FILE = '_chain.json';

const ChainFile = z.object({
  lastRunUtc: z.string().datetime({ offset: true }).nullable().optional(),
  lastSuccessUtc: z.string().datetime({ offset: true }).nullable().optional(),
  available: z.boolean().optional(),
  message: z.string().optional(),
});

export interface Observation {
  chainRan: boolean;
  lastSuccessUtc: string | null;
  ageSeconds: number | null;
}

export type ChainState = { available: true; observation: Observation } | { available: false; reason: string };

const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

type Parsed = { ok: true; value: z.infer<typeof ChainFile> } | { ok: false };

async function parseChain(file: string): Promise<Parsed> {
  const text = await readFile(file, 'utf8');
  try {
    return { ok: true, value: ChainFile.parse(JSON.parse(text)) };
  } catch {
    return { ok: false };
  }
}

/**
 * Reads `_chain.json`: absent means "no chain reported" (still served); unreadable or
 * available:false means 503. With `listings`, what was read is kept while the file is unchanged
 * (one `stat` a request instead of an open, a read and a close).
 */
export async function readChain(datasetDir: string, nowMs: number, listings?: FolderListings): Promise<ChainState> {
  const file = path.join(datasetDir, CHAIN_FILE);
  let read: Parsed;
  try {
    read = await (listings ? listings.ofFile(file, 'chain', () => parseChain(file)) : parseChain(file));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { available: true, observation: { chainRan: false, lastSuccessUtc: null, ageSeconds: null } };
    return { available: false, reason: 'chain status unreadable' };
  }
  if (!read.ok) return { available: false, reason: 'chain status malformed' };
  const parsed = read.value;
  if (parsed.available === false) return { available: false, reason: 'feeding data chain reports unavailable' };
  const successMs = parsed.lastSuccessUtc ? Date.parse(parsed.lastSuccessUtc) : null;
  return {
    available: true,
    observation: {
      chainRan: Boolean(parsed.lastRunUtc),
      lastSuccessUtc: successMs === null ? null : isoSeconds(successMs),
      ageSeconds: successMs === null ? null : Math.max(0, Math.floor((nowMs - successMs) / 1000)),
    },
  };
}
