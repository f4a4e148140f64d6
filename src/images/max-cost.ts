import { platformFee } from '../billing/byok-fees'
import type { MaxCost } from '../billing/holds'
import type { GatewayContext } from '../context'
import type { Attempt } from '../routing/plan'
import { priceImages, type ImageTokens } from './pricing'

/**
 * The most an image generation can cost, in EUR, over its attempts (docs/money.md, docs/images.md#billing): its prompt's
 * UTF-8 bytes as text input tokens and `n` images of the most output tokens the quality and size may take, at each
 * attempt's prices; a customer's key (BYOK) owes only the platform fee on that.
 */
export function maxImagesCost(ctx: GatewayContext, attempts: Attempt[], tokens: ImageTokens): MaxCost {
  let worst = 0n
  let withByok = 0n
  for (const attempt of attempts) {
    const pricing = attempt.offer.model.pricing
    const cost = priceImages(pricing, tokens, ctx.options.exchangeRates[pricing.currency ?? 'USD'])
    const eurUnits = attempt.credential ? platformFee(ctx, cost.eurUnits) : cost.eurUnits
    if (eurUnits > worst) worst = eurUnits
    // With a customer's key, what a key whose limit counts BYOK usage holds: the upstream cost and the fee (docs/keys.md).
    const both = cost.eurUnits + (attempt.credential ? eurUnits : 0n)
    if (both > withByok) withByok = both
  }
  return { eurUnits: worst, withByokEurUnits: withByok }
}
