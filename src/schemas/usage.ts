import * as v from 'valibot'
import { CAPABILITIES, CAPABILITY_NAMES } from '../contracts'
import { int } from './common'

// Shapes of OpenRouter's GET /credits, /generation and /activity (their API reference and @openrouter/sdk 1.3's models:
// GetCreditsResponse, GenerationResponse, ActivityResponse), with the gateway's own fields beside them
// (docs/api.md#openrouter-compatibility; docs/usage.md). Amounts are JSON numbers whose decimal text is the exact
// amount (docs/money.md).

const amount = v.number()
const nullableInt = v.nullable(int())

/** GET /credits: the org's credits in EUR, as OpenRouter shapes them (numbers), with the balance beside. */
export const creditsSchema = v.object({
  data: v.object({
    total_credits: amount,
    total_usage: amount,
    balance: amount,
    currency: v.literal('EUR'),
  }),
})

/** A generation id (`gen-…`): letters, digits, `-` and `_`. */
export const generationIdSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(128), v.regex(/^[A-Za-z0-9_-]+$/, 'must be a generation id such as gen-…'))

/** Query of GET /generation. */
export const generationQuerySchema = v.object({ id: generationIdSchema })

/** GET /generation: one generation's stats, as OpenRouter's GenerationResponse, with the gateway's fields beside. */
export const generationSchema = v.object({
  data: v.object({
    id: v.string(),
    upstream_id: v.nullable(v.string()),
    /** The cost in `cost_currency`: the response's `usage.cost`. */
    total_cost: amount,
    cache_discount: v.nullable(amount),
    upstream_inference_cost: v.nullable(amount),
    created_at: v.string(),
    model: v.string(),
    app_id: nullableInt,
    streamed: v.nullable(v.boolean()),
    cancelled: v.nullable(v.boolean()),
    provider_name: v.nullable(v.string()),
    latency: v.nullable(v.number()),
    moderation_latency: v.nullable(v.number()),
    generation_time: v.nullable(v.number()),
    finish_reason: v.nullable(v.string()),
    native_finish_reason: v.nullable(v.string()),
    tokens_prompt: nullableInt,
    tokens_completion: nullableInt,
    native_tokens_prompt: nullableInt,
    native_tokens_completion: nullableInt,
    native_tokens_completion_images: nullableInt,
    native_tokens_reasoning: nullableInt,
    native_tokens_cached: nullableInt,
    num_media_prompt: nullableInt,
    num_input_audio_prompt: nullableInt,
    num_media_completion: nullableInt,
    num_search_results: nullableInt,
    num_fetches: nullableInt,
    origin: v.string(),
    /** What the credits were charged, in EUR: the response's `usage.cost_eur`. */
    usage: amount,
    is_byok: v.boolean(),
    api_type: v.nullable(v.picklist(CAPABILITY_NAMES.map((capability) => CAPABILITIES[capability].apiType))),
    data_region: v.string(),
    external_user: v.nullable(v.string()),
    http_referer: v.nullable(v.string()),
    user_agent: v.nullable(v.string()),
    preset_id: v.nullable(v.string()),
    provider_responses: v.nullable(v.array(v.looseObject({}))),
    request_id: v.nullable(v.string()),
    response_cache_source_id: v.nullable(v.string()),
    router: v.nullable(v.string()),
    service_tier: v.nullable(v.string()),
    session_id: v.nullable(v.string()),
    web_search_engine: v.nullable(v.string()),
    workspace_id: v.nullable(v.string()),
    // The gateway's fields beside OpenRouter's.
    cost_currency: v.string(),
    cost_eur: amount,
    status: v.picklist(['success', 'error', 'cancelled']),
    provider: v.string(),
    app_title: v.nullable(v.string()),
    app_categories: v.array(v.string()),
    trace: v.nullable(v.record(v.string(), v.unknown())),
    metadata: v.nullable(v.record(v.string(), v.string())),
    /** The client's own X-Request-Id, when it sent one; `request_id` is the gateway's (docs/errors.md#request-and-generation-ids). */
    client_request_id: v.nullable(v.string()),
    /** The user the request was made as, the end user it was made for (null: none), and how the caller authenticated (docs/usage.md#usage-per-user-and-per-end-user). */
    user_id: v.string(),
    end_user: v.nullable(v.string()),
    via: v.picklist(['key', 'session']),
    /** What the host's policies decided on the request and its answer (docs/policies.md#what-is-recorded). */
    policies: v.array(v.looseObject({ policy: v.string(), stage: v.string(), action: v.string() })),
    /** Answered from the response cache, and the generation it replayed (docs/cache.md#what-a-hit-costs). */
    cache_hit: v.boolean(),
    cached_from: v.nullable(v.string()),
  }),
})

// 2026-02-30 and 2026-11-31 are not days: Date reads them as invalid or as another day.
const isRealDay = (day: string) => {
  const time = Date.parse(`${day}T00:00:00Z`)
  return Number.isFinite(time) && new Date(time).toISOString().startsWith(day)
}

/** A UTC day, YYYY-MM-DD. */
export const daySchema = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD'), v.check(isRealDay, 'must be a real date'))

/** An end user as requests name it (OpenRouter's `user` field): 1 to 256 characters. */
export const endUserSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(256))

/**
 * Query of GET /activity: OpenRouter's filters. `group_by=workspace` adds `workspace_id` (the org: its one workspace);
 * `group_by=api_key`, `user` and `end_user` are the gateway's: a row per API key, user or end user, naming it; the
 * `end_user` filter is the gateway's too (docs/usage.md#usage-per-user-and-per-end-user).
 */
export const activityQuerySchema = v.object({
  date: v.optional(daySchema),
  api_key_hash: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/i, 'must be a SHA-256 hex digest'))),
  user_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  end_user: v.optional(endUserSchema),
  group_by: v.optional(v.picklist(['workspace', 'api_key', 'user', 'end_user'])),
})

/** One row of GET /activity: a day, model and provider (and key, user or end user with `group_by`). */
export const activityItemSchema = v.object({
  date: v.string(),
  model: v.string(),
  model_permaslug: v.string(),
  endpoint_id: v.string(),
  provider_name: v.string(),
  /** Credits charged, in EUR (the sum of the usage records' `cost_eur`). */
  usage: amount,
  /** BYOK: the upstream cost the customer's own provider charges, in EUR (estimated from the catalogue). */
  byok_usage_inference: amount,
  requests: int(),
  prompt_tokens: int(),
  completion_tokens: int(),
  reasoning_tokens: int(),
  // The gateway's fields beside OpenRouter's.
  provider: v.string(),
  api_key_hash: v.optional(v.nullable(v.string())),
  user_id: v.optional(v.nullable(v.string())),
  end_user: v.optional(v.nullable(v.string())),
  workspace_id: v.optional(v.string()),
})

/** GET /activity: usage per day, model and provider over the last 30 completed UTC days and today. */
export const activitySchema = v.object({ data: v.array(activityItemSchema) })
