// The calls between a gateway and its Durable Object (docs/edge.md#the-durable-object-engine): one JSON body per
// operation, `{ op, args }` in and `{ result }` or `{ error }` out, with bigints tagged so that money stays exact.

/** The operations the Durable Object serves: the atomic operations, the holds, and the records' storage calls. */
export const DURABLE_OBJECT_OPS = [
  'addUnits',
  'addUnitsMany',
  'getUnits',
  'increment',
  'setIfAbsent',
  'take',
  'read',
  'compareAndSet',
  'claimAndAddUnits',
  'place',
  'settle',
  'renew',
  'held',
  'hasItem',
  'getItem',
  'setItem',
  'removeItem',
  'getKeys',
  'clear',
] as const

/** One operation's name. */
export type DurableObjectOp = (typeof DURABLE_OBJECT_OPS)[number]

const BIGINT = '$bigint'
const UNDEFINED = '$undefined'
const tagged = (v: unknown, tag: string): v is Record<string, unknown> => typeof v === 'object' && v !== null && tag in v && Object.keys(v).length === 1

/**
 * JSON text of a call or an answer, bigints written as `{ "$bigint": "…" }` and an undefined argument as
 * `{ "$undefined": 1 }` (JSON would make it null, which an engine reads otherwise: a window start of null is not none).
 */
export function encodeCall(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key, v) {
    if (typeof v === 'bigint') return { [BIGINT]: v.toString() }
    return v === undefined && Array.isArray(this) ? { [UNDEFINED]: 1 } : v
  })
}

/** A call or an answer read back from encodeCall's text, bigints and undefined arguments restored. */
export function decodeCall<T>(text: string): T {
  return JSON.parse(text, (_key, v) => (tagged(v, BIGINT) ? BigInt(v[BIGINT] as string) : tagged(v, UNDEFINED) ? undefined : v))
}
