import { platformFee } from '../billing/byok-fees'
import { priceUsage } from '../billing/cost'
import type { MaxCost } from '../billing/holds'
import type { GatewayContext } from '../context'
import type { Attempt } from '../routing/plan'

/**
 * The most an embeddings request can cost, in EUR, over its attempts (docs/money.md): its input tokens at most (a
 * string's UTF-8 bytes, a token array's length) at each attempt's prompt price; a customer's key (BYOK) owes only the
 * platform fee on that.
 */
export function maxEmbeddingsCost(ctx: GatewayContext, attempts: Attempt[], maxTokens: number): MaxCost {
  let worst = 0n
  let withByok = 0n
  for (const attempt of attempts) {
    const pricing = attempt.offer.model.pricing
    const cost = priceUsage(pricing, { prompt_tokens: maxTokens, completion_tokens: 0 }, {}, ctx.options.exchangeRates[pricing.currency ?? 'USD'])
    const eurUnits = attempt.credential ? platformFee(ctx, cost.eurUnits) : cost.eurUnits
    if (eurUnits > worst) worst = eurUnits
    // With a customer's key, what a key whose limit counts BYOK usage holds: the upstream cost and the fee (docs/keys.md).
    const both = cost.eurUnits + (attempt.credential ? eurUnits : 0n)
    if (both > withByok) withByok = both
  }
  return { eurUnits: worst, withByokEurUnits: withByok, maxTotalTokens: maxTokens }
}
