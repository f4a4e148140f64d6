import type { CatalogueEntry, ModelOffer } from '../catalogue/catalogue'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest } from '../errors'
import { planAttempts, type Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'

/** The audio routes and the provider function that serves each. */
export type AudioEndpoint = '/audio/speech' | '/audio/transcriptions'
const FUNCTION = { '/audio/speech': 'speech', '/audio/transcriptions': 'transcribe' } as const

const DEFAULT_ENDPOINTS = ['/chat/completions']
const endpointsOf = (offer: ModelOffer) => offer.model.endpoints ?? DEFAULT_ENDPOINTS

/** True when the offer's model serves the endpoint and its provider implements it. */
export const serves = (offer: ModelOffer, endpoint: AudioEndpoint): boolean =>
  endpointsOf(offer).includes(endpoint) && typeof offer.provider[FUNCTION[endpoint]] === 'function'

/**
 * The catalogue entry of `model` and its offers that serve `endpoint`: 404 for a model the gateway does not have
 * (as chat), 400 naming `model` for one that does not serve this endpoint (with the models that do).
 */
export async function audioOffers(ctx: GatewayContext, model: string, endpoint: AudioEndpoint): Promise<{ entry: CatalogueEntry; offers: ModelOffer[] }> {
  await ctx.catalogue.ready()
  const entry = ctx.catalogue.require(model)
  const offers = entry.offers.filter((offer) => serves(offer, endpoint))
  if (!offers.length) {
    const others = ctx.catalogue.entries().filter((e) => e.offers.some((o) => serves(o, endpoint))).map((e) => e.id)
    const its = [...new Set(entry.offers.flatMap(endpointsOf))].join(', ')
    const hint = others.length ? `Models that do: ${others.slice(0, 20).join(', ')}${others.length > 20 ? ', …' : ''}.` : 'No model of this gateway does.'
    throw invalidRequest(`model: ${model} does not serve ${endpoint} (it serves ${its}). ${hint}`, 'model')
  }
  return { entry, offers }
}

/**
 * The ordered attempts for an audio request: chat's planner (provider preferences, BYOK keys, health, price) over
 * the model's offers, kept to those that serve `endpoint` and pass `accept` (e.g. the voice). Errors as
 * `audioOffers`; 503 when nothing eligible remains.
 */
export async function planAudioAttempts(
  ctx: GatewayContext,
  request: { model: string; provider?: ChatRequest['provider'] },
  endpoint: AudioEndpoint,
  principal: Principal,
  accept: (offer: ModelOffer) => boolean = () => true,
): Promise<Attempt[]> {
  const { offers } = await audioOffers(ctx, request.model, endpoint)
  const usable = new Set(offers.filter(accept).map((offer) => offer.provider.slug))
  const planned = await planAttempts(ctx, { model: request.model, messages: [], provider: request.provider } as unknown as ChatRequest, principal)
  const attempts = planned.filter((a) => usable.has(a.offer.provider.slug) && serves(a.offer, endpoint) && accept(a.offer))
  if (!attempts.length) {
    throw new GatewayError(503, `No provider is available for ${request.model} on ${endpoint}`, { metadata: { models: [request.model], providers: [...usable] } })
  }
  return attempts
}
