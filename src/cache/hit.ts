import type { Charged } from '../billing/charge'
import { rollupCounters } from '../billing/rollup-counters'
import { placeHold } from '../billing/holds'
import { fromUnits, toUnits } from '../billing/money'
import type { GatewayContext } from '../context'
import { newId } from '../crypto/keys'
import { newGenerationId } from '../generation/id'
import type { GenerationTags } from '../http/attribution'
import { gatewayResponse } from '../http/respond'
import type { Principal } from '../stores/account-types'
import type { CachedAnswer } from '../stores/response-cache'
import type { UsageRecord } from '../stores/usage'
import { streamHitText, wholeHitText } from './hit-usage'
import { CACHE_STATUS_HEADER, CACHE_TTL_HEADER, type CachePlan } from './plan'

/** What a hit is answered for: the caller, its request's attribution fields, and its cache plan. */
export interface HitInput {
  principal: Principal
  requestId: string
  tags: GenerationTags
  plan: CachePlan
  startedAt: number
}

/**
 * Charges a hit its fee (`cache.hitFee`, 0 by default) through a hold and its settlement, as any request, writing its
 * usage record (no tokens, `cache_hit`, `cached_from` the generation replayed): docs/cache.md#what-a-hit-costs.
 */
async function chargeHit(ctx: GatewayContext, entry: CachedAnswer, input: HitInput, generationId: string): Promise<Charged> {
  const { principal } = input
  const fee = toUnits(ctx.options.cache.hitFee)
  const hold = await placeHold(ctx, principal, newId(), { eurUnits: fee })
  const now = ctx.now()
  const record: UsageRecord = Object.assign({}, input.tags, entry.facts, {
    id: generationId,
    org_id: principal.org.id,
    user_id: principal.user.id,
    end_user: principal.endUser ?? null,
    via: principal.via ?? 'key',
    key_hash: principal.key.hash,
    upstream_id: null,
    status: 'success' as const,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    usage_estimated: false,
    currency: 'EUR',
    cost: fromUnits(fee),
    cost_eur: fromUnits(fee),
    is_byok: false,
    upstream_inference_cost: '0',
    latency_ms: Math.max(0, now - input.startedAt),
    first_token_ms: Math.max(0, now - input.startedAt),
    attempts: 0,
    created_at: new Date(now).toISOString(),
    cache_hit: true,
    cached_from: entry.generation_id,
  })
  const ledger = fee > 0n ? ctx.credits.chargeEntry(record.org_id, fee, `${record.endpoint} ${record.model} (cache hit)`, record.id) : undefined
  const written = [...(ledger ? [{ key: ledger.key, value: ledger.entry }] : []), ...ctx.usage.entriesOf(record)]
  const found = rollupCounters(ctx, record, { model_permaslug: record.model, provider_name: record.provider_name ?? record.provider })
  const rollups = Array.isArray(found) ? found : await found
  try {
    await hold.settle(fee, { records: written, once: ctx.usage.pointerKey(record), counters: rollups })
  } catch (error) {
    await hold.release().catch(() => undefined)
    throw error
  }
  ctx.requestLog.note(input.requestId, { generation_id: record.id, model: record.model, cost_eur: record.cost_eur, billed_status: 'success' })
  return { units: fee, eurUnits: fee, byok: false }
}

/**
 * Answers a request from its cached answer (docs/cache.md#what-a-hit-replays): the bytes first sent, with a new
 * generation id where the first one was and the usage shown as the hit's (0, or its fee), after charging the hit.
 */
export async function answerHit(ctx: GatewayContext, entry: CachedAnswer, input: HitInput): Promise<Response> {
  const generationId = newGenerationId(ctx.now())
  await chargeHit(ctx, entry, input, generationId)
  const text = entry.parts.join(generationId)
  const fee = fromUnits(toUnits(ctx.options.cache.hitFee))
  const body = entry.facts.stream ? streamHitText(text, fee) : wholeHitText(text, fee)
  const headers: Record<string, string> = {
    'content-type': entry.content_type,
    'x-generation-id': generationId,
    [CACHE_STATUS_HEADER]: 'HIT',
    [CACHE_TTL_HEADER]: String(input.plan.ttlSeconds),
  }
  if (entry.facts.stream) headers['cache-control'] = 'no-cache'
  return gatewayResponse(body, 200, headers, input.requestId)
}
