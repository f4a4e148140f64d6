import { sha256Hex } from '../crypto/hash'

// JSON with every object's keys sorted, so that two bodies that differ only in the order of their fields are one request.
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** What a cached answer is keyed by (docs/cache.md#what-is-keyed): the route, the body, its model, the key and whether it streams. */
export interface CacheKeyInput {
  route: string
  body: unknown
  keyHash: string
}

/** The SHA-256 (hex) of a request's canonical JSON key: the storage key below its org's prefix. */
export function cacheKeyOf(input: CacheKeyInput): string {
  const body = (input.body ?? {}) as Record<string, unknown>
  const key = { route: input.route, model: body.model ?? null, stream: body.stream === true, key: input.keyHash, body }
  return sha256Hex(canonical(key))
}
