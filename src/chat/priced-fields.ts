import type { MaxPrice } from '../routing/planner/preferences'
import { PLAIN_TIERS, pricingForPrompt, pricingWithOptions, type PricedOptions } from '../billing/cost'
import { GatewayError, invalidRequest } from '../errors'
import type { ModelPricing } from '../contracts'
import { priceAboveMax, type Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import { maxPromptTokens } from './max-cost'

/**
 * A request field (or header) that changes the provider's price (docs/money.md#priced-options): the parameter it is
 * named by in a 400, what it asks for, whether a model's pricing covers it, and the option billing prices it with.
 */
export interface PricedField {
  param: string
  what: string
  priced: (pricing: ModelPricing) => boolean
  option?: PricedOptions
}

// Output modalities chat bills: text. Audio output (`modalities: ["audio"]`, `audio`) is priced per audio token, far
// above text, and no catalogue price covers it.
const BILLED_MODALITIES: ReadonlySet<string> = new Set(['text'])

/** The priced fields of a chat request: `service_tier` other than auto/default, `web_search_options`, audio output. */
export function pricedFieldsOf(request: ChatRequest): PricedField[] {
  const fields: PricedField[] = []
  const tier = request.service_tier
  if (tier != null && !PLAIN_TIERS.has(tier)) {
    fields.push({
      param: 'service_tier',
      what: `service tier "${tier}"`,
      priced: (pricing) => pricing.service_tiers?.[tier] !== undefined,
      option: { serviceTier: tier },
    })
  }
  if (request.web_search_options != null) {
    fields.push({ param: 'web_search_options', what: 'web search', priced: (pricing) => pricing.web_search !== undefined, option: { webSearch: true } })
  }
  const loose = request as Record<string, unknown>
  const modalities = Array.isArray(loose.modalities) ? (loose.modalities as unknown[]) : []
  // Image output (OpenRouter's `modalities: ["image", "text"]`) is priced per image output token: only models with an
  // `image_output` price take it (docs/images.md#images-in-chat).
  if (modalities.includes('image')) fields.push({ param: 'modalities', what: 'image output', priced: (pricing) => pricing.image_output !== undefined })
  const audio = modalities.find((m) => typeof m !== 'string' || !(BILLED_MODALITIES.has(m) || m === 'image'))
  if (audio !== undefined || loose.audio != null) {
    fields.push({ param: audio !== undefined ? 'modalities' : 'audio', what: `${audio ?? 'audio'} output`, priced: () => false })
  }
  return fields
}

/**
 * Fields that change a provider's price (docs/money.md#priced-options): the chat request's own (`service_tier`,
 * `web_search_options`, audio output) and `extra` ones of another client API (Anthropic's `speed`, `inference_geo`,
 * one-hour cache writes). Keeps the attempts whose model the catalogue prices them for, billed at those prices; 400
 * naming the field when no attempt's model prices it. `maxPrice` (default the request's `provider.max_price`) bounds
 * the prices the options bill: the caller's rules make it lower (docs/policies.md#built-in-rules).
 */
export function withPricedFields(
  request: ChatRequest,
  attempts: Attempt[],
  extra: readonly PricedField[] = [],
  maxPrice: MaxPrice | undefined = request.provider?.max_price ?? undefined,
): Attempt[] {
  const own = pricedFieldsOf(request)
  const fields = extra.length ? [...own, ...extra] : own
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
  const options: PricedOptions = Object.assign({}, ...fields.map((field) => field.option))
  const priced = kept.map((attempt) => {
    const model = Object.assign({}, attempt.offer.model, { pricing: pricingWithOptions(attempt.offer.model.pricing, options) })
    return Object.assign({}, attempt, { offer: Object.assign({}, attempt.offer, { model }) })
  })
  return withinMaxPrice(request, priced, fields, maxPrice)
}

// provider.max_price against the prices the options bill (a priority tier's, fast mode's): routing compared the plain ones.
function withinMaxPrice(request: ChatRequest, attempts: Attempt[], fields: readonly PricedField[], maxPrice: MaxPrice | undefined): Attempt[] {
  if (!maxPrice) return attempts
  const prompt = maxPromptTokens(request)
  const within = attempts.filter((a) => priceAboveMax(pricingForPrompt(a.offer.model.pricing, prompt), maxPrice) === undefined)
  if (within.length) return within
  const what = fields.map((f) => f.what).join(' and ')
  throw new GatewayError(
    404,
    `No provider of this request matches provider.max_price at the prices of ${what}: leave ${fields.length > 1 ? 'them' : 'it'} out or raise max_price`,
    {
      param: 'provider',
      metadata: { models: [...new Set(attempts.map((a) => a.entry.id))] },
    },
  )
}
