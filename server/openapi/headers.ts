import { z } from 'zod';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { ProblemKind } from '../http/problems.ts';
import { toOpenApiSchema, type SchemaObject } from './schema-convert.ts';
import { UtcTimestamp } from './wire-schemas.ts';

const Seconds = z.int().min(0);
const Count = z.int().min(0);

/** Every response header the API promises; `required` means it comes with every response that lists it. */
const HEADERS: Record<string, { description: string; schema: z.ZodType; required?: boolean }> = {
  'Retry-After': { description: 'Whole seconds to wait before retrying; retrying after that long succeeds unless the cause persists.', schema: Seconds, required: true },
  'WWW-Authenticate': {
    description: 'Bearer and Basic challenges, e.g. `Bearer realm="research-read-api", error="invalid_token", Basic realm="research-read-api", charset="UTF-8"`.',
    schema: z.string(),
    required: true,
  },
  'X-RateLimit-Limit': { description: 'Requests allowed per key and minute.', schema: Count },
  'X-RateLimit-Remaining': {
    description: 'Requests left for this key in the current window. Absent when this request could not be counted (the shared counter store did not answer in time): the request was served and not counted, and what is left is unknown.',
    schema: Count,
  },
  'X-RateLimit-Reset': { description: 'Seconds until the current rate-limit window ends. Absent exactly when X-RateLimit-Remaining is.', schema: Seconds },
  ETag: {
    description: 'Weak validator over dataVersion, the normalised query, the format (the media type chosen by Accept included) and the content coding (a gzip or br body has its own tag). Send it back as If-None-Match to get a 304 without running the query.',
    schema: z.string().regex(/^W\/".*"$/),
    required: true,
  },
  Vary: { description: 'Responses differ per key and, for data, per negotiated media type and content coding: `Accept, Accept-Encoding, Authorization`.', schema: z.string(), required: true },
  'Content-Encoding': {
    description: '`br` or `gzip` when the request\'s Accept-Encoding asked for one (CSV, GeoJSON and Arrow; Parquet is compressed inside and always sent as is). Absent: the body as it is. Every HTTP client that sends Accept-Encoding decodes it.',
    schema: z.enum(['br', 'gzip']),
  },
  'X-Window-From': { description: 'meta.window.from: start of the window used (inclusive).', schema: UtcTimestamp, required: true },
  'X-Window-To': { description: 'meta.window.to: end of the window used (exclusive).', schema: UtcTimestamp, required: true },
  'X-Truncated': { description: 'meta.truncated: `true` when more rows matched than this response holds.', schema: z.enum(['true', 'false']), required: true },
  'X-Next-From': { description: 'meta.next.from: where to continue after a cut (request again with from set to it). Absent when meta.next is null.', schema: UtcTimestamp },
  'X-Row-Limit': { description: 'meta.rowLimit.', schema: Count, required: true },
  'X-Returned': { description: 'meta.returned: rows in this response.', schema: Count, required: true },
  'X-Chain-Last-Success': { description: 'meta.observation.lastSuccessUtc. Absent when the feeding chain never succeeded.', schema: UtcTimestamp },
  'X-Data-Version': { description: 'meta.dataVersion.', schema: z.string().regex(/^sha256:[0-9a-f]{64}$/), required: true },
  'X-Query': {
    description: 'meta.query as compact JSON: every non-window parameter in effect, defaults included (e.g. the model chosen when none was asked for), so a CSV extract records what it is.',
    schema: z.string().regex(/^\{.*\}$/),
    required: true,
  },
};

export function headerComponents(): Record<string, SchemaObject> {
  return Object.fromEntries(
    Object.entries(HEADERS).map(([name, h]) => [name, { description: h.description, required: h.required ?? false, schema: toOpenApiSchema(h.schema) }]),
  );
}

const refs = (...names: string[]): Record<string, SchemaObject> => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

const RATE_LIMIT = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

/** The per-key limit's headers, on every answer behind a key. */
export const rateLimitHeaders = (): Record<string, SchemaObject> => refs(...RATE_LIMIT);

/** Headers of a 200 from a dataset endpoint: meta as headers (the only metadata channel of CSV), caching, limits. */
export function dataHeaders(d: DatasetDescriptor): Record<string, SchemaObject> {
  const window = d.time ? ['X-Window-From', 'X-Window-To', 'X-Next-From'] : [];
  return refs(...window, 'X-Truncated', 'X-Row-Limit', 'X-Returned', 'X-Chain-Last-Success', 'X-Data-Version', 'X-Query', 'ETag', 'Vary', 'Content-Encoding', ...RATE_LIMIT);
}

export const notModifiedHeaders = (): Record<string, SchemaObject> => refs('ETag', 'Vary', ...RATE_LIMIT);

/** Headers that come with each problem kind. */
export const problemHeaders = (): Partial<Record<ProblemKind, Record<string, SchemaObject>>> => ({
  'invalid-parameter': refs(...RATE_LIMIT),
  unauthorized: refs('WWW-Authenticate'),
  'rate-limited': refs('Retry-After', ...RATE_LIMIT),
  unavailable: refs('Retry-After', ...RATE_LIMIT),
});
