import type { DatasetDescriptor } from '../datasets/index.ts';
import type { DataVersion, Extract } from '../queries/sources/context.ts';
import { formatInstant } from '../queries/instant.ts';
import { META_HEADER, type WireMeta } from '../shared/wire.ts';
import type { DatasetQuery } from './params/query-params.ts';

export type Meta = WireMeta;

export const windowText = (w: { from: bigint; to: bigint } | null) => (w ? { from: formatInstant(w.from), to: formatInstant(w.to) } : null);

/**
 * Every non-window parameter in effect, including what the data decided: the folder value (e.g. the
 * default model) and the correction model applied (null on the raw series, or with none published).
 */
export function effectiveQuery(d: DatasetDescriptor, q: DatasetQuery, decided: Pick<DataVersion, 'folderValue' | 'correction'>): Record<string, string | null> {
  const query = { ...q.echo };
  if (d.folderChoice) query[d.folderChoice.param] = decided.folderValue;
  // Only a response a model shaped names it: raw answers echo what they echoed before models existed.
  if (d.correction && decided.correction) query[d.correction.param] = decided.correction.id;
  return query;
}

/** What the data decided for a response: everything meta says that the query does not. */
export type Answered = Pick<Extract, 'folderValue' | 'correction' | 'truncated' | 'returned' | 'next' | 'observation' | 'dataVersion'>;

export function buildMeta(d: DatasetDescriptor, q: DatasetQuery, x: Answered, rowLimit: number): Meta {
  return {
    dataset: d.name,
    window: windowText(q.window),
    query: effectiveQuery(d, q, x),
    truncated: x.truncated,
    rowLimit,
    returned: x.returned,
    next: windowText(x.next),
    observation: x.observation,
    dataVersion: x.dataVersion,
  };
}

/**
 * The meta block a Parquet or Arrow file carries: without `observation.ageSeconds`, which moves
 * with the clock, so the same request over the same data gives the same file (and SHA-256);
 * `lastSuccessUtc` says the same thing for good.
 */
export function fileMeta(m: Meta): Omit<Meta, 'observation'> & { observation: Omit<Meta['observation'], 'ageSeconds'> } {
  const { ageSeconds: _clock, ...observation } = m.observation;
  return { ...m, observation };
}

/** What meta says, as headers: the only metadata channel of CSV, and handy for GeoJSON clients too. */
export function metaHeaders(m: Meta): Record<string, string> {
  const h: Record<string, string> = {
    [META_HEADER.truncated]: String(m.truncated),
    [META_HEADER.rowLimit]: String(m.rowLimit),
    [META_HEADER.returned]: String(m.returned),
    [META_HEADER.dataVersion]: m.dataVersion,
    // JSON of ASCII-only values (parameters are validated to plain codes), so it is a valid header value.
    [META_HEADER.query]: JSON.stringify(m.query),
  };
  if (m.window) Object.assign(h, { [META_HEADER.windowFrom]: m.window.from, [META_HEADER.windowTo]: m.window.to });
  if (m.next) h[META_HEADER.nextFrom] = m.next.from;
  if (m.observation.lastSuccessUtc) h[META_HEADER.chainLastSuccess] = m.observation.lastSuccessUtc;
  return h;
}
