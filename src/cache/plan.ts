import type { GatewayContext } from '../context'
import { invalidRequest } from '../errors'
import type { Principal } from '../stores/account-types'
import { cacheKeyOf } from './key'

/** The request header that turns the cache on (`true`) or off (`false`) for one request (docs/cache.md#headers). */
export const CACHE_HEADER = 'x-openrouter-cache'
/** The request header of a TTL in seconds, and the response header that echoes the TTL used. */
export const CACHE_TTL_HEADER = 'x-openrouter-cache-ttl'
/** The response header saying whether the answer came from the cache: `HIT` or `MISS`. */
export const CACHE_STATUS_HEADER = 'x-openrouter-cache-status'

/** A request the cache serves: its hash below its org, and how long its answer is kept. */
export interface CachePlan {
  orgId: string
  hash: string
  ttlSeconds: number
}

// The TTL a request names, checked: whole seconds from 1 to the maximum; else the 400 that says so.
function ttlOf(header: string, max: number): number {
  const ttl = /^\d+$/.test(header.trim()) ? Number(header.trim()) : Number.NaN
  if (!(ttl >= 1 && ttl <= max)) throw invalidRequest(`${CACHE_TTL_HEADER}: must be whole seconds from 1 to ${max}`, CACHE_TTL_HEADER)
  return ttl
}

/**
 * Whether the cache serves this request, and how (docs/cache.md#turning-it-on): `X-OpenRouter-Cache: true` or `false`
 * first, else the key's setting, its org's, then the `cache` option; the TTL from `X-OpenRouter-Cache-TTL`, else the
 * key's, the org's, the option's. A request with its own provider keys is never cached. 400 for a bad header value.
 */
export function cachePlanOf(ctx: GatewayContext, headers: Headers, principal: Principal, route: string, body: unknown): CachePlan | undefined {
  const options = ctx.options.cache
  const header = headers.get(CACHE_HEADER)?.trim().toLowerCase()
  if (header !== undefined && header !== 'true' && header !== 'false') throw invalidRequest(`${CACHE_HEADER}: must be true or false`, CACHE_HEADER)
  const setting = principal.key.response_cache ?? principal.org.response_cache
  const on = header === undefined ? (setting?.enabled ?? options.enabled) : header === 'true'
  const ttlHeader = headers.get(CACHE_TTL_HEADER)
  const ttlSeconds = ttlHeader !== null ? ttlOf(ttlHeader, options.maxTtlSeconds) : Math.min(setting?.ttl_seconds ?? options.ttlSeconds, options.maxTtlSeconds)
  if (!on || principal.providerKeys) return undefined
  return { orgId: principal.org.id, hash: cacheKeyOf({ route, body, keyHash: principal.key.hash }), ttlSeconds }
}
