import { z } from 'zod';
import { LISTED_PARAMETER_ERRORS, PROBLEM_KINDS, problemType, type ProblemKind } from '../http/problems.ts';
import type { SchemaObject } from './schema-convert.ts';

export const PROBLEM_KIND_NAMES = Object.keys(PROBLEM_KINDS) as ProblemKind[];

/** When each kind is sent; the same words appear on the documentation page next to the kind's anchor. */
export const PROBLEM_WHEN: Record<ProblemKind, string> = {
  'invalid-parameter': 'A parameter is malformed, unknown, repeated, or names a value the data does not have (e.g. a model). `errors` names each one (the first 10; `detail` counts the rest). No query ran.',
  unauthorized: 'No key, a malformed Authorization header, or a key the service does not know. Comes with `WWW-Authenticate: Bearer`.',
  forbidden: 'The key is known but revoked or expired. Ask the operator for a new one.',
  'not-found': 'No resource at this path (for example a misspelt dataset, or a method other than GET or HEAD, CONNECT included).',
  'method-not-allowed': 'Reserved; not sent by v1 today (other methods answer 404).',
  'malformed-request': 'The request is not valid HTTP (a control byte in a header, an unknown or lowercase method, Transfer-Encoding with Content-Length, a malformed URL), or its target or Host is not one this server takes: an HTTP/1.1 request without Host, more than one Host, a Host that is not a valid `host[:port]`, a target that is not a path (absolute-form: this server is not a proxy). Sent by the HTTP layer on any path before the route runs, with `instance` empty when the path could not be read; the connection is closed.',
  'request-timeout': 'The request (headers and any body) did not arrive completely within `REQUEST_TIMEOUT_MS` (30 s by default). The connection is closed.',
  'headers-too-large': 'The request line and headers exceed 16 kB (for example a very long URL or Authorization header). The connection is closed.',
  'rate-limited': 'More than the per-key limit of requests per minute, or too many failed authentications from one address. Retry after `Retry-After` seconds.',
  unavailable: 'The service did not look: the dataset folder is missing or unreadable, the feeding chain reports itself unavailable, a file in the window is unreadable or does not match the schema, a correction model file cannot be read or is invalid (the corrected series and the list of models only; the raw series answers as before), the service is at capacity (every connection busy with a full queue, or its temporary disk budget spent; `Retry-After` is then the time the queue, or the budget, takes to drain at the current pace), or the query ran out of time before the first byte. Not an empty result. Retry after `Retry-After` seconds.',
  internal: 'An unexpected error. Quote the requestId when reporting it.',
};

const ParameterError = z.object({
  parameter: z.string().meta({ description: 'Name of the offending query parameter.' }),
  message: z.string().meta({ description: 'What is wrong with it.' }),
});

const pascal = (kind: string) => kind.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

/** Component id of a problem kind's body schema and of its response. */
export const problemSchemaId = (kind: ProblemKind): string => `${pascal(kind)}Problem`;
export const problemResponseId = (kind: ProblemKind): string => pascal(kind);

/** The RFC 9457 body of one problem kind; type, title and status are fixed per kind within v1. */
export function problemSchema(kind: ProblemKind) {
  const { status, title } = PROBLEM_KINDS[kind];
  const errors = kind === 'invalid-parameter' ? { errors: z.array(ParameterError).min(1).max(LISTED_PARAMETER_ERRORS).meta({ description: `One entry per offending parameter, at most ${LISTED_PARAMETER_ERRORS}; \`detail\` says how many more there were.` }) } : {};
  return z
    .object({
      type: z.literal(problemType(kind)).meta({ description: 'Stable problem type: a link to this kind on the documentation page.' }),
      title: z.literal(title),
      status: z.literal(status),
      detail: z.string().meta({ description: 'What happened, for a person; never SQL, file paths or engine messages.' }),
      instance: z.string().meta({ description: 'Path of the request, without the query string.' }),
      requestId: z.string().meta({ description: 'Id of the request in the service logs.' }),
      code: z.literal(kind).meta({ description: 'The problem kind\'s short name, stable within v1 (the end of `type`): the `code` of OGC API – Features\' exception.' }),
      ...errors,
    })
    .meta({ description: `application/problem+json (RFC 9457), kind ${kind}. ${PROBLEM_WHEN[kind]}` });
}

/** components.responses: one per kind, with the headers that come with it. */
export function problemResponses(headers: Partial<Record<ProblemKind, Record<string, SchemaObject>>>): Record<string, SchemaObject> {
  return Object.fromEntries(
    PROBLEM_KIND_NAMES.map((kind) => [
      problemResponseId(kind),
      {
        description: `${PROBLEM_KINDS[kind].title}. ${PROBLEM_WHEN[kind]}`,
        ...(headers[kind] ? { headers: headers[kind] } : {}),
        content: { 'application/problem+json': { schema: { $ref: `#/components/schemas/${problemSchemaId(kind)}` } } },
      },
    ]),
  );
}
