import { chargeAndRecord, chargeView, exactAmount, requestFacts, type RequestOutcome } from '../billing/charge'
import { priceUsage } from '../billing/cost'
import type { GatewayContext } from '../context'

/** What is known of a served embeddings request when it is billed. */
export interface EmbeddingsSettleInput extends RequestOutcome {
  /** Input tokens: the provider's count, else the gateway's estimate. */
  promptTokens: number
  estimated: boolean
}

/**
 * Bills an embeddings request as chat is billed (docs/embeddings.md#billing, docs/money.md): its input tokens at the
 * model's prompt price; the service's key charges the cost to credits now, a customer's key (BYOK) owes only the
 * platform fee; one usage record with endpoint `embeddings`. Returns the API's usage object.
 */
export async function settleEmbeddings(ctx: GatewayContext, input: EmbeddingsSettleInput): Promise<Record<string, unknown>> {
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
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens,
    ...chargeView(charged, currency),
    cost_details: {
      upstream_inference_cost: exactAmount(cost.units),
      upstream_inference_prompt_cost: exactAmount(cost.promptUnits),
    },
    ...(input.estimated ? { estimated: true } : {}),
  }
}
