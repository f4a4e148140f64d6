import { toUnits } from '../billing/money'
import { invalidRequest } from '../errors'
import type { ResponseCacheSetting } from '../stores/account-types'
import type { ResponseCacheOptions } from '../stores/response-cache'

/** The response cache's defaults (docs/cache.md#configuration). */
export const CACHE_DEFAULTS: Required<ResponseCacheOptions> = {
  enabled: false,
  ttlSeconds: 300,
  maxTtlSeconds: 86_400,
  maxEntryBytes: 1_048_576,
  maxBytesPerOrg: 16_777_216,
  hitFee: '0',
}

const positiveInteger = (value: number) => Number.isInteger(value) && value > 0

/** Fills in and checks the `cache` option: positive whole seconds and bytes, a TTL within the maximum, a fee an exact decimal ≥ 0. */
export function resolveCacheOptions(input: ResponseCacheOptions = {}): Required<ResponseCacheOptions> {
  const resolved = { ...CACHE_DEFAULTS, ...Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) }
  for (const name of ['ttlSeconds', 'maxTtlSeconds', 'maxEntryBytes', 'maxBytesPerOrg'] as const)
    if (!positiveInteger(resolved[name])) throw new TypeError(`model-gateway: \`cache.${name}\` must be a positive whole number`)
  if (resolved.ttlSeconds > resolved.maxTtlSeconds) throw new TypeError('model-gateway: `cache.ttlSeconds` must be at most `cache.maxTtlSeconds`')
  let fee: bigint
  try {
    fee = toUnits(resolved.hitFee)
  } catch {
    fee = -1n
  }
  if (fee < 0n) throw new TypeError('model-gateway: `cache.hitFee` must be an exact decimal of EUR, 0 or more')
  return resolved
}

/** A key's or an org's cache setting checked (docs/cache.md#per-key-and-per-org): `enabled` a boolean, `ttl_seconds` whole seconds up to the maximum; else a 400. */
export function responseCacheSettingOf(setting: ResponseCacheSetting, maxTtlSeconds: number): ResponseCacheSetting {
  if (typeof setting?.enabled !== 'boolean') throw invalidRequest('enabled: must be true or false', 'enabled')
  const ttl = setting.ttl_seconds
  if (ttl !== undefined && !(Number.isInteger(ttl) && ttl >= 1 && ttl <= maxTtlSeconds))
    throw invalidRequest(`ttl_seconds: must be whole seconds from 1 to ${maxTtlSeconds}`, 'ttl_seconds')
  return ttl === undefined ? { enabled: setting.enabled } : { enabled: setting.enabled, ttl_seconds: ttl }
}
