import http from 'node:http';
import type { DayWindow } from '../lib/options.ts';
import { randomInt, randomLogUniform, seededRandom } from '../lib/random.ts';

/** What the soak asks, one kind after another: every format, conditional, refused, missing, coded, paged, abandoned. */
export const SOAK_KINDS = ['csv', 'geojson', 'parquet', 'arrow', 'gzip', 'not-modified', 'bad-parameter', 'not-found', 'ogc-page', 'hang-up'] as const;
export type SoakKind = (typeof SOAK_KINDS)[number];

export interface SoakRequest {
  kind: SoakKind;
  path: string;
  headers: Record<string, string>;
  /** The client closes the socket once this many body bytes arrived (hang-up only). */
  hangUpAfterBytes: number | null;
}

export interface SoakAnswer {
  status: number;
  /** 'hung-up': the client closed the socket mid-body, as asked; 'broken': the server cut it. */
  outcome: 'complete' | 'hung-up' | 'broken';
  etag: string | null;
}

const HOUR_MS = 3_600_000;
const hourText = (ms: number) => new Date(ms).toISOString().slice(0, 19) + 'Z';
const ACCEPT: Partial<Record<SoakKind, string>> = { parquet: 'application/vnd.apache.parquet', arrow: 'application/vnd.apache.arrow.stream' };

/**
 * The soak's requests, drawn from `seed`: 1-hour windows of `dataset` for the formats (as a
 * script polling the last hour asks), a 304 for an ETag seen before, a 400, a 404, an OGC page,
 * and a day of CSV whose client hangs up after 1–64 kB.
 */
export function soakRequests(dataset: string, window: DayWindow, seed: number) {
  const random = seededRandom(seed);
  const fromMs = Date.parse(`${window.from}T00:00:00Z`);
  const hours = Math.max(1, Math.round((Date.parse(`${window.to}T00:00:00Z`) - fromMs) / HOUR_MS));
  const hour = () => fromMs + randomInt(random, 0, hours) * HOUR_MS;
  const base = `/api/v1/${dataset}`;
  return (i: number, etags: ReadonlyMap<string, string>): SoakRequest => {
    const kind = SOAK_KINDS[i % SOAK_KINDS.length]!;
    const t = hour();
    const w = `from=${hourText(t)}&to=${hourText(t + HOUR_MS)}`;
    const plain = { kind, headers: {}, hangUpAfterBytes: null };
    switch (kind) {
      case 'csv':
      case 'gzip':
        return { ...plain, path: `${base}?${w}&format=csv`, headers: kind === 'gzip' ? { 'accept-encoding': 'gzip' } : {} };
      case 'geojson':
      case 'parquet':
      case 'arrow': {
        const accept = ACCEPT[kind];
        return { ...plain, path: `${base}?${w}`, headers: accept ? { accept } : {} };
      }
      case 'not-modified': {
        const seen = [...etags.entries()];
        const [path, etag] = seen[randomInt(random, 0, seen.length)] ?? [`${base}?${w}&format=csv`, 'W/"none"'];
        return { ...plain, path, headers: { 'if-none-match': etag } };
      }
      case 'bad-parameter':
        return { ...plain, path: `${base}?from=yesterday` };
      case 'not-found':
        return { ...plain, path: `/api/v1/nowhere-${i}` };
      case 'ogc-page':
        return { ...plain, path: `/api/v1/ogc/collections/${dataset}/items?limit=50&datetime=${hourText(t)}/${hourText(t + HOUR_MS - 1000)}` };
      case 'hang-up': {
        const day = fromMs + Math.floor((t - fromMs) / (24 * HOUR_MS)) * 24 * HOUR_MS;
        return { ...plain, path: `${base}?from=${hourText(day)}&to=${hourText(day + 24 * HOUR_MS)}&format=csv`, hangUpAfterBytes: randomLogUniform(random, 1024, 65_536) };
      }
    }
  };
}

const TIMEOUT_MS = 120_000;

/** One request on `agent` (keep-alive), its body read to the end, or to the hang-up point and the socket destroyed. */
export function sendSoakRequest(baseUrl: string, agent: http.Agent, r: SoakRequest, auth: Record<string, string>): Promise<SoakAnswer> {
  return new Promise((resolve, reject) => {
    let hungUp = false;
    // A hang-up destroys its socket: it gets one of its own, not one the agent would hand on.
    const request = http.get(`${baseUrl}${r.path}`, { agent: r.hangUpAfterBytes === null ? agent : false, headers: { ...auth, ...r.headers } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (r.hangUpAfterBytes !== null && !hungUp && bytes >= r.hangUpAfterBytes) {
          hungUp = true;
          request.destroy();
        }
      });
      response.on('error', () => {});
      response.on('close', () => {
        const etag = typeof response.headers.etag === 'string' && response.statusCode === 200 ? response.headers.etag : null;
        resolve({ status: response.statusCode ?? 0, outcome: hungUp ? 'hung-up' : response.complete ? 'complete' : 'broken', etag });
      });
    });
    request.on('error', (e) => hungUp || reject(e));
    request.setTimeout(TIMEOUT_MS, () => request.destroy(new Error(`no bytes from the server for ${TIMEOUT_MS / 1000} s`)));
  });
}
