import { z } from 'zod';

/** A JSON value as it appears in the OpenAPI document. */
export type SchemaObject = { [key: string]: unknown };

export const componentRef = (id: string): string => `#/components/schemas/${id}`;

/** zod bounds every `int()` by the safe-integer range; on the wire that is noise, and wrong for int64 ids. */
const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

/** Keywords whose values are instances, not schemas. */
const DATA_KEYS = new Set(['example', 'default', 'enum']);

/**
 * zod's `openapi-3.0` target, plus what OpenAPI 3.0 still needs: no `$id`, `example` rather than
 * `examples`, null listed in the `enum` of a nullable enum (3.0.3 says `nullable` does not widen
 * an enum by itself), and no artificial safe-integer bounds.
 */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: SchemaObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$id' || key === '$schema') continue;
    if (key === 'examples' && Array.isArray(value)) out.example = value[0];
    else if ((key === 'minimum' && value === -SAFE_BOUND) || (key === 'maximum' && value === SAFE_BOUND)) continue;
    else if (key === 'properties') out[key] = tidyEach(value);
    else out[key] = DATA_KEYS.has(key) ? value : tidy(value);
  }
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

/** Property names are data, not keywords: only the schemas under them are tidied. */
const tidyEach = (properties: unknown): unknown =>
  Object.fromEntries(Object.entries(properties as SchemaObject).map(([name, schema]) => [name, tidy(schema)]));

/** One zod schema as an inline OpenAPI 3.0 Schema Object (`input` for request parameters, `output` for responses). */
export function toOpenApiSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): SchemaObject {
  return tidy(z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'throw' })) as SchemaObject;
}

/** Every schema of `registry` as a named component; schemas that use each other are linked by `$ref`. */
export function toComponentSchemas(registry: z.core.$ZodRegistry<{ id: string }>): Record<string, SchemaObject> {
  const { schemas } = z.toJSONSchema(registry, { target: 'openapi-3.0', uri: componentRef, unrepresentable: 'throw' });
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, tidy(s) as SchemaObject]));
}
