import type * as v from 'valibot'
import type { ModelPricing } from '../contracts'
import type { HealthKey, HealthTracker } from '../routing/health'
import type { modelEndpointSchema, modelEndpointsSchema } from '../schemas/catalogue'
import type { CatalogueEntry, ModelOffer } from './catalogue'

/** One provider's endpoint of a model, as `/models/{author}/{slug}/endpoints` shows it. */
export type ModelEndpoint = v.InferOutput<typeof modelEndpointSchema>

// Providers that cache prompts only when the request asks (`cache_control`), so a priced cache read is not implicit.
const CACHING_ON_REQUEST = new Set(['anthropic'])

const endpointPricing = (p: ModelPricing): ModelEndpoint['pricing'] => {
  const optional = [
    'request',
    'image',
    'image_output',
    'audio',
    'web_search',
    'internal_reasoning',
    'input_cache_read',
    'input_cache_write',
    'character',
    'audio_second',
  ] as const
  const pricing: ModelEndpoint['pricing'] = { prompt: p.prompt, completion: p.completion, currency: p.currency ?? 'USD', discount: 0 }
  for (const field of optional) if (p[field] !== undefined) pricing[field] = p[field]
  return pricing
}

/**
 * The health of the service's key for an offer, as OpenRouter's endpoint `status` (docs/routing.md, "Seeing it"): 0
 * healthy, -1 failed recently, -2 half-open, -3 open. Only breakers open for everyone show: one org's own never does.
 */
const statusOf = (health: HealthTracker, key: HealthKey): number => {
  const state = health.state(key)
  if (state === 'open') return -3
  if (state === 'half-open') return -2
  return health.penalty(key) === 1 ? -1 : 0
}

/** One endpoint per provider serving the model, with the router's health of the service's key for it. */
export function endpointOf(entry: CatalogueEntry, offer: ModelOffer, health: HealthTracker): ModelEndpoint {
  const { provider, model } = offer
  const key = { provider: provider.slug, model: entry.id }
  const parameters = model.supportedParameters ?? []
  const toolChoice = parameters.includes('tool_choice')
  return {
    name: `${provider.name} | ${entry.id}`,
    model_id: entry.id,
    model_name: entry.view.name,
    context_length: model.contextLength ?? entry.view.context_length,
    pricing: endpointPricing(model.pricing),
    provider_name: provider.name,
    tag: provider.slug,
    quantization: model.quantization ?? null,
    max_completion_tokens: model.maxCompletionTokens ?? null,
    max_prompt_tokens: null,
    supported_parameters: parameters,
    status: statusOf(health, key),
    // The router keeps the last `health.windowSize` outcomes, not a clock window: the "30m" figures (uptime, latency,
    // throughput) read that window; 5-minute and 1-day windows are not kept (null, OpenRouter's "insufficient data").
    uptime_last_30m: health.uptime(key),
    uptime_last_5m: null,
    uptime_last_1d: null,
    supports_implicit_caching: model.pricing.input_cache_read !== undefined && !CACHING_ON_REQUEST.has(provider.slug),
    supports_tool_choice: { auto: toolChoice, none: toolChoice, required: toolChoice, function: toolChoice },
    latency_last_30m: health.percentiles(key, 'latency'),
    throughput_last_30m: health.percentiles(key, 'throughput'),
  }
}

/** The answer of `/models/{author}/{slug}/endpoints`: the model and one endpoint per provider serving it now. */
export function modelEndpoints(entry: CatalogueEntry, health: HealthTracker): v.InferOutput<typeof modelEndpointsSchema> {
  const { id, name, created, description, architecture } = entry.view
  return { data: { id, name, created, description, architecture, endpoints: entry.offers.map((offer) => endpointOf(entry, offer, health)) } }
}
