import { assessByokFee, notePending } from '../billing/byok-fees'
import { priceUsage } from '../billing/cost'
import { fromUnits } from '../billing/money'
import type { GatewayContext } from '../context'
import { ExactNumber } from '../http/exact-json'
import type { UpstreamUsage } from '../providers/types'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import type { UsageRecord } from '../stores/usage'
import type { Attempt } from '../routing/plan'

/** What is known of a finished (or ended) request when it is billed. */
export interface SettleInput {
  principal: Principal
  attempt: Attempt
  request: ChatRequest
  usage: UpstreamUsage
  estimated: boolean
  generationId: string
  upstreamId: string | null
  stream: boolean
  status: UsageRecord['status']
  startedAt: number
  attempts: number
}

const exact = (units: bigint) => new ExactNumber(fromUnits(units))

/** Counts the image parts of a request's messages (priced per image where the model has an image price). */
export function countImages(request: ChatRequest): number {
  let images = 0
  for (const message of request.messages) {
    if (Array.isArray(message.content)) for (const part of message.content) if ((part as { type: string }).type === 'image_url') images++
  }
  return images
}

/** Rough token count of text, for billing a stream that ended before the provider reported usage. */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4)

/**
 * Prices the request, records its usage, and charges for it: the service's key charges the cost to credits now; a
 * customer's key (BYOK) owes only the platform fee, pending until settlement. Returns the API's usage object.
 */
export async function settle(ctx: GatewayContext, input: SettleInput): Promise<Record<string, unknown>> {
  const { principal, attempt, usage } = input
  const pricing = attempt.offer.model.pricing
  const currency = pricing.currency ?? 'USD'
  const cost = priceUsage(pricing, usage, { images: countImages(input.request) }, ctx.options.exchangeRates[currency])
  const byok = attempt.credential !== undefined
  const counted = byok && input.status === 'success'
  const fee = byok ? await assessByokFee(ctx, principal.org.id, cost, counted) : undefined
  const charged = fee ? { units: fee.units, eurUnits: fee.eurUnits } : cost
  const now = ctx.now()
  const record: UsageRecord = {
    id: input.generationId,
    org_id: principal.org.id,
    user_id: principal.user.id,
    key_hash: principal.key.hash,
    endpoint: 'chat',
    model: attempt.entry.id,
    provider: attempt.offer.provider.slug,
    upstream_id: input.upstreamId,
    stream: input.stream,
    status: input.status,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    usage_estimated: input.estimated,
    currency,
    cost: fromUnits(charged.units),
    cost_eur: fromUnits(charged.eurUnits),
    is_byok: byok,
    upstream_inference_cost: fromUnits(cost.units),
    latency_ms: Math.max(0, now - input.startedAt),
    attempts: input.attempts,
    created_at: new Date(now).toISOString(),
    ...(byok ? { credential_id: attempt.credential!.id, upstream_cost_eur: fromUnits(cost.eurUnits), byok_counted: counted, byok_free: fee!.free } : {}),
  }
  try {
    await Promise.all([
      byok ? undefined : ctx.credits.chargeUnits(principal.org.id, cost.eurUnits),
      !byok && principal.key.credit_limit ? ctx.atomic.addUnits(ctx.kv.key('credits', 'key', principal.key.hash, 'used'), cost.eurUnits) : undefined,
      ctx.usage.append(record),
      counted ? notePending(ctx, principal.org.id, record.id, fee!.eurUnits) : undefined,
    ])
  } catch (error) {
    // The provider has served the request: never fail the answer for it, but leave everything needed to reconcile.
    ctx.logger.error('billing failed: charge this request by hand', { record, error: (error as Error).message })
  }
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: record.cached_tokens, cache_write_tokens: record.cache_write_tokens, ...(usage.prompt_tokens_details ?? {}) },
    completion_tokens_details: { reasoning_tokens: record.reasoning_tokens, ...(usage.completion_tokens_details ?? {}) },
    cost: exact(charged.units),
    cost_currency: currency,
    cost_eur: exact(charged.eurUnits),
    is_byok: byok,
    cost_details: {
      upstream_inference_cost: exact(cost.units),
      upstream_inference_prompt_cost: exact(cost.promptUnits),
      upstream_inference_completions_cost: exact(cost.completionUnits),
    },
    ...(input.estimated ? { estimated: true } : {}),
  }
}
