import { invalidRequest } from '../errors'
import { MAX_JSON_DEPTH } from '../http/json-depth'

/*
 * JSON Schema for Gemini's `parametersJsonSchema` (function declarations) and `responseJsonSchema` (structured
 * output), both of `v1beta`. These fields take JSON Schema itself (`type` arrays for nullable types, `anyOf`,
 * `additionalProperties`, `enum` of strings and numbers, …), unlike the older `parameters` / `responseSchema`
 * fields, which take an OpenAPI 3.0 subset and answer 400 to `additionalProperties`, `$schema`, `const` and the like.
 * So nothing is converted here; the schema is only made self-contained:
 * - `$schema` and `$comment` are dropped (metadata the model does not need);
 * - same-document `$ref`s (`#/$defs/…`, `#/definitions/…`, `#/…`) are inlined, siblings of a `$ref` kept beside it,
 *   and `$defs` / `definitions` removed once nothing points into them;
 * - a recursive `$ref` or one to another document cannot be inlined and is answered 400 (Gemini unrolls cycles
 *   only "to a limited degree", so the gateway refuses them rather than send a schema that means something else);
 * - a schema nested deeper than MAX_JSON_DEPTH once its `$ref`s are inlined is answered 400 too (docs/limits.md).
 */

const MAX_EXPANSIONS = 500
type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A JSON Schema made self-contained for Gemini; `where` names it in errors (`tools[0].function.parameters`). */
export function toGeminiJsonSchema(schema: Json, where: string): Json {
  const budget = { left: MAX_EXPANSIONS }
  const resolved = inline(schema, schema, [], budget, where, 0)
  if (!isObject(resolved)) throw invalidRequest(`${where}: must be a JSON Schema object`, where)
  delete resolved.$defs
  delete resolved.definitions
  return resolved
}

/** The schema of a function's parameters: an object schema (`{}` or a schema with only `properties` counts as one). */
export function toGeminiParameters(parameters: Json, where: string): Json {
  const schema = toGeminiJsonSchema(parameters, where)
  if (schema.type === undefined && !schema.anyOf && !schema.oneOf) schema.type = 'object'
  if (schema.type === 'object' && schema.properties === undefined) schema.properties = {}
  return schema
}

// Keywords whose value is a schema, a list of schemas, or a map of names to schemas; every other keyword is data.
const SCHEMA = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
])
const SCHEMA_LIST = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems'])
const SCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas']) // $defs / definitions: only what a $ref reaches is expanded

function inline(node: unknown, root: Json, stack: string[], budget: { left: number }, where: string, depth: number): unknown {
  if (depth > MAX_JSON_DEPTH) throw invalidRequest(`${where}: nested deeper than ${MAX_JSON_DEPTH} levels once its $refs are inlined`, where)
  const below = (child: unknown) => inline(child, root, stack, budget, where, depth + 1)
  if (Array.isArray(node)) return node.map(below) // `items` as a tuple
  if (!isObject(node)) return node // `true` / `false` schemas
  const ref = node.$ref
  if (typeof ref === 'string') {
    if (!ref.startsWith('#')) throw invalidRequest(`${where}: $ref "${ref}" points outside the schema; Gemini needs a self-contained schema`, where)
    if (stack.includes(ref)) throw invalidRequest(`${where}: $ref "${ref}" is recursive, which Gemini does not support`, where)
    if (--budget.left < 0) throw invalidRequest(`${where}: too many $ref expansions`, where)
    const target = resolvePointer(root, ref)
    if (target === undefined) throw invalidRequest(`${where}: $ref "${ref}" points to nothing in the schema`, where)
    // The target and the siblings take the place of the $ref node: the same depth.
    const expanded = inline(target, root, [...stack, ref], budget, where, depth)
    const siblings: Json = {}
    for (const [key, value] of Object.entries(node)) if (key !== '$ref') siblings[key] = value
    if (!Object.keys(siblings).length) return expanded
    return { ...(isObject(expanded) ? expanded : {}), ...(inline(siblings, root, stack, budget, where, depth) as Json) }
  }
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$comment') continue
    if (SCHEMA.has(key)) out[key] = below(value)
    else if (SCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map(below)
    else if (SCHEMA_MAP.has(key) && isObject(value)) {
      const map: Json = {}
      for (const [name, schema] of Object.entries(value)) map[name] = inline(schema, root, stack, budget, where, depth + 2)
      out[key] = map
    } else out[key] = value
  }
  return out
}

function resolvePointer(root: Json, ref: string): unknown {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  let node: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (!isObject(node) && !Array.isArray(node)) return undefined
    node = (node as Json)[key]
    if (node === undefined) return undefined
  }
  return node
}
