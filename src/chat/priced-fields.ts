import { PLAIN_TIERS, pricingWithOptions, type PricedOptions } from '../billing/cost'
import { invalidRequest } from '../errors'
import type { ModelPricing } from '../providers/types'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'

/** A request field that changes the provider's price, and whether a model's pricing covers it. */
interface PricedField {
  param: 'service_tier' | 'web_search_options'
  what: string
  priced: (pricing: ModelPricing) => boolean
}

function pricedFieldsOf(request: ChatRequest): PricedField[] {
  const fields: PricedField[] = []
  const tier = request.service_tier
  if (tier != null && !PLAIN_TIERS.has(tier)) {
    fields.push({ param: 'service_tier', what: `service tier "${tier}"`, priced: (pricing) => pricing.service_tiers?.[tier] !== undefined })
  }
  if (request.web_search_options != null) {
    fields.push({ param: 'web_search_options', what: 'web search', priced: (pricing) => pricing.web_search !== undefined })
  }
  return fields
}

/**
 * Fields that change a provider's price (docs/limits.md): `service_tier` other than auto/default,
 * and `web_search_options`. Keeps the attempts whose model the catalogue prices them for, billed at those prices
 * (the tier's prices, web search's once per request); 400 naming the field when no attempt's model prices it.
 */
export function withPricedFields(request: ChatRequest, attempts: Attempt[]): Attempt[] {
  const fields = pricedFieldsOf(request)
  if (!fields.length) return attempts
  const models = [...new Set(attempts.map((a) => a.entry.id))].join(', ')
  for (const field of fields) {
    if (!attempts.some((a) => field.priced(a.offer.model.pricing))) {
      throw invalidRequest(
        `${field.param}: ${field.what} changes the provider's price, and this gateway has no price for it on ${models}; leave it out`,
        field.param,
      )
    }
  }
  const kept = attempts.filter((a) => fields.every((field) => field.priced(a.offer.model.pricing)))
  if (!kept.length) {
    throw invalidRequest(
      `${fields.map((f) => f.param).join(', ')}: no model of this request (${models}) has prices for ${fields.map((f) => f.what).join(' and ')} together; leave one out`,
      fields[0].param,
    )
  }
  const options: PricedOptions = { serviceTier: request.service_tier, webSearch: request.web_search_options != null }
  return kept.map((attempt) => {
    const model = Object.assign({}, attempt.offer.model, { pricing: pricingWithOptions(attempt.offer.model.pricing, options) })
    return Object.assign({}, attempt, { offer: Object.assign({}, attempt.offer, { model }) })
  })
}
