import { type Charged, chargeAndRecord, requestFacts, type RequestOutcome } from '../billing/charge'
import { priceUsage, type RequestCost } from '../billing/cost'
import type { GatewayContext } from '../context'
import type { UpstreamUsage } from '../contracts'
import type { ChatRequest } from '../schemas/chat'
import type { Attempt } from '../routing/plan'
import { healthKeyOf } from '../routing/attempts'
import type { UsageRecord } from '../stores/usage'
import { estimateTokens } from '../generation/estimate'
import { countImages, maxCompletionTokens } from './max-cost'
import { choicesOf } from './choices'

/** What is known of a finished (or ended) chat request when it is billed. */
export interface SettleInput extends RequestOutcome {
  request: ChatRequest
  usage: UpstreamUsage
  estimated: boolean
}

/** What a chat request was billed (docs/money.md): its usage, what it cost upstream and what it was charged; chat/usage-view.ts shows it. */
export interface BilledChat {
  usage: UpstreamUsage
  /** The usage is the gateway's estimate (the provider reported none). */
  estimated: boolean
  currency: string
  cost: RequestCost
  charged: Charged
}

/** True when the attempt's model may produce hidden reasoning tokens (the catalogue says it reasons, or the request asks it to). */
export function mayReason(request: ChatRequest, attempt: Attempt): boolean {
  const model = attempt.offer.model
  return model.reasoning !== undefined || !!model.supportedParameters?.includes('reasoning') || request.reasoning !== undefined
}

/** Completion tokens a reasoning model is assumed to produce per second of a stream that ended without a usage report. */
export const REASONING_TOKENS_PER_SECOND = 100

/**
 * The usage billed for a stream that ended before its provider reported any (docs/money.md): tokens estimated from
 * the text (4 characters a token); when a reasoning model's stream was cancelled or failed, at least the tokens it
 * could have reasoned in the time it ran (REASONING_TOKENS_PER_SECOND), never more than its maximum completion tokens.
 */
export function estimatedUsage(
  _ctx: GatewayContext,
  request: ChatRequest,
  attempt: Attempt,
  facts: { generatedChars: number; status: UsageRecord['status']; elapsedMs: number },
): UpstreamUsage {
  const prompt = estimateTokens(JSON.stringify(request.messages).length)
  let completion = estimateTokens(facts.generatedChars)
  if (facts.status !== 'success' && mayReason(request, attempt)) {
    // Each of the request's n choices reasons at that pace, up to its own maximum.
    const choices = choicesOf(request)
    const ceiling = maxCompletionTokens(request, attempt, prompt) * choices
    const byTime = Math.ceil((Math.max(0, facts.elapsedMs) / 1000) * REASONING_TOKENS_PER_SECOND) * choices
    completion = Math.min(ceiling, Math.max(completion, byTime))
  }
  return { prompt_tokens: prompt, completion_tokens: completion }
}

// How fast the provider generated a served answer, for its health (docs/routing.md): reported completion tokens over
// the time from the first chunk (a stream) or the start (a whole answer) to now. Estimates and short answers say nothing.
function recordSpeed(ctx: GatewayContext, input: SettleInput) {
  if (input.status !== 'success' || input.estimated || input.usage.completion_tokens < 10) return
  const seconds = (ctx.now() - (input.firstChunkAt ?? input.startedAt)) / 1000
  if (seconds > 0) ctx.health.recordThroughput(healthKeyOf(input.attempt), input.usage.completion_tokens / seconds)
}

/** Prompt tokens read from the cache, as billed (0 when unreported). */
export const cachedTokensOf = (usage: UpstreamUsage): number => usage.prompt_tokens_details?.cached_tokens ?? 0

/** Prompt tokens written to the cache, as billed (0 when unreported). */
export const cacheWriteTokensOf = (usage: UpstreamUsage): number => usage.prompt_tokens_details?.cache_write_tokens ?? 0

/** Hidden reasoning tokens among the completion tokens, as billed (0 when unreported). */
export const reasoningTokensOf = (usage: UpstreamUsage): number => usage.completion_tokens_details?.reasoning_tokens ?? 0

/**
 * Prices the request, records its usage, and charges for it: the service's key charges the cost to credits now; a
 * customer's key (BYOK) owes only the platform fee, pending until settlement. Returns the amounts billed (the answer's
 * usage object is built from them where the answer is written: chat/usage-view.ts).
 */
export async function settle(ctx: GatewayContext, input: SettleInput): Promise<BilledChat> {
  const { principal, attempt, usage } = input
  const pricing = attempt.offer.model.pricing
  const currency = pricing.currency ?? 'USD'
  const cost = priceUsage(pricing, usage, { images: countImages(input.request) }, ctx.options.exchangeRates[currency])
  const facts = Object.assign(requestFacts(ctx, input), {
    endpoint: 'chat' as const,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_tokens: cachedTokensOf(usage),
    cache_write_tokens: cacheWriteTokensOf(usage),
    reasoning_tokens: reasoningTokensOf(usage),
    usage_estimated: input.estimated,
    currency,
  })
  const charged = await chargeAndRecord(ctx, { principal, attempt, cost, facts, hold: input.hold })
  recordSpeed(ctx, input)
  return { usage, estimated: input.estimated, currency, cost, charged }
}
