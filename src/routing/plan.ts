import { pricingForPrompt } from '../billing/cost'
import { add, compare, decimal, multiply, type Decimal } from '../billing/decimal'
import { CAPABILITIES, offerServes, pathsOf, type Capability } from '../capabilities/capability'
import type { CatalogueEntry, ModelOffer } from '../catalogue/catalogue'
import { maxPromptTokens } from '../chat/max-cost'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest } from '../errors'
import type { ChatRequest } from '../schemas/chat'
import type { PerformanceThreshold, ProviderPreferences } from '../schemas/provider-preferences'
import type { ModelPricing } from '../providers/types'
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
  'tools',
  'tool_choice',
  'response_format',
  'temperature',
  'top_p',
  'top_k',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'min_p',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'reasoning',
  'parallel_tool_calls',
] as const

/** What routing needs to know of a request, whatever its capability (docs/routing.md). */
export interface RoutingRequest {
  /** What the request asks: only offers whose model and provider serve it are planned. */
  capability: Capability
  /** The model asked for, then its fallbacks (`models`). */
  model?: string | null
  models?: string[] | null
  /** OpenRouter's provider preferences. */
  provider?: ProviderPreferences | null
  /** The model parameters the request uses, which `provider.require_parameters` asks offers to support. */
  parameters?: string[]
  /** Leaves out offers that cannot take this request (a voice the model's provider lacks); 503 when none is left. */
  accept?: (offer: ModelOffer) => boolean
  /**
   * The prompt's tokens at most (the hold's estimate): `provider.max_price` is compared with the prices a prompt this
   * long is billed at (a model's long-context prices past their threshold: docs/routing.md).
   */
  promptTokens?: number
}

/** A chat request as routing sees it. */
export const chatRouting = (request: ChatRequest): RoutingRequest => ({
  capability: 'chat',
  model: request.model,
  models: request.models,
  provider: request.provider,
  parameters: usedParameters(request),
  promptTokens: maxPromptTokens(request),
})

/** The parameters a request uses (those a model must support when `provider.require_parameters` is set). */
export function usedParameters(request: ChatRequest): string[] {
  const used: string[] = PARAMETERS.filter((name) => (request as Record<string, unknown>)[name] != null)
  if (request.response_format?.type === 'json_schema') used.push('structured_outputs')
  return used
}

const MILLION = decimal(1_000_000)
const perMillion = (price: string | undefined): Decimal => multiply(decimal(price ?? '0'), MILLION)

/** The first price of `pricing` above `provider.max_price` (prompt and completion per million tokens, request, image), or undefined. */
export function priceAboveMax(pricing: ModelPricing, maxPrice: NonNullable<NonNullable<ProviderPreferences>['max_price']>): string | undefined {
  for (const field of ['prompt', 'completion', 'request', 'image'] as const) {
    const limit = maxPrice[field]
    if (limit != null && compare(perMillion(pricing[field]), decimal(limit)) > 0) return field
  }
  return undefined
}

/** One preference of the request that excluded one provider's offer (the 404's `metadata.excluded`, docs/routing.md). */
export interface Exclusion {
  provider: string
  model: string
  /** The `provider.…` field: `ignore`, `only`, `order`, `require_parameters`, `max_price`, `zdr`, `data_collection`, `quantizations`. */
  preference: string
  reason: string
}

/** A provider's offer of one model of the request, before credentials are chosen. */
interface Candidate {
  entry: CatalogueEntry
  offer: ModelOffer
}

/**
 * The customer's credentials (BYOK) that apply to an offer for the calling key (docs/byok.md): for a provider that
 * accepts customers' keys, not disabled, `allowed_models` empty or holding the model, `allowed_api_key_hashes` empty or
 * holding the key's hash, `allowed_user_ids` empty or holding the key's user; in `sort_order`.
 */
export function applicableCredentials(
  credentials: CredentialRecord[],
  entry: CatalogueEntry,
  offer: ModelOffer,
  key: { hash: string; user_id: string },
): CredentialRecord[] {
  return credentials.filter(
    (c) =>
      offer.provider.byokSupported &&
      c.provider === offer.provider.slug &&
      !c.disabled &&
      (!c.allowed_models.length || c.allowed_models.includes(entry.id)) &&
      (!c.allowed_api_key_hashes.length || c.allowed_api_key_hashes.includes(key.hash)) &&
      (!c.allowed_user_ids?.length || c.allowed_user_ids.includes(key.user_id)),
  )
}

/** True when an enabled credential of the org says `is_byok_only` for the offer's provider: its service key is never used (docs/byok.md). */
const byokOnly = (credentials: CredentialRecord[], offer: ModelOffer) =>
  credentials.some((c) => c.is_byok_only && !c.disabled && c.provider === offer.provider.slug)

/** The catalogue entries the caller's key can be routed to: some offer has the service's key, or a BYOK credential of the org applies (GET /models/user). */
export async function usableEntries(ctx: GatewayContext, principal: Principal, entries: CatalogueEntry[]): Promise<CatalogueEntry[]> {
  const byokPossible = entries.some((entry) => entry.offers.some((offer) => offer.provider.byokSupported))
  const credentials = byokPossible ? await ctx.byok.records(principal.org.id) : []
  return entries.filter((entry) =>
    entry.offers.some(
      (offer) =>
        (offer.provider.serviceKey !== false && !byokOnly(credentials, offer)) || applicableCredentials(credentials, entry, offer, principal.key).length > 0,
    ),
  )
}

const PERCENTILES = ['p50', 'p75', 'p90', 'p99'] as const
// A threshold's cutoffs: a number is the p50's (OpenRouter's provider routing); an object gives any of p50 … p99.
const cutoffsOf = (threshold: PerformanceThreshold | null | undefined): [(typeof PERCENTILES)[number], number][] => {
  if (threshold == null) return []
  if (typeof threshold === 'number') return [['p50', threshold]]
  return PERCENTILES.flatMap((p) => (threshold[p] != null ? [[p, threshold[p]!] as [(typeof PERCENTILES)[number], number]] : []))
}

/**
 * The entries that serve the request's capability, in the request's order (docs/capabilities.md). A listed model that
 * does not is skipped while another one does; when none does → 400 naming what the model serves, and which models do.
 */
function servingEntries(ctx: GatewayContext, request: RoutingRequest, entries: CatalogueEntry[]): CatalogueEntry[] {
  const serving = entries.filter((entry) => entry.offers.some((offer) => offerServes(offer, request.capability)))
  if (serving.length) return serving
  const path = CAPABILITIES[request.capability].path
  const first = entries[0]
  const its = [...new Set(first.offers.flatMap((offer) => pathsOf(offer.model)))].join(', ')
  const others = ctx.catalogue
    .entries()
    .filter((e) => e.offers.some((o) => offerServes(o, request.capability)))
    .map((e) => e.id)
  const hint = others.length ? `Models that do: ${others.slice(0, 20).join(', ')}${others.length > 20 ? ', …' : ''}.` : 'No model of this gateway does.'
  throw invalidRequest(`model: ${first.id} does not serve ${path} (it serves ${its}). ${hint}`, request.model ? 'model' : 'models')
}

/**
 * The ordered attempts for a request (docs/routing.md): its model, then its `models` fallbacks, those that serve its
 * capability, each over the providers that serve it, filtered by `provider.only` / `ignore` / `require_parameters` / `max_price`
 * and the policies `zdr` / `data_collection` / `quantizations`, ordered by `provider.order`, then by `sort` (within
 * each model, or across all with `partition: "none"`) or by default healthy first, then cheapest; offers that miss
 * `preferred_min_throughput` / `preferred_max_latency` go after those that meet them (a provider not measured yet
 * counts as meeting them). Breakers do not filter here: routing skips those cooling down while another way is left.
 * When the request's own preferences exclude every offer → 404 naming which preference excluded which provider;
 * when nothing is left for another reason (a provider that needs the customer's own key) → 503 naming why.
 */
export async function planAttempts(ctx: GatewayContext, request: RoutingRequest, principal?: Principal): Promise<Attempt[]> {
  const ids = [...new Set([request.model, ...(request.models ?? [])].filter((id): id is string => !!id))]
  if (!ids.length) throw invalidRequest('model: is required', 'model')
  await ctx.catalogue.ready()
  const entries = servingEntries(
    ctx,
    request,
    ids.map((id) => ctx.catalogue.require(id, request.model === id ? 'model' : 'models')),
  )
  const preferences: NonNullable<ProviderPreferences> = request.provider ?? {}
  const lower = (list?: string[] | null) => list?.map((s) => s.toLowerCase())
  const only = lower(preferences.only)
  const ignore = new Set(lower(preferences.ignore))
  const order = lower(preferences.order) ?? []
  const required = preferences.require_parameters ? (request.parameters ?? []) : []
  const accept = request.accept
  const maxPrice = preferences.max_price
  const quantizations = lower(preferences.quantizations)
  const sortSetting = preferences.sort
  const sortBy = typeof sortSetting === 'string' ? sortSetting : (sortSetting?.by ?? undefined)
  const acrossModels = typeof sortSetting === 'object' && sortSetting?.partition === 'none' && sortBy !== undefined
  const minThroughput = cutoffsOf(preferences.preferred_min_throughput)
  const maxLatency = cutoffsOf(preferences.preferred_max_latency)
  const health = ctx.health
  const reasons: string[] = []
  const excluded: Exclusion[] = []
  // Set when an offer is left out for a reason that is not the request's own preference (it needs the customer's key).
  let unavailable = false

  const eligible = (entry: CatalogueEntry, offer: ModelOffer): boolean => {
    const slug = offer.provider.slug.toLowerCase()
    const why = (preference: string, reason: string) => {
      reasons.push(`${offer.provider.slug} (${entry.id}): ${reason}`)
      excluded.push({ provider: offer.provider.slug, model: entry.id, preference, reason })
      return false
    }
    if (ignore.has(slug)) return why('ignore', 'ignored by provider.ignore')
    if (only && !only.includes(slug)) return why('only', 'not in provider.only')
    if (preferences.allow_fallbacks === false && order.length && !order.includes(slug)) return why('order', 'not in provider.order and fallbacks are off')
    const supported = offer.model.supportedParameters
    const missing = supported ? required.filter((p) => !supported.includes(p)) : []
    if (missing.length) return why('require_parameters', `does not support ${missing.join(', ')}`)
    if (maxPrice) {
      const field = priceAboveMax(pricingForPrompt(offer.model.pricing, request.promptTokens ?? 0), maxPrice)
      if (field)
        return why(
          'max_price',
          `${field} price${request.promptTokens ? ` for a prompt of up to ${request.promptTokens} tokens` : ''} is above provider.max_price.${field}`,
        )
    }
    // Data policies: a provider whose policy does not say counts as one that may retain and train (docs/routing.md).
    if (preferences.zdr || preferences.data_collection === 'deny') {
      const facts = offer.dataPolicy
      if (preferences.zdr && facts.retainsPrompts !== false) {
        return why(
          'zdr',
          `excluded by provider.zdr: its data policy ${facts.retainsPrompts === undefined ? 'does not say whether it retains prompts' : 'lets it retain prompts'}`,
        )
      }
      if (preferences.data_collection === 'deny' && facts.training !== false) {
        return why(
          'data_collection',
          `excluded by provider.data_collection "deny": its data policy ${facts.training === undefined ? 'does not say whether it trains on prompts' : 'lets it train on prompts'}`,
        )
      }
    }
    if (quantizations?.length) {
      const served = offer.model.quantization?.toLowerCase() ?? 'unknown'
      if (!quantizations.includes(served))
        return why(
          'quantizations',
          `excluded by provider.quantizations: it serves ${served === 'unknown' ? 'an undeclared quantization (unknown)' : served}, not ${quantizations.join(', ')}`,
        )
    }
    return true
  }

  const healthKey = (c: Candidate) => ({ provider: c.offer.provider.slug, model: c.entry.id })
  const rank = (c: Candidate) => {
    const i = order.indexOf(c.offer.provider.slug.toLowerCase())
    return i === -1 ? order.length : i
  }
  const byPreference = (a: Candidate, b: Candidate): number => {
    if (rank(a) !== rank(b)) return rank(a) - rank(b)
    if (sortBy === 'latency' || sortBy === 'throughput') {
      const value = (c: Candidate) => (sortBy === 'latency' ? health.latency(healthKey(c)) : health.throughput(healthKey(c)))
      const [va, vb] = [value(a), value(b)]
      if (va !== vb) {
        if (va === null) return 1
        if (vb === null) return -1
        return sortBy === 'latency' ? va - vb : vb - va
      }
    } else if (sortBy !== 'price') {
      // Default: healthy first (a provider due for its probe counts as healthy: the probe needs a request), then cheapest.
      const penalty = (c: Candidate) => health.penalty(healthKey(c), principal?.org.id)
      if (penalty(a) !== penalty(b)) return penalty(a) - penalty(b)
    }
    const byPrice = compare(sumPrice(a.offer), sumPrice(b.offer))
    return byPrice || compare(price(a.offer), price(b.offer))
  }
  // preferred_min_throughput / preferred_max_latency (seconds) against the router's measurements of the service's
  // key; no measurement yet meets them.
  const meetsThresholds = (c: Candidate): boolean => {
    const throughput = minThroughput.length ? health.percentiles(healthKey(c), 'throughput') : null
    if (throughput && minThroughput.some(([p, min]) => throughput[p] < min)) return false
    const latency = maxLatency.length ? health.percentiles(healthKey(c), 'latency') : null
    return !(latency && maxLatency.some(([p, max]) => latency[p] / 1000 > max))
  }

  // Offers that cannot serve this request whatever it prefers: another capability, or refused by `accept`.
  const servable = (entry: CatalogueEntry, offer: ModelOffer): boolean => {
    if (!offerServes(offer, request.capability)) return false
    if (!accept || accept(offer)) return true
    reasons.push(`${offer.provider.slug} (${entry.id}): cannot serve this request`)
    unavailable = true
    return false
  }
  // Each model's eligible offers in order of preference (with allow_fallbacks false and no order, only the first).
  let candidates: Candidate[] = entries.flatMap((entry) => {
    const offers = entry.offers
      .filter((offer) => servable(entry, offer) && eligible(entry, offer))
      .map((offer) => ({ entry, offer }))
      .sort(byPreference)
    return preferences.allow_fallbacks === false && !order.length ? offers.slice(0, 1) : offers
  })
  // sort.partition "none": one ranking over every model's offers (Array.prototype.sort is stable).
  if (acrossModels) candidates = [...candidates].sort(byPreference)
  // Offers missing a performance threshold go after all those that meet it, fallback models' included.
  const tiers = minThroughput.length || maxLatency.length ? [candidates.filter(meetsThresholds), candidates.filter((c) => !meetsThresholds(c))] : [candidates]

  // Customers' keys matter only for providers that accept them: otherwise the org's credentials are not read at all.
  const byokPossible = principal !== undefined && entries.some((entry) => entry.offers.some((offer) => offer.provider.byokSupported))
  const credentials = byokPossible ? await ctx.byok.records(principal.org.id) : []
  // A request asking for zero data retention never goes through a key its customer declared not ZDR (declared_zdr: false).
  const applicable = (c: Candidate) =>
    principal
      ? applicableCredentials(credentials, c.entry, c.offer, principal.key).filter((credential) => !(preferences.zdr && credential.declared_zdr === false))
      : []

  const attempts: Attempt[] = []
  // docs/byok.md, within each group (a model's offers; all of a tier with partition "none"): the customer's own keys
  // first (whatever provider.order says), in sort_order; then each provider's service key, unless a credential says
  // always_use, any of the org's for that provider says is_byok_only, or the service has none; is_fallback keys after it.
  const groupsOf = (tier: Candidate[]): Candidate[][] =>
    acrossModels ? [tier] : entries.map((entry) => tier.filter((c) => c.entry === entry)).filter((group) => group.length)
  for (const group of tiers.flatMap(groupsOf)) {
    for (const c of group) for (const credential of applicable(c)) if (!credential.is_fallback) attempts.push({ ...c, credential })
    for (const c of group) {
      const own = applicable(c)
      if (c.offer.provider.serviceKey !== false && !own.some((credential) => credential.always_use) && !byokOnly(credentials, c.offer)) attempts.push({ ...c })
      for (const credential of own) if (credential.is_fallback) attempts.push({ ...c, credential })
    }
    for (const c of group) {
      if ((c.offer.provider.serviceKey === false || byokOnly(credentials, c.offer)) && !applicable(c).length) {
        reasons.push(`${c.offer.provider.slug} (${c.entry.id}): needs your own key (BYOK) for this provider`)
        unavailable = true
      }
    }
  }
  if (!attempts.length) {
    if (!unavailable && excluded.length) {
      throw new GatewayError(404, `No provider of ${ids.join(', ')} matches the request's provider preferences: ${reasons.join('; ')}`, {
        param: 'provider',
        metadata: { models: ids, reasons, excluded },
      })
    }
    const on = request.capability === 'chat' ? '' : ` on ${CAPABILITIES[request.capability].path}`
    throw new GatewayError(503, `No provider is available for ${ids.join(', ')}${on}: ${reasons.join('; ')}`, { metadata: { models: ids, reasons } })
  }
  return attempts
}

const price = (offer: ModelOffer) => decimal(offer.model.pricing.prompt ?? '0')
// Price of a typical request's tokens: prompt + completion per token (the "cheapest first" of docs/routing.md#the-attempts-of-a-request).
const sumPrice = (offer: ModelOffer): Decimal => add(decimal(offer.model.pricing.prompt), decimal(offer.model.pricing.completion))
