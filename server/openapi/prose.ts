import type { DatasetDescriptor } from '../../datasets/index.ts';
import { csvHeader } from '../../queries/sql/compile.ts';

/** What a schema cannot say; numbers that the configuration decides are filled in. */
export interface ProseLimits {
  rowLimit: number;
  rateLimitPerMinute: number;
}

const OVERVIEW = `Read-only access to fire data for research: satellite active-fire detections, burnt-area perimeters, Fire Weather Index series and a ground sensor network. Five data endpoints answer GeoJSON (RFC 7946) with a \`meta\` block, or CSV with \`format=csv\`. All timestamps are ISO 8601 in UTC.

## Keys
Every data request carries a key: \`Authorization: Bearer <key>\`. Keys are issued by the operator on request (name, institution, purpose); they are personal and time-limited. No key, a malformed header or an unknown key: **401**. A revoked or expired key: **403**. A key anywhere else (e.g. the query string) is ignored. The documentation and the operating endpoints need no key.

## Rate limit
{rateLimitPerMinute} data requests per minute per key, counting every data request whatever its status. Beyond it: **429** with \`Retry-After\` in whole seconds. Data responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`. When the service could not count a request (its shared counter did not answer in time), it serves it uncounted and the response carries \`X-RateLimit-Limit\` only: no remaining count or reset time is made up. Failed authentications are limited per client address.

## Time windows
\`from\` and \`to\` take \`YYYY-MM-DD\` (00:00 UTC) or \`YYYY-MM-DDTHH:MM[:SS[.ffffff]]\` with \`Z\`, \`±HH:MM\` or no offset (UTC). The window is **half-open, [from, to)**: a row exactly at \`from\` is included, a row exactly at \`to\` is not, so adjacent windows never share a row. \`from\` must be before \`to\`. Omitted \`to\` is now (whole seconds); omitted \`from\` is \`to\` minus the dataset's default span. The window used is always echoed in \`meta.window\` and in \`X-Window-From\` / \`X-Window-To\`. Pass both for reproducible extracts.

## Parameters
Unknown parameters and repeated parameters are a **400** naming the parameter: a typo never widens a result silently. \`format=csv\` selects CSV; any other value, or none, gives GeoJSON.

## Filters
Each dataset documents its own. \`bbox=minLon,minLat,maxLon,maxLat\` (degrees, CRS84, as in OGC API Features; edges included) keeps hotspots whose pixel centre lies in the box and burnt areas whose perimeter meets it exactly (not only its envelope; a box inside a hole of the perimeter does not meet it). A box with minLon greater than maxLon crosses the antimeridian. \`simulated=true|false\` and \`stationId=ID[,ID...]\` (at most 100 ids) filter the sensor datasets: a citable dataset uses \`simulated=false\`. \`country\` on burnt-areas is the EFFIS code (e.g. \`EL\`, \`UK\`), \`areaCode\` on fire-danger the ISO or NUTS code. Every filter in effect is echoed in \`meta.query\` and \`X-Query\` and is part of the ETag; a truncated response counts the filtered rows, and \`next.from\` continues the filtered walk.

## Truncation and continuation
A response holds at most \`rowLimit\` rows ({rowLimit} on this server). Rows are totally ordered (time, then a key), so the same request over the same data gives the same rows in the same order. When more rows match, the cut falls on a time boundary: the response holds every row with time in [from, next.from) and nothing else, \`meta.truncated\` is \`true\` and \`meta.next\` (header \`X-Next-From\`) says where to go on. Request again with \`from=next.from\` and the same \`to\`: walking the window this way returns every row exactly once. There is no offset parameter. Only when more than \`rowLimit\` rows share the first instant does the response hold the first \`rowLimit\` of them (by order key) with \`next: null\`; narrow the query then.

## 200 versus 503
A **200** with an empty collection (or a header-only CSV) means the service looked and found nothing. A **503** means it did not look: the data could not be read, the feeding chain is down, the service is at capacity (every connection busy and the wait queue full, or the temporary disk budget spent), or the time budget ran out before the first byte. At capacity, the 503 comes after a short hold (a client that retries at once is paced, not served faster), and \`Retry-After\` is the time the queue still takes to drain at the pace measured over the last seconds. Never treat the two as the same. A response whose stream fails after it started is aborted (a broken transfer), never ended cleanly short; so is one whose data files change while it is sent. Downloads may be slow: the time budget counts the service's own work, not the transfer, and a download is only cut when the client takes nothing for a while (a minute by default). \`meta.observation\` says whether the feeding chain ran and how old its last success is.

## CSV
\`text/csv; charset=utf-8\`, one header row, LF line ends, RFC 4180 quoting, the columns of each dataset in the documented order. Null is an empty field; booleans are \`true\`/\`false\`; timestamps \`YYYY-MM-DDTHH:MM:SSZ\` (fraction only when non-zero); numbers in shortest round-trip form. What \`meta\` says travels in the \`X-\` headers.

## Parquet and Arrow
Without \`format=csv\`, \`Accept: application/vnd.apache.parquet\` gives Parquet and \`Accept: application/vnd.apache.arrow.stream\` an Arrow IPC stream; any other \`Accept\` gives GeoJSON, and \`format=csv\` always gives CSV. The columns are the CSV columns in the same order with their types (timestamps as UTC timestamps in microseconds, numbers as numbers); hotspots, burnt-areas and sensor-stations add \`geometry\` (WKB, CRS84; GeoParquet 1.1 \`geo\` metadata with the file's bbox, GeoArrow \`geoarrow.wkb\` in Arrow). The \`X-\` headers are those of CSV, and \`meta\` is also in the file: Parquet key-value metadata and Arrow schema metadata under \`fire_api:meta\` (without \`observation.ageSeconds\`, which moves with the clock). Rows, order, counts, cuts and failures behave as for CSV; the same request over the same data gives the same bytes.

## Caching
Data responses carry a weak \`ETag\` (same data version, same normalised query, same format, the media type chosen by \`Accept\` included) and \`Vary: Accept, Authorization\`. Send \`If-None-Match\` with it: **304** without a body and without running the query when nothing changed.

## Problems
Errors are RFC 9457 \`application/problem+json\` bodies: \`type\`, \`title\`, \`status\`, \`detail\`, \`instance\`, \`requestId\`, \`code\` (the kind's short name, e.g. \`invalid-parameter\`, as OGC API – Features 1.0 clients read it), and \`errors\` (one per parameter, the first 10; \`detail\` counts the rest) on an \`invalid-parameter\` 400. Requests the HTTP layer rejects before any route are problems too: \`malformed-request\` (400, not valid HTTP, or a missing, repeated or invalid \`Host\`, or a target that is not a path), \`headers-too-large\` (431) and \`request-timeout\` (408, the request did not arrive in time); the connection is closed after them. A method other than GET or HEAD is a 404, whatever its body (\`CONNECT\` too). \`type\` links to the kind's entry on the documentation page (\`/api/v1/docs#problem-<kind>\`). Within v1, status codes, problem types and codes are never removed, renamed or reinterpreted.

## Versioning
\`/v1\` is a stability promise: fields, parameters, enum values and error codes are never removed, renamed or reinterpreted; extensions are strictly additive. A breaking change gets a new prefix \`/v2\`.

Every GET endpoint also answers HEAD (headers only).`;

export const overview = (l: ProseLimits): string =>
  OVERVIEW.replace('{rateLimitPerMinute}', String(l.rateLimitPerMinute)).replace('{rowLimit}', String(l.rowLimit));

const curl = (path: string) => `curl -H "Authorization: Bearer $API_KEY" "$BASE_URL${path}"`;

/** Example requests for one dataset, with parameter values that exist in the data when known. */
function examples(d: DatasetDescriptor, folderValues: readonly string[]): string[] {
  const base = `/api/v1/${d.name}`;
  const window = d.time ? 'from=2025-08-01&to=2025-08-02' : '';
  const values: [string, string | undefined][] = [
    ...d.filters.map((f): [string, string | undefined] => [f.param, f.example ?? f.allowed?.at(-1)]),
    ...(d.bbox ? [['bbox', '-9.5,38.5,-8.5,39.5'] as [string, string]] : []),
    ...d.options.map((o): [string, string | undefined] => [o.param, o.allowed.at(-1)]),
    ...(d.folderChoice ? [[d.folderChoice.param, folderValues.at(-1)] as [string, string | undefined]] : []),
  ];
  const extra = values.filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  const q = (parts: string[]) => (parts.filter(Boolean).length ? `?${parts.filter(Boolean).join('&')}` : '');
  return [...new Set([q([window]), q([window, ...extra]), q([window, 'format=csv'])])].map((query) => curl(`${base}${query}`));
}

export function datasetDescription(d: DatasetDescriptor, folderValues: readonly string[]): string {
  const window = d.time
    ? `Time column \`${d.time.column}\`; default window: the ${d.time.defaultDays} day(s) before \`to\`. Rows are ordered by ${d.orderBy.map((c) => `\`${c}\``).join(', ')}.`
    : `No time window. Rows are ordered by ${d.orderBy.map((c) => `\`${c}\``).join(', ')}.`;
  return `${d.description}

${window}

CSV columns, in order: \`${csvHeader(d).trim()}\`.

Examples:
\`\`\`sh
${examples(d, folderValues).join('\n')}
\`\`\``;
}
