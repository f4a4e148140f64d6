import { compare, decimal } from '../../billing/decimal'
import type { MergedRules, PriceField, RuleOwner } from '../../policies/rules'
import type { PerformanceThreshold, ProviderPreferences } from '../../schemas/provider-preferences'

/** `provider.max_price`: USD per million prompt / completion tokens, per request, per image. */
export type MaxPrice = NonNullable<NonNullable<ProviderPreferences>['max_price']>

/** A percentile the performance thresholds compare. */
export type Percentile = 'p50' | 'p75' | 'p90' | 'p99'

/** The request's `provider` preferences as the stages read them: slugs lowercased, nulls as absent (docs/routing.md). */
export interface Preferences {
  /** `provider.only`, lowercased; undefined when not given (an empty list keeps nothing). */
  only?: string[]
  ignore: Set<string>
  /** `provider.order`, lowercased. */
  order: string[]
  /** `allow_fallbacks: false`: only the providers in `order` (without `order`, only each model's first). */
  noFallbacks: boolean
  /** The request's parameters every offer must support (`require_parameters`), else none. */
  required: string[]
  maxPrice?: MaxPrice
  zdr: boolean
  /** `data_collection: "deny"`. */
  denyDataCollection: boolean
  /** `provider.quantizations`, lowercased; undefined or empty keeps every offer. */
  quantizations?: string[]
  /** `sort` (or `sort.by`): undefined orders by health, then price. */
  sortBy?: 'price' | 'latency' | 'throughput'
  /** `sort.partition: "none"` with a `by`: one ranking over every model's offers. */
  acrossModels: boolean
  /** `preferred_min_throughput` cutoffs (tokens per second). */
  minThroughput: [Percentile, number][]
  /** `preferred_max_latency` cutoffs (seconds). */
  maxLatency: [Percentile, number][]
  /** The built-in rules (docs/policies.md#built-in-rules): who set what the request did not, and the provider allowlists. */
  rules: RulePreferences
}

/** What the built-in rules add to a request's preferences, and whose they are (for the reasons of exclusions). */
export interface RulePreferences {
  allowedProviders: MergedRules['allowedProviders']
  /** The `max_price` fields a rule set lower than the request (or the request left out), and whose. */
  maxPrice: Partial<Record<PriceField, RuleOwner>>
  /** Who forced `zdr` when the request did not ask for it. */
  zdr?: RuleOwner
  /** Who forced `data_collection: "deny"` when the request did not ask for it. */
  denyDataCollection?: RuleOwner
}

const PERCENTILES = ['p50', 'p75', 'p90', 'p99'] as const

// A threshold's cutoffs: a number is the p50's (OpenRouter's provider routing); an object gives any of p50 … p99.
const cutoffsOf = (threshold: PerformanceThreshold | null | undefined): [Percentile, number][] => {
  if (threshold == null) return []
  if (typeof threshold === 'number') return [['p50', threshold]]
  return PERCENTILES.flatMap((p) => (threshold[p] != null ? [[p, threshold[p]!] as [Percentile, number]] : []))
}

const lower = (list?: string[] | null) => list?.map((s) => s.toLowerCase())

/** The request's max_price with each rule's field that is lower (or that the request left out), and whose those are. */
export function withRulePrices(requested: MaxPrice | null | undefined, rules: MergedRules | undefined): [MaxPrice | undefined, RulePreferences['maxPrice']] {
  const owners: RulePreferences['maxPrice'] = {}
  const prices: MaxPrice = { ...requested }
  for (const [field, rule] of Object.entries(rules?.maxPrice ?? {}) as [PriceField, { value: string; owner: RuleOwner }][]) {
    const asked = requested?.[field]
    if (asked == null || compare(decimal(rule.value), decimal(asked)) < 0) {
      prices[field] = rule.value
      owners[field] = rule.owner
    }
  }
  return [requested || Object.keys(owners).length ? prices : undefined, owners]
}

/**
 * The preferences of a request (`provider`, possibly null) with the parameters it uses, and the built-in rules of its
 * caller applied as if it sent them (docs/policies.md#built-in-rules): the lower `max_price`, `zdr`, `data_collection`.
 */
export function readPreferences(provider: ProviderPreferences | null | undefined, parameters: string[] = [], rules?: MergedRules): Preferences {
  const preferences: NonNullable<ProviderPreferences> = provider ?? {}
  const [maxPrice, maxPriceOwners] = withRulePrices(preferences.max_price, rules)
  const zdr = preferences.zdr === true
  const denyDataCollection = preferences.data_collection === 'deny'
  const sort = preferences.sort
  const sortBy = typeof sort === 'string' ? sort : (sort?.by ?? undefined)
  return {
    only: lower(preferences.only),
    ignore: new Set(lower(preferences.ignore)),
    order: lower(preferences.order) ?? [],
    noFallbacks: preferences.allow_fallbacks === false,
    required: preferences.require_parameters ? parameters : [],
    maxPrice,
    zdr: zdr || rules?.zdr !== undefined,
    denyDataCollection: denyDataCollection || rules?.denyDataCollection !== undefined,
    quantizations: lower(preferences.quantizations),
    sortBy,
    acrossModels: typeof sort === 'object' && sort?.partition === 'none' && sortBy !== undefined,
    minThroughput: cutoffsOf(preferences.preferred_min_throughput),
    maxLatency: cutoffsOf(preferences.preferred_max_latency),
    rules: {
      allowedProviders: rules?.allowedProviders ?? [],
      maxPrice: maxPriceOwners,
      zdr: zdr ? undefined : rules?.zdr,
      denyDataCollection: denyDataCollection ? undefined : rules?.denyDataCollection,
    },
  }
}
