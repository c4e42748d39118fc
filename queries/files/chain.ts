import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

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

/** Reads `_chain.json`: absent means "no chain reported" (still served); unreadable or available:false means 503. */
export async function readChain(datasetDir: string, nowMs: number): Promise<ChainState> {
  let text: string;
  try {
    text = await readFile(path.join(datasetDir, CHAIN_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { available: true, observation: { chainRan: false, lastSuccessUtc: null, ageSeconds: null } };
    return { available: false, reason: 'chain status unreadable' };
  }
  let parsed: z.infer<typeof ChainFile>;
  try {
    parsed = ChainFile.parse(JSON.parse(text));
  } catch {
    return { available: false, reason: 'chain status malformed' };
  }
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
