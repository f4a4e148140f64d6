import { type Charged, chargeAndRecord, requestFacts, type RequestOutcome } from '../billing/charge'
import { priceUsage, type RequestCost } from '../billing/cost'
import type { GatewayContext } from '../context'

/** What is known of a served embeddings request when it is billed. */
export interface EmbeddingsSettleInput extends RequestOutcome {
  /** Input tokens: the provider's count, else the gateway's estimate. */
  promptTokens: number
  estimated: boolean
}

/** What an embeddings request was billed: its input tokens, what it cost upstream and what it was charged (embeddings/usage-view.ts shows it). */
export interface BilledEmbeddings {
  promptTokens: number
  estimated: boolean
  currency: string
  cost: RequestCost
  charged: Charged
}

/**
 * Bills an embeddings request as chat is billed (docs/embeddings.md#billing, docs/money.md): its input tokens at the
 * model's prompt price; the service's key charges the cost to credits now, a customer's key (BYOK) owes only the
 * platform fee; one usage record with endpoint `embeddings`. Returns the amounts billed.
 */
export async function settleEmbeddings(ctx: GatewayContext, input: EmbeddingsSettleInput): Promise<BilledEmbeddings> {
  const { principal, attempt, promptTokens } = input
  const pricing = attempt.offer.model.pricing
  const currency = pricing.currency ?? 'USD'
  const cost = priceUsage(pricing, { prompt_tokens: promptTokens, completion_tokens: 0 }, {}, ctx.options.exchangeRates[currency])
  const charged = await chargeAndRecord(ctx, {
    principal,
    attempt,
    cost,
    hold: input.hold,
    facts: {
      ...requestFacts(ctx, input),
      endpoint: 'embeddings',
      prompt_tokens: promptTokens,
      completion_tokens: 0,
      cached_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      usage_estimated: input.estimated,
      currency,
    },
  })
  return { promptTokens, estimated: input.estimated, currency, cost, charged }
}
