import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { problemSchemaId } from '../../server/openapi/problem-schemas.ts';
import type { ProblemKind } from '../../server/http/problems.ts';

type Json = { [key: string]: any };

/** One response as the server sent it: what the conformance check needs to know. */
export interface SentResponse {
  method: string;
  /** Fastify's route pattern (`/api/v1/docs/assets/:asset`); undefined when no route matched (404). */
  route: string | undefined;
  status: number;
  headers: Record<string, unknown>;
  /** Body text; null when it was not captured (HEAD, a file stream) or there is none. */
  body: string | null;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * OpenAPI 3.0 Schema Object → JSON Schema for Ajv: `nullable` becomes "or null" (on a typed
 * schema, also for its enum), documentation-only keywords are dropped.
 */
function toJsonSchema(node: unknown, seen = new WeakMap<object, unknown>()): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n, seen));
  if (node === null || typeof node !== 'object') return node;
  if (seen.has(node)) return seen.get(node);
  const out: Json = {};
  seen.set(node, out);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' || key === 'example' || key.startsWith('x-')) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, toJsonSchema(v, seen)])) : key === 'enum' || key === 'default' ? value : toJsonSchema(value, seen);
  }
  if ((node as Json).nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  const orNull = { anyOf: [{ type: 'null' }, out] };
  seen.set(node, orNull);
  return orNull;
}

const baseType = (headers: Record<string, unknown>): string => String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** Checks responses against an OpenAPI 3.0 document: status, headers, media type, JSON body, CSV header row. */
export class ContractChecker {
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly ajv = addFormats(new Ajv({ allErrors: true, strict: true }));

  private constructor(private readonly doc: Json) {}

  static async create(document: unknown): Promise<ContractChecker> {
    return new ContractChecker((await SwaggerParser.dereference(structuredClone(document) as never)) as Json);
  }

  /** The documented response for this request and status, or why there is none. */
  private documented(r: SentResponse): Json | string {
    if (r.route === undefined) return r.status === 404 ? this.doc.components.responses.NotFound : `status ${r.status} for a path no route matches`;
    // A CORS preflight is the browser's protocol, not an operation of the API: an empty 204, or the usual 404.
    if (r.method === 'OPTIONS' && r.route === '/api/v1/*') return r.status === 404 ? this.doc.components.responses.NotFound : r.status === 204 ? { description: 'CORS preflight' } : `status ${r.status} for a CORS preflight`;
    const path = r.route.replace(/:(\w+)/g, '{$1}');
    const op = this.doc.paths[path]?.[r.method === 'HEAD' ? 'get' : r.method.toLowerCase()];
    if (!op) return `route ${r.method} ${path} is not in the document`;
    return op.responses[String(r.status)] ?? op.responses.default ?? `status ${r.status} is not documented for ${r.method} ${path}`;
  }

  check(r: SentResponse): string[] {
    // The HTTP layer's refusal of a request's target or Host may answer any path (the document says so
    // in its overview and in the kind's description): a problem+json of that kind's schema that closes
    // the connection, checked as the parser's refusals are. Any other 400 is an operation's.
    if (r.status === 400 && r.headers.connection === 'close' && r.body !== null && /"code":"malformed-request"/.test(r.body)) {
      const type = String(r.headers['content-type'] ?? '');
      const found = type === 'application/problem+json; charset=utf-8' ? this.checkProblem(r.body) : [`content type '${type}' is not problem+json`];
      return found.map((v) => `${r.method} ${r.route ?? '(no route)'} → 400: ${v}`);
    }
    const response = this.documented(r);
    if (typeof response === 'string') return [response];
    const where = `${r.method} ${r.route ?? '(no route)'} → ${r.status}`;
    return [...this.checkHeaders(r, response), ...this.checkBody(r, response)].map((v) => `${where}: ${v}`);
  }

  /**
   * A problem body sent outside any route (Node's HTTP parser answers before Fastify sees the
   * request): valid when it matches the documented schema of the kind its `type` names.
   */
  checkProblem(body: string): string[] {
    let value: Json;
    try {
      value = JSON.parse(body) as Json;
    } catch {
      return ['problem body is not JSON'];
    }
    const kind = /^\/api\/v1\/docs#problem-([a-z-]+)$/.exec(String(value.type))?.[1];
    const schema = kind === undefined ? undefined : this.doc.components.schemas[problemSchemaId(kind as ProblemKind)];
    if (!schema) return [`problem type ${String(value.type)} is not documented`];
    const validate = this.validator(`problem ${kind}`, schema);
    return validate(value) ? [] : (validate.errors ?? []).slice(0, 5).map((e) => `problem body${e.instancePath} ${e.message}`);
  }

  private checkHeaders(r: SentResponse, response: Json): string[] {
    const documented = new Map(Object.entries((response.headers ?? {}) as Json).map(([name, h]) => [name.toLowerCase(), h as Json]));
    const problems: string[] = [];
    for (const [name, h] of documented) if (h.required && r.headers[name] === undefined) problems.push(`required header ${name} missing`);
    for (const name of Object.keys(r.headers)) if (name.startsWith('x-') && !documented.has(name)) problems.push(`undocumented header ${name}`);
    return problems;
  }

  private checkBody(r: SentResponse, response: Json): string[] {
    const content = response.content as Json | undefined;
    if (!content) return r.body ? ['a body where the document says none'] : [];
    const type = baseType(r.headers);
    const media = content[type] as Json | undefined;
    if (!media) return [`content type '${type}' is not documented (documented: ${Object.keys(content).join(', ')})`];
    if (r.body === null || r.method === 'HEAD') return [];
    if (type === 'text/csv') return this.checkCsv(r.body, media);
    if (!type.endsWith('json')) return [];
    let value: unknown;
    try {
      value = JSON.parse(r.body);
    } catch {
      return ['body is not JSON'];
    }
    const validate = this.validator(`${r.method} ${r.route} ${r.status} ${type}`, media.schema);
    return validate(value) ? [] : (validate.errors ?? []).slice(0, 5).map((e) => `body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }

  private checkCsv(body: string, media: Json): string[] {
    const end = body.indexOf('\n');
    const header = end < 0 ? body : body.slice(0, end);
    const pattern = media['x-csv-header-pattern'] as string | undefined;
    if (pattern !== undefined) return new RegExp(pattern).test(header) ? [] : [`CSV header row '${header}' does not match the documented pattern ${pattern}`];
    const columns = (media['x-csv-columns'] as string[] | undefined)?.join(',');
    if (columns === undefined) return ['CSV media type lists no columns'];
    return header === columns ? [] : [`CSV header row '${header}' is not the documented '${columns}'`];
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let v = this.validators.get(key);
    if (!v) this.validators.set(key, (v = this.ajv.compile(toJsonSchema(schema) as Json)));
    return v;
  }
}
