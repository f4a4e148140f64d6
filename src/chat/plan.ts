import type { CatalogueEntry, ModelOffer } from '../catalogue/catalogue'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest } from '../errors'
import type { ChatRequest } from '../schemas/chat'

/** One way to serve the request: a model entry and one provider's offer of it. */
export interface Attempt {
  entry: CatalogueEntry
  offer: ModelOffer
}

/** The ordered attempts for a chat request: its model, then its `models` fallbacks, each over its providers (decisions.md §8). */
export async function planAttempts(ctx: GatewayContext, request: ChatRequest): Promise<Attempt[]> {
  const ids = [...new Set([request.model, ...(request.models ?? [])].filter((id): id is string => !!id))]
  if (!ids.length) throw invalidRequest('model: is required', 'model')
  await ctx.catalogue.ready()
  const entries = ids.map((id) => {
    const entry = ctx.catalogue.get(id)
    if (!entry) throw new GatewayError(404, `Model ${id} is not available on this gateway (see GET ${ctx.options.basePath}/models)`, { param: request.model === id ? 'model' : 'models' })
    return entry
  })
  const preferences = request.provider ?? {}
  const only = preferences.only?.map((s) => s.toLowerCase())
  const ignore = new Set(preferences.ignore?.map((s) => s.toLowerCase()))
  const order = preferences.order?.map((s) => s.toLowerCase()) ?? []
  const rank = (offer: ModelOffer) => {
    const i = order.indexOf(offer.provider.slug.toLowerCase())
    return i === -1 ? order.length : i
  }
  const attempts: Attempt[] = []
  for (const entry of entries) {
    const offers = entry.offers
      .filter((o) => !ignore.has(o.provider.slug.toLowerCase()) && (!only || only.includes(o.provider.slug.toLowerCase())))
      .sort((a, b) => rank(a) - rank(b))
    for (const offer of offers) attempts.push({ entry, offer })
  }
  if (!attempts.length) {
    throw new GatewayError(503, `No provider is available for ${ids.join(', ')}: every provider serving it is excluded by provider.only / provider.ignore`, {
      metadata: { models: ids },
    })
  }
  return preferences.allow_fallbacks === false ? attempts.slice(0, 1) : attempts
}
