/**
 * The gateway's answers as plain JSON values: an in-process answer may hold exact amounts as objects (a number
 * written exactly, docs/chat.md#usage-and-cost) where an HTTP answer holds numbers; the AI SDK's metadata takes JSON only.
 */

// biome-ignore lint/suspicious/noExplicitAny: a JSON value of any shape
export type Json = any

/** An amount as a number, whether the answer holds a number, a decimal text or an exact-number object. */
export function amountOf(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined
  const number = typeof value === 'number' ? value : Number(typeof value === 'object' && 'text' in value ? String(value.text) : String(value))
  return Number.isFinite(number) ? number : undefined
}

/** A value with every non-plain object (an exact number) turned into the number it stands for, and undefined left out. */
export function plainJson(value: unknown): Json {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(plainJson)
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) {
    const primitive = value.valueOf()
    return typeof primitive === 'number' ? primitive : String(value)
  }
  const out: Record<string, Json> = {}
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = plainJson(item)
  return out
}

/** The object without its undefined fields (a body as it would be sent over HTTP). */
export function withoutUndefined<T extends Record<string, unknown>>(value: T): T {
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = item
  return out as T
}
