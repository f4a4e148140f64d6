import { createHash } from 'node:crypto'
import { CAPABILITIES } from '../contracts'
import { fromUnits } from '../billing/money'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest, notFound } from '../errors'
import { ExactNumber } from '../http/exact-json'
import type { Principal } from '../stores/account-types'
import { dayOf, type RollupEntry, type RollupTotals } from '../stores/rollups'
import type { UsageRecord } from '../stores/usage'
import { activityQuerySchema, activitySchema, creditsSchema, generationQuerySchema, generationSchema } from '../schemas/usage'
import { defineRoute } from './define'

const tag = 'Usage'
const DAY_MS = 86_400_000
/** GET /activity covers today and this many completed UTC days before it (OpenRouter: the last 30 completed days). */
export const ACTIVITY_DAYS = 30
/** Days whose rollups are read at once. */
const DAYS_AT_ONCE = 4

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
    native_tokens_completion_images: null,
    native_tokens_reasoning: record.reasoning_tokens,
    native_tokens_cached: record.cached_tokens,
    num_media_prompt: null,
    num_input_audio_prompt: record.endpoint === 'transcription' ? 1 : null,
    num_media_completion: null,
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
    response_cache_source_id: null,
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
  const hex = createHash('sha256').update(`${provider}\n${model}`).digest('hex')
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

const addTotals = (sum: RollupTotals, more: RollupTotals): RollupTotals => ({
  requests: sum.requests + more.requests,
  prompt_tokens: sum.prompt_tokens + more.prompt_tokens,
  completion_tokens: sum.completion_tokens + more.completion_tokens,
  reasoning_tokens: sum.reasoning_tokens + more.reasoning_tokens,
  usage: sum.usage + more.usage,
  byok_usage_inference: sum.byok_usage_inference + more.byok_usage_inference,
})

/** The days GET /activity covers at `now`: today first, then the 30 completed days before it. */
export function activityDays(now: number): string[] {
  return Array.from({ length: ACTIVITY_DAYS + 1 }, (_, i) => dayOf(now - i * DAY_MS))
}

/**
 * Whose usage GET /activity shows the caller (docs/usage.md#get-apiv1activity): a management key sees its whole org
 * (filtered by `api_key_hash` when asked), an API key only its own requests; asking it for another key's is a 403.
 */
function activityKeyFilter(principal: Principal, asked: string | undefined): string | undefined {
  if (principal.key.management) return asked
  if (asked !== undefined && asked !== principal.key.hash) {
    throw new GatewayError(403, "An API key reads only its own activity: read another key's, or the whole organisation's, with a management key", {
      param: 'api_key_hash',
    })
  }
  return principal.key.hash
}

/**
 * GET /activity: usage per UTC day, model and provider, from the rollups kept as requests are billed (never from
 * usage records); newest day first, then by model and provider. A management key reads its org's; an API key its own.
 */
export const activityRoute = defineRoute({
  method: 'GET',
  path: '/activity',
  operationId: 'getUserActivity',
  summary: 'Usage per day, model and provider over the last 30 days and today (the org’s with a management key, the key’s own with an API key)',
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
    const byKey = query.group_by === 'api_key'
    const rollups = ctx.rollups
    const days = query.date !== undefined ? [query.date] : window
    const filter = { keyHash: activityKeyFilter(principal, query.api_key_hash?.toLowerCase()), userId: query.user_id }
    const read: Awaited<ReturnType<typeof rollups.day>>[] = []
    for (let i = 0; i < days.length; i += DAYS_AT_ONCE)
      read.push(...(await Promise.all(days.slice(i, i + DAYS_AT_ONCE).map((day) => rollups.day(orgId, day, filter)))))
    const data = []
    for (const [d, day] of days.entries()) {
      const rows = new Map<string, { entry: RollupEntry; totals: RollupTotals }>()
      for (const { entry, totals } of read[d]) {
        const group = `${entry.model}\n${entry.provider}${byKey ? `\n${entry.key_hash ?? ''}` : ''}`
        const row = rows.get(group)
        rows.set(group, row ? { entry: row.entry, totals: addTotals(row.totals, totals) } : { entry, totals })
      }
      const sorted = [...rows.values()].sort(
        (a, b) =>
          a.entry.model.localeCompare(b.entry.model) ||
          a.entry.provider.localeCompare(b.entry.provider) ||
          (a.entry.key_hash ?? '').localeCompare(b.entry.key_hash ?? ''),
      )
      for (const { entry, totals } of sorted) {
        data.push({
          date: day,
          model: entry.model,
          model_permaslug: entry.model_permaslug,
          endpoint_id: endpointIdOf(entry.model, entry.provider),
          provider_name: entry.provider_name,
          usage: exactUnits(totals.usage),
          byok_usage_inference: exactUnits(totals.byok_usage_inference),
          requests: totals.requests,
          prompt_tokens: totals.prompt_tokens,
          completion_tokens: totals.completion_tokens,
          reasoning_tokens: totals.reasoning_tokens,
          provider: entry.provider,
          ...(byKey ? { api_key_hash: entry.key_hash } : {}),
          ...(query.group_by === 'workspace' ? { workspace_id: orgId } : {}),
        })
      }
    }
    return { data }
  },
})
