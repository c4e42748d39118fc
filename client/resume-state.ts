import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ClientError } from './errors.ts';
import { PageRecord } from './manifest.ts';
import { writeJsonAtomic } from './output-file.ts';

/** What makes two runs the same extract: a resume must not mix windows of different queries. */
export const Identity = z.object({
  service: z.string(),
  dataset: z.string(),
  format: z.enum(['csv', 'geojson', 'parquet']),
  from: z.string().nullable(),
  to: z.string().nullable(),
  parameters: z.record(z.string(), z.string()),
});
export type Identity = z.infer<typeof Identity>;

/** A completed page and where it ends in the partial output: a resume truncates to the last end. */
export const StoredPage = PageRecord.extend({ endOffset: z.number().int().min(0) });
export type StoredPage = z.infer<typeof StoredPage>;

export const ResumeState = z.object({
  stateVersion: z.literal(1),
  identity: Identity,
  startedAtUtc: z.string(),
  rowLimit: z.number().int().nullable(),
  csvHeader: z.string().nullable(),
  query: z.record(z.string(), z.string().nullable()).nullable(),
  pages: z.array(StoredPage),
});
export type ResumeState = z.infer<typeof ResumeState>;

export const newState = (identity: Identity): ResumeState => ({
  stateVersion: 1,
  identity,
  startedAtUtc: new Date().toISOString(),
  rowLimit: null,
  csvHeader: null,
  query: null,
  pages: [],
});

export async function loadState(file: string): Promise<ResumeState | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return null;
  }
  try {
    return ResumeState.parse(JSON.parse(text));
  } catch {
    throw new ClientError(`the resume state ${file} is unreadable; pass --restart to start the extract over`);
  }
}

export const saveState = (file: string, state: ResumeState): Promise<void> => writeJsonAtomic(file, state);

const canonical = (i: Identity) => JSON.stringify([i.service, i.dataset, i.format, i.from, i.to, Object.entries(i.parameters).sort()]);

export const sameIdentity = (a: Identity, b: Identity): boolean => canonical(a) === canonical(b);

export const describeIdentity = (i: Identity): string =>
  [i.dataset, ...(i.from === null ? [] : [`from=${i.from}`, `to=${i.to}`]), `format=${i.format}`, ...Object.entries(i.parameters).map(([k, v]) => `${k}=${v}`), `at ${i.service}`].join(' ');

/**
 * The parameters every request of the walk sends: those given, and the correction model the server
 * applied to the first window when none was given, so that a model published during the walk (or
 * before a verify) never changes the values.
 */
export function walkParameters(s: ResumeState): Record<string, string> {
  const model = s.query?.correctionModel;
  if (typeof model !== 'string' || s.identity.parameters.correctionModel !== undefined) return s.identity.parameters;
  return { ...s.identity.parameters, correctionModel: model };
}

export const rowsDone = (s: ResumeState): number => s.pages.reduce((n, p) => n + p.returned, 0);
