import { add, compare, decimal, multiply, type Decimal } from '../billing/decimal'
import type { CatalogueEntry, ModelOffer } from '../catalogue/catalogue'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest } from '../errors'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import type { CredentialRecord } from '../stores/byok'

/** One way to serve the request: a model entry, one provider's offer of it, and the customer's key for it (BYOK) or the service's. */
export interface Attempt {
  entry: CatalogueEntry
  offer: ModelOffer
  credential?: CredentialRecord
}

// Request fields that are model parameters, for provider.require_parameters (OpenRouter's names).
const PARAMETERS = [
  'tools', 'tool_choice', 'response_format', 'temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens', 'stop', 'seed',
  'frequency_penalty', 'presence_penalty', 'repetition_penalty', 'min_p', 'logprobs', 'top_logprobs', 'logit_bias', 'reasoning', 'parallel_tool_calls',
] as const

/** The parameters a request uses (those a model must support when `provider.require_parameters` is set). */
export function usedParameters(request: ChatRequest): string[] {
  const used: string[] = PARAMETERS.filter((name) => (request as Record<string, unknown>)[name] != null)
  if (request.response_format?.type === 'json_schema') used.push('structured_outputs')
  return used
}

const MILLION = decimal(1_000_000)
const perMillion = (price: string | undefined): Decimal => multiply(decimal(price ?? '0'), MILLION)
/**
 * The ordered attempts for a chat request (decisions.md §8): its model, then its `models` fallbacks, each over the
 * providers that serve it, filtered by `provider.only` / `ignore` / `require_parameters` / `max_price`, ordered by
 * `provider.order`, then by `sort` or by default healthy first, then cheapest. Breakers do not filter here: routing
 * skips those cooling down while another way is left (docs/routing.md). Nothing eligible → 503 naming why.
 */
export async function planAttempts(ctx: GatewayContext, request: ChatRequest, principal?: Principal): Promise<Attempt[]> {
  const ids = [...new Set([request.model, ...(request.models ?? [])].filter((id): id is string => !!id))]
  if (!ids.length) throw invalidRequest('model: is required', 'model')
  await ctx.catalogue.ready()
  const entries = ids.map((id) => ctx.catalogue.require(id, request.model === id ? 'model' : 'models'))
  const preferences = request.provider ?? {}
  const lower = (list?: string[] | null) => list?.map((s) => s.toLowerCase())
  const only = lower(preferences.only)
  const ignore = new Set(lower(preferences.ignore))
  const order = lower(preferences.order) ?? []
  const required = preferences.require_parameters ? usedParameters(request) : []
  const maxPrice = preferences.max_price
  const health = ctx.health
  const reasons: string[] = []

  const eligible = (entry: CatalogueEntry, offer: ModelOffer): boolean => {
    const slug = offer.provider.slug.toLowerCase()
    const why = (reason: string) => {
      reasons.push(`${offer.provider.slug} (${entry.id}): ${reason}`)
      return false
    }
    if (ignore.has(slug)) return why('ignored by provider.ignore')
    if (only && !only.includes(slug)) return why('not in provider.only')
    if (preferences.allow_fallbacks === false && order.length && !order.includes(slug)) return why('not in provider.order and fallbacks are off')
    const supported = offer.model.supportedParameters
    const missing = supported ? required.filter((p) => !supported.includes(p)) : []
    if (missing.length) return why(`does not support ${missing.join(', ')}`)
    if (maxPrice) {
      for (const field of ['prompt', 'completion', 'request', 'image'] as const) {
        const limit = maxPrice[field]
        if (limit != null && compare(perMillion(offer.model.pricing[field]), decimal(limit)) > 0) {
          return why(`${field} price is above provider.max_price.${field}`)
        }
      }
    }
    return true
  }

  const price = (offer: ModelOffer) => decimal(offer.model.pricing.prompt ?? '0')
  const byPreference = (entry: CatalogueEntry) => (a: ModelOffer, b: ModelOffer): number => {
    const serviceKey = (o: ModelOffer) => ({ provider: o.provider.slug, model: entry.id })
    const rank = (o: ModelOffer) => {
      const i = order.indexOf(o.provider.slug.toLowerCase())
      return i === -1 ? order.length : i
    }
    if (rank(a) !== rank(b)) return rank(a) - rank(b)
    const sort = preferences.sort
    if (sort === 'latency' || sort === 'throughput') {
      const value = (o: ModelOffer) => (sort === 'latency' ? health.latency(serviceKey(o)) : health.throughput(serviceKey(o)))
      const [va, vb] = [value(a), value(b)]
      if (va !== vb) {
        if (va === null) return 1
        if (vb === null) return -1
        return sort === 'latency' ? va - vb : vb - va
      }
    } else if (sort !== 'price') {
      // Default: healthy first (a provider due for its probe counts as healthy: the probe needs a request), then cheapest.
      const penalty = (o: ModelOffer) => health.penalty(serviceKey(o), principal?.org.id)
      if (penalty(a) !== penalty(b)) return penalty(a) - penalty(b)
    }
    const byPrice = compare(sumPrice(a), sumPrice(b))
    return byPrice || compare(price(a), price(b))
  }

  // Customers' keys matter only for providers that accept them: otherwise the org's credentials are not read at all.
  const byokPossible = principal !== undefined && entries.some((entry) => entry.offers.some((offer) => offer.provider.byokSupported))
  const credentials = byokPossible ? await ctx.byok.records(principal.org.id) : []
  const applicable = (entry: CatalogueEntry, offer: ModelOffer) =>
    credentials.filter((c) =>
      offer.provider.byokSupported && c.provider === offer.provider.slug && !c.disabled
      && (!c.allowed_models.length || c.allowed_models.includes(entry.id))
      && (!c.allowed_api_key_hashes.length || c.allowed_api_key_hashes.includes(principal!.key.hash)))

  const attempts: Attempt[] = []
  for (const entry of entries) {
    const offers = entry.offers.filter((offer) => eligible(entry, offer)).sort(byPreference(entry))
    const kept = preferences.allow_fallbacks === false && !order.length ? offers.slice(0, 1) : offers
    // decisions.md §7: the customer's own keys first (whatever provider.order says), in sort_order; then each
    // provider's service key, unless a credential says always_use or the service has none; is_fallback keys after it.
    for (const offer of kept) for (const credential of applicable(entry, offer)) if (!credential.is_fallback) attempts.push({ entry, offer, credential })
    for (const offer of kept) {
      const own = applicable(entry, offer)
      if (offer.provider.serviceKey !== false && !own.some((c) => c.always_use)) attempts.push({ entry, offer })
      for (const credential of own) if (credential.is_fallback) attempts.push({ entry, offer, credential })
    }
    for (const offer of kept) {
      if (offer.provider.serviceKey === false && !applicable(entry, offer).length) reasons.push(`${offer.provider.slug} (${entry.id}): needs your own key (BYOK) for this provider`)
    }
  }
  if (!attempts.length) {
    throw new GatewayError(503, `No provider is available for ${ids.join(', ')}: ${reasons.join('; ')}`, { metadata: { models: ids, reasons } })
  }
  return attempts
}

// Price of a typical request's tokens: prompt + completion per token (the "cheapest first" of decisions.md §8).
const sumPrice = (offer: ModelOffer): Decimal => add(decimal(offer.model.pricing.prompt), decimal(offer.model.pricing.completion))
