import { PLAIN_GEOS, PLAIN_SPEEDS } from '../billing/cost'
import type { PricedField } from '../chat/priced-fields'
import { invalidRequest } from '../errors'
import type { MessagesRequest } from '../schemas/messages'

/*
 * The fields of Anthropic's Messages API that change what Anthropic charges (docs/money.md#priced-options) and that
 * chat has no field for: they matter only when the request is passed on natively (docs/native.md#messages), and are
 * priced from the catalogue or refused (400 naming the field), as chat's `service_tier` is.
 */

/** Anthropic's `service_tier` values passed on: both bill the standard price (Priority Tier is a contract of the operator's account). */
const SERVICE_TIERS: ReadonlySet<string> = new Set(['auto', 'standard_only'])

type Json = Record<string, unknown>

// True when a cache_control anywhere in the request (top level, system, tools, messages' blocks, tool results' blocks)
// asks for a one-hour write.
function asksHourWrites(value: unknown, depth = 0): boolean {
  if (!value || typeof value !== 'object' || depth > 64) return false
  if (Array.isArray(value)) return value.some((item) => asksHourWrites(item, depth + 1))
  const object = value as Json
  const cache = object.cache_control as Json | null | undefined
  if (cache && typeof cache === 'object' && cache.ttl === '1h') return true
  for (const key of ['system', 'messages', 'tools', 'content'])
    if (object[key] && typeof object[key] === 'object' && asksHourWrites(object[key], depth + 1)) return true
  return false
}

/** The priced fields of a Messages request: `speed` (fast mode), `inference_geo`, one-hour cache writes; 400 for a `service_tier` not passed on. */
export function messagesPricedFields(request: MessagesRequest): PricedField[] {
  const fields: PricedField[] = []
  const { speed, inference_geo: geo, service_tier: tier } = request
  if (tier != null && !SERVICE_TIERS.has(tier))
    throw invalidRequest(`service_tier: "${tier}" is not taken; send "auto" or "standard_only" (or leave it out)`, 'service_tier')
  if (speed != null && !PLAIN_SPEEDS.has(speed)) {
    fields.push({ param: 'speed', what: `speed "${speed}"`, priced: (pricing) => pricing.speeds?.[speed] !== undefined, option: { speed } })
  }
  if (geo != null && !PLAIN_GEOS.has(geo)) {
    fields.push({
      param: 'inference_geo',
      what: `inference_geo "${geo}"`,
      priced: (pricing) => pricing.inference_geos?.[geo] !== undefined,
      option: { inferenceGeo: geo },
    })
  }
  if (asksHourWrites(request)) {
    fields.push({ param: 'cache_control.ttl', what: 'one-hour cache writes (ttl "1h")', priced: (pricing) => pricing.input_cache_write_1h !== undefined })
  }
  return fields
}
