import { pricingForPrompt } from '../../billing/cost'
import { compare, decimal, multiply, type Decimal } from '../../billing/decimal'
import { offerServes, type ModelPricing } from '../../contracts'
import type { CatalogueEntry, ModelOffer } from '../../catalogue/catalogue'
import { ownersRule, providerRefusedBy } from '../../policies/rules'
import type { MaxPrice, Preferences } from './preferences'
import type { Candidate, LeftOut, RoutingRequest } from './types'

const MILLION = decimal(1_000_000)
const perMillion = (price: string | undefined): Decimal => multiply(decimal(price ?? '0'), MILLION)

/** The first price of `pricing` above `provider.max_price` (prompt and completion per million tokens, request, image), or undefined. */
export function priceAboveMax(pricing: ModelPricing, maxPrice: MaxPrice): string | undefined {
  for (const field of ['prompt', 'completion', 'request', 'image'] as const) {
    const limit = maxPrice[field]
    // Token prices are compared per million tokens, the request's and an image's as they are (USD each: docs/routing.md).
    const price = field === 'prompt' || field === 'completion' ? perMillion(pricing[field]) : decimal(pricing[field] ?? '0')
    if (limit != null && compare(price, decimal(limit)) > 0) return field
  }
  return undefined
}

/** The request as eligibility reads it: what the offer must take, and the prompt's size for long-context prices. */
type EligibilityRequest = Pick<RoutingRequest, 'capability' | 'accept' | 'promptTokens'>

/**
 * Why the request's preferences exclude an offer, as `[preference, reason]` (docs/routing.md "Provider preferences"),
 * or undefined when they keep it. A provider whose data policy does not say counts as one that may retain and train.
 */
export function exclusionOf(offer: ModelOffer, preferences: Preferences, promptTokens?: number): [string, string] | undefined {
  const slug = offer.provider.slug.toLowerCase()
  const { rules } = preferences
  const refusedBy = providerRefusedBy(rules.allowedProviders, slug)
  if (refusedBy) return ['allowed_providers', `not in ${ownersRule(refusedBy)} allowed_providers`]
  if (preferences.ignore.has(slug)) return ['ignore', 'ignored by provider.ignore']
  if (preferences.only && !preferences.only.includes(slug)) return ['only', 'not in provider.only']
  if (preferences.noFallbacks && preferences.order.length && !preferences.order.includes(slug)) return ['order', 'not in provider.order and fallbacks are off']
  const supported = offer.model.supportedParameters
  const missing = supported ? preferences.required.filter((p) => !supported.includes(p)) : []
  if (missing.length) return ['require_parameters', `does not support ${missing.join(', ')}`]
  if (preferences.maxPrice) {
    const field = priceAboveMax(pricingForPrompt(offer.model.pricing, promptTokens ?? 0), preferences.maxPrice)
    const owner = field ? rules.maxPrice[field as keyof typeof rules.maxPrice] : undefined
    const whose = owner ? `${ownersRule(owner)} max_price.${field} rule` : `provider.max_price.${field}`
    if (field) return ['max_price', `${field} price${promptTokens ? ` for a prompt of up to ${promptTokens} tokens` : ''} is above ${whose}`]
  }
  const facts = offer.dataPolicy
  if (preferences.zdr && facts.retainsPrompts !== false) {
    const says = facts.retainsPrompts === undefined ? 'does not say whether it retains prompts' : 'lets it retain prompts'
    return ['zdr', `excluded by ${rules.zdr ? `${ownersRule(rules.zdr)} enforce_zdr rule` : 'provider.zdr'}: its data policy ${says}`]
  }
  if (preferences.denyDataCollection && facts.training !== false) {
    const says = facts.training === undefined ? 'does not say whether it trains on prompts' : 'lets it train on prompts'
    const by = rules.denyDataCollection ? `${ownersRule(rules.denyDataCollection)} data_collection "deny" rule` : 'provider.data_collection "deny"'
    return ['data_collection', `excluded by ${by}: its data policy ${says}`]
  }
  if (preferences.quantizations?.length) {
    const served = offer.model.quantization?.toLowerCase() ?? 'unknown'
    if (!preferences.quantizations.includes(served)) {
      const serves = served === 'unknown' ? 'an undeclared quantization (unknown)' : served
      return ['quantizations', `excluded by provider.quantizations: it serves ${serves}, not ${preferences.quantizations.join(', ')}`]
    }
  }
  return undefined
}

/** Each entry's eligible offers (in the catalogue's order), and every offer left out with its reason. */
export interface Eligibility {
  /** One list per entry, in the entries' order. */
  offers: Candidate[][]
  leftOut: LeftOut[]
}

/**
 * The offers that may serve the request: those that serve its capability (others are skipped silently), that its
 * `accept` takes (else left out with no preference: the 503's reason), and that its preferences keep (else left out
 * naming the preference: the 404's `excluded`).
 */
export function eligibleOffers(request: EligibilityRequest, entries: CatalogueEntry[], preferences: Preferences): Eligibility {
  const leftOut: LeftOut[] = []
  const offers = entries.map((entry) =>
    entry.offers.flatMap((offer): Candidate[] => {
      if (!offerServes(offer, request.capability)) return []
      const [provider, model] = [offer.provider.slug, entry.id]
      if (request.accept && !request.accept(offer)) {
        leftOut.push({ provider, model, reason: 'cannot serve this request' })
        return []
      }
      const excluded = exclusionOf(offer, preferences, request.promptTokens)
      if (!excluded) return [{ entry, offer }]
      leftOut.push({ provider, model, preference: excluded[0], reason: excluded[1] })
      return []
    }),
  )
  return { offers, leftOut }
}
