import * as v from 'valibot'
import { nonNegativeDecimal } from './common'

/**
 * Size bounds of the `provider` preferences (docs/limits.md): entries of `order`, `only`, `ignore` and characters of
 * each (the same as `CHAT_LIMITS.providers` / `providerSlug`), entries of `quantizations`.
 */
export const PROVIDER_PREFERENCE_LIMITS = { providers: 64, providerSlug: 128, quantizations: 16, quantization: 32 } as const

// OpenRouter's SDK sends `null` for a preference it leaves unset: every field (and the object itself) accepts it.
const unset = <S extends v.GenericSchema>(schema: S) => v.optional(v.nullable(schema))

const slugs = v.pipe(v.array(v.pipe(v.string(), v.maxLength(PROVIDER_PREFERENCE_LIMITS.providerSlug))), v.maxLength(PROVIDER_PREFERENCE_LIMITS.providers))
const sortBy = v.picklist(['price', 'throughput', 'latency'])
const cutoff = v.pipe(v.number(), v.finite(), v.minValue(0))
// A threshold: a number (compared with p50) or percentile cutoffs, all of which must be met (docs/routing.md).
const threshold = v.union(
  [cutoff, v.object({ p50: unset(cutoff), p75: unset(cutoff), p90: unset(cutoff), p99: unset(cutoff) })],
  'expected a number or an object of p50, p75, p90, p99 cutoffs',
)

/**
 * OpenRouter's routing preferences (docs/routing.md "Provider preferences"): `order`, `only`,
 * `ignore`, `allow_fallbacks`, `sort` (a string or `{ by, partition }`), `require_parameters`, `max_price`, and the
 * policies `zdr`, `data_collection`, `quantizations`, `preferred_min_throughput` (tokens per second),
 * `preferred_max_latency` (seconds), which the planner (`src/routing/planner/`) applies.
 */
export const providerPreferencesSchema = v.nullable(
  v.object({
    order: unset(slugs),
    only: unset(slugs),
    ignore: unset(slugs),
    allow_fallbacks: unset(v.boolean()),
    sort: unset(
      v.union(
        [sortBy, v.object({ by: unset(sortBy), partition: unset(v.picklist(['model', 'none'])) })],
        'expected "price", "throughput", "latency" or an object { by, partition }',
      ),
    ),
    require_parameters: unset(v.boolean()),
    data_collection: unset(v.picklist(['allow', 'deny'])),
    zdr: unset(v.boolean()),
    quantizations: unset(
      v.pipe(
        v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(PROVIDER_PREFERENCE_LIMITS.quantization))),
        v.maxLength(PROVIDER_PREFERENCE_LIMITS.quantizations),
      ),
    ),
    preferred_min_throughput: unset(threshold),
    preferred_max_latency: unset(threshold),
    // USD per million tokens (prompt, completion) or per request / image; the planner compares them exactly as decimals.
    max_price: unset(
      v.object({
        prompt: unset(nonNegativeDecimal),
        completion: unset(nonNegativeDecimal),
        request: unset(nonNegativeDecimal),
        image: unset(nonNegativeDecimal),
      }),
    ),
  }),
)

/** Validated routing preferences (null or absent when the request sets none). */
export type ProviderPreferences = v.InferOutput<typeof providerPreferencesSchema>
/** A throughput or latency threshold: a number (p50) or percentile cutoffs. */
export type PerformanceThreshold = v.InferOutput<typeof threshold>
