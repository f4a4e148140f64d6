import { add, compare, decimal, type Decimal } from '../../billing/decimal'
import type { ModelOffer } from '../../catalogue/catalogue'
import type { Preferences } from './preferences'
import type { Candidate, HealthView, OfferKey } from './types'

const promptPrice = (offer: ModelOffer) => decimal(offer.model.pricing.prompt ?? '0')
// Price of a typical request's tokens: prompt + completion per token (the "cheapest first" of docs/routing.md#the-attempts-of-a-request).
const sumPrice = (offer: ModelOffer): Decimal => add(decimal(offer.model.pricing.prompt), decimal(offer.model.pricing.completion))

/** The health key of a candidate: its provider and model (the service's key). */
export const offerKeyOf = (c: Candidate): OfferKey => ({ provider: c.offer.provider.slug, model: c.entry.id })

/**
 * The order of preference between two candidates (docs/routing.md): `provider.order` first; then `sort` (latency
 * ascending, throughput descending, unmeasured last) or by default health (a provider due for its probe counts as
 * healthy: the probe needs a request); then cheapest (prompt + completion), then cheapest prompt.
 */
export function preferenceOrder(preferences: Preferences, health: HealthView): (a: Candidate, b: Candidate) => number {
  const { order, sortBy } = preferences
  const rank = (c: Candidate) => {
    const i = order.indexOf(c.offer.provider.slug.toLowerCase())
    return i === -1 ? order.length : i
  }
  return (a, b) => {
    if (rank(a) !== rank(b)) return rank(a) - rank(b)
    if (sortBy === 'latency' || sortBy === 'throughput') {
      const value = (c: Candidate) => (sortBy === 'latency' ? health.latency(offerKeyOf(c)) : health.throughput(offerKeyOf(c)))
      const [va, vb] = [value(a), value(b)]
      if (va !== vb) {
        if (va === null) return 1
        if (vb === null) return -1
        return sortBy === 'latency' ? va - vb : vb - va
      }
    } else if (sortBy !== 'price') {
      const penalty = (c: Candidate) => health.penalty(offerKeyOf(c))
      if (penalty(a) !== penalty(b)) return penalty(a) - penalty(b)
    }
    return compare(sumPrice(a.offer), sumPrice(b.offer)) || compare(promptPrice(a.offer), promptPrice(b.offer))
  }
}

/**
 * The candidates in order of preference: each model's offers ranked, the models in the request's order (with
 * `allow_fallbacks: false` and no `order`, only each model's first); with `sort.partition: "none"`, one ranking over
 * every model's offers (a stable sort: ties keep the request's order).
 */
export function rankCandidates(offers: Candidate[][], preferences: Preferences, health: HealthView): Candidate[] {
  const byPreference = preferenceOrder(preferences, health)
  const ranked = offers.flatMap((own) => {
    const sorted = [...own].sort(byPreference)
    return preferences.noFallbacks && !preferences.order.length ? sorted.slice(0, 1) : sorted
  })
  return preferences.acrossModels ? ranked.sort(byPreference) : ranked
}
