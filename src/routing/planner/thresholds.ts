import type { CatalogueEntry } from '../../catalogue/catalogue'
import type { Preferences } from './preferences'
import { offerKeyOf } from './ranking'
import type { Candidate, HealthView } from './types'

/**
 * True when the candidate meets `preferred_min_throughput` and `preferred_max_latency` (seconds), as the router
 * measured the service's key: a provider not measured yet meets them (docs/routing.md "Performance thresholds").
 */
export function meetsThresholds(c: Candidate, preferences: Preferences, health: HealthView): boolean {
  const { minThroughput, maxLatency } = preferences
  const throughput = minThroughput.length ? health.percentiles(offerKeyOf(c), 'throughput') : null
  if (throughput && minThroughput.some(([p, min]) => throughput[p] < min)) return false
  const latency = maxLatency.length ? health.percentiles(offerKeyOf(c), 'latency') : null
  return !(latency && maxLatency.some(([p, max]) => latency[p] / 1000 > max))
}

/**
 * The ranked candidates in the groups credentials are ordered within: those that meet the performance thresholds
 * before all that miss them, fallback models' included; within each tier, one group per model in the request's
 * order (none for a model without candidates there), or the whole tier with `sort.partition: "none"`.
 */
export function groupsByThresholds(ranked: Candidate[], entries: CatalogueEntry[], preferences: Preferences, health: HealthView): Candidate[][] {
  const thresholds = preferences.minThroughput.length > 0 || preferences.maxLatency.length > 0
  const tiers = thresholds
    ? [ranked.filter((c) => meetsThresholds(c, preferences, health)), ranked.filter((c) => !meetsThresholds(c, preferences, health))]
    : [ranked]
  const groupsOf = (tier: Candidate[]): Candidate[][] =>
    preferences.acrossModels ? [tier] : entries.map((entry) => tier.filter((c) => c.entry === entry)).filter((group) => group.length)
  return tiers.flatMap(groupsOf)
}
