import { chargeAndRecord } from '../billing/charge'
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
  const now = ctx.now()
  const facts = {
    id: input.generationId,
    org_id: principal.org.id,
    user_id: principal.user.id,
    key_hash: principal.key.hash,
    endpoint: 'chat' as const,
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
    latency_ms: Math.max(0, now - input.startedAt),
    attempts: input.attempts,
    created_at: new Date(now).toISOString(),
  }
  const charged = await chargeAndRecord(ctx, { principal, attempt, cost, facts })
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: facts.cached_tokens, cache_write_tokens: facts.cache_write_tokens, ...(usage.prompt_tokens_details ?? {}) },
    completion_tokens_details: { reasoning_tokens: facts.reasoning_tokens, ...(usage.completion_tokens_details ?? {}) },
    cost: exact(charged.units),
    cost_currency: currency,
    cost_eur: exact(charged.eurUnits),
    is_byok: charged.byok,
    cost_details: {
      upstream_inference_cost: exact(cost.units),
      upstream_inference_prompt_cost: exact(cost.promptUnits),
      upstream_inference_completions_cost: exact(cost.completionUnits),
    },
    ...(input.estimated ? { estimated: true } : {}),
  }
}
