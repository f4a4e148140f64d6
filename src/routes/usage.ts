import { sha256Hex } from '../crypto/hash'
import { CAPABILITIES } from '../contracts'
import { fromUnits } from '../billing/money'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest, notFound } from '../errors'
import { ExactNumber } from '../http/exact-json'
import type { Principal } from '../stores/account-types'
import { readActivity } from '../stores/activity'
import { dayOf, type RollupFilter } from '../stores/rollups'
import type { UsageRecord } from '../stores/usage'
import { activityQuerySchema, activitySchema, creditsSchema, generationQuerySchema, generationSchema } from '../schemas/usage'
import { defineRoute } from './define'

const tag = 'Usage'
const DAY_MS = 86_400_000
/** GET /activity covers today and this many completed UTC days before it (OpenRouter: the last 30 completed days). */
export const ACTIVITY_DAYS = 30

const exact = (decimal: string) => new ExactNumber(decimal)
const exactUnits = (units: bigint) => new ExactNumber(fromUnits(units))

/** GET /credits: the org's credits as OpenRouter shapes them, exact (docs/usage.md). */
export const creditsRoute = defineRoute({
  method: 'GET',
  path: '/credits',
  operationId: 'getCredits',
  summary: 'Total credits granted and used by the org of the calling key (EUR)',
  tag,
  auth: 'key',
  status: 200,
  response: creditsSchema,
  async handler({ ctx, principal }) {
    const credits = await ctx.credits.get(principal.org.id)
    return { data: { total_credits: exact(credits.total_credits), total_usage: exact(credits.total_usage), balance: exact(credits.balance), currency: 'EUR' } }
  },
})

/** The generation stats of a usage record, in OpenRouter's shape (docs/usage.md says where each value comes from). */
function generationOf(ctx: GatewayContext, record: UsageRecord) {
  const providerName = record.provider_name ?? ctx.catalogue.providers().find((p) => p.slug === record.provider)?.name ?? record.provider
  return {
    id: record.id,
    upstream_id: record.upstream_id,
    total_cost: exact(record.cost),
    cache_discount: null,
    upstream_inference_cost: record.upstream_inference_cost === null ? null : exact(record.upstream_inference_cost),
    created_at: record.created_at,
    model: record.model,
    app_id: record.app_id ?? null,
    streamed: record.stream,
    cancelled: record.status === 'cancelled',
    provider_name: providerName,
    latency: record.first_token_ms ?? record.latency_ms,
    moderation_latency: null,
    generation_time: record.latency_ms,
    finish_reason: record.finish_reason ?? (record.status === 'error' ? 'error' : null),
    native_finish_reason: record.native_finish_reason ?? null,
    tokens_prompt: record.prompt_tokens,
    tokens_completion: record.completion_tokens,
    native_tokens_prompt: record.prompt_tokens,
    native_tokens_completion: record.completion_tokens,
    native_tokens_completion_images: record.endpoint === 'images' ? record.completion_tokens : null,
    native_tokens_reasoning: record.reasoning_tokens,
    native_tokens_cached: record.cached_tokens,
    num_media_prompt: null,
    num_input_audio_prompt: record.endpoint === 'transcription' ? 1 : null,
    num_media_completion: record.images ?? null,
    num_search_results: null,
    num_fetches: null,
    origin: record.http_referer ?? '',
    usage: exact(record.cost_eur),
    is_byok: record.is_byok,
    api_type: CAPABILITIES[record.endpoint]?.apiType ?? null,
    data_region: 'global',
    external_user: record.external_user ?? null,
    http_referer: record.http_referer ?? null,
    user_agent: record.user_agent ?? null,
    preset_id: null,
    provider_responses: null,
    request_id: record.request_id ?? null,
    response_cache_source_id: record.cached_from ?? null,
    router: null,
    service_tier: null,
    session_id: record.session_id ?? null,
    web_search_engine: null,
    workspace_id: null,
    cost_currency: record.currency,
    cost_eur: exact(record.cost_eur),
    status: record.status,
    provider: record.provider,
    app_title: record.app_title ?? null,
    app_categories: record.app_categories ?? [],
    trace: record.trace ?? null,
    metadata: record.metadata ?? null,
    client_request_id: record.client_request_id ?? null,
    user_id: record.user_id,
    end_user: record.end_user ?? null,
    via: record.via ?? 'key',
    policies: record.policies ?? [],
    cache_hit: record.cache_hit === true,
    cached_from: record.cached_from ?? null,
  }
}

/** GET /generation?id=gen-…: one generation of the caller's org; 404 for an unknown id or another org's. */
export const generationRoute = defineRoute({
  method: 'GET',
  path: '/generation',
  operationId: 'getGeneration',
  summary: 'Stats of one generation (cost, tokens, timing, app attribution)',
  tag,
  auth: 'key',
  status: 200,
  query: generationQuerySchema,
  response: generationSchema,
  async handler({ ctx, principal, query }) {
    const record = await ctx.usage.get(principal.org.id, query.id)
    if (!record) throw notFound(`Generation ${query.id} not found`)
    return { data: generationOf(ctx, record) }
  },
})

/** A stable UUID (version 8, name-based) of a model served by a provider: OpenRouter's endpoint id. */
export function endpointIdOf(model: string, provider: string): string {
  const hex = sha256Hex(`${provider}\n${model}`)
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** The days GET /activity covers at `now`: today first, then the 30 completed days before it. */
export function activityDays(now: number): string[] {
  return Array.from({ length: ACTIVITY_DAYS + 1 }, (_, i) => dayOf(now - i * DAY_MS))
}

/**
 * Whose usage GET /activity shows the caller (docs/usage.md#who-sees-what): a management key sees its whole org (filtered
 * as asked), an API key only its own requests (asking it for another key's is a 403), and a host session only its
 * own user's, through any of the user's keys (asking it for another user's is a 403).
 */
export function activityFilter(principal: Principal, query: { api_key_hash?: string; user_id?: string; end_user?: string }): RollupFilter {
  const asked = query.api_key_hash?.toLowerCase()
  const filter: RollupFilter = { keyHash: asked, userId: query.user_id, endUser: query.end_user }
  if (principal.via === 'session') {
    if (query.user_id !== undefined && query.user_id !== principal.user.id) {
      throw new GatewayError(403, "A signed-in user reads only their own activity: read another user's, or the whole organisation's, with a management key", {
        param: 'user_id',
      })
    }
    return Object.assign(filter, { userId: principal.user.id })
  }
  if (principal.key.management) return filter
  if (asked !== undefined && asked !== principal.key.hash) {
    throw new GatewayError(403, "An API key reads only its own activity: read another key's, or the whole organisation's, with a management key", {
      param: 'api_key_hash',
    })
  }
  return Object.assign(filter, { keyHash: principal.key.hash })
}

/**
 * GET /activity: usage per UTC day, model and provider (and key, user or end user with `group_by`), from the rollups
 * kept as requests are billed (never from usage records); newest day first, then by model and provider. A management
 * key reads its org's; an API key its own; a host session its user's.
 */
export const activityRoute = defineRoute({
  method: 'GET',
  path: '/activity',
  operationId: 'getUserActivity',
  summary:
    'Usage per day, model and provider over the last 30 days and today, split by key, user or end user on request (the org’s with a management key, the key’s own with an API key, the user’s own in a host session)',
  tag,
  auth: 'key',
  keyKind: 'any',
  status: 200,
  query: activityQuerySchema,
  response: activitySchema,
  async handler({ ctx, principal, query }) {
    const orgId = principal.org.id
    const window = activityDays(ctx.now())
    if (query.date !== undefined && !window.includes(query.date)) {
      throw invalidRequest(`date: must be a day from ${window[window.length - 1]} to ${window[0]} (the last ${ACTIVITY_DAYS} days and today, UTC)`, 'date')
    }
    const days = query.date !== undefined ? [query.date] : window
    const groupBy = query.group_by === 'workspace' ? undefined : query.group_by
    const rows = await readActivity(ctx.rollups, orgId, days, activityFilter(principal, query), groupBy)
    return {
      data: rows.map((row) => ({
        date: row.date,
        model: row.model,
        model_permaslug: row.model_permaslug,
        endpoint_id: endpointIdOf(row.model, row.provider),
        provider_name: row.provider_name,
        usage: exactUnits(row.totals.usage),
        byok_usage_inference: exactUnits(row.totals.byok_usage_inference),
        requests: row.totals.requests,
        prompt_tokens: row.totals.prompt_tokens,
        completion_tokens: row.totals.completion_tokens,
        reasoning_tokens: row.totals.reasoning_tokens,
        provider: row.provider,
        ...(groupBy === 'api_key' ? { api_key_hash: row.key_hash } : {}),
        ...(groupBy === 'user' ? { user_id: row.user_id } : {}),
        ...(groupBy === 'end_user' ? { end_user: row.end_user } : {}),
        ...(query.group_by === 'workspace' ? { workspace_id: orgId } : {}),
      })),
    }
  },
})
