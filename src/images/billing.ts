import { type Charged, chargeAndRecord, requestFacts, type RequestOutcome } from '../billing/charge'
import type { GatewayContext } from '../context'
import { priceImages, type ImageCost, type ImageTokens } from './pricing'

/** What is known of a served image generation when it is billed. */
export interface ImagesSettleInput extends RequestOutcome {
  tokens: ImageTokens
  /** The provider reported no usage: the tokens are the gateway's estimate. */
  estimated: boolean
  /** The images returned. */
  images: number
}

/** What an image generation was billed: its tokens, what it cost upstream and what it was charged (images/usage-view.ts shows it). */
export interface BilledImages {
  cost: ImageCost
  estimated: boolean
  currency: string
  charged: Charged
}

/**
 * Bills an image generation as chat is billed (docs/images.md#billing, docs/money.md): priced once from its tokens; the
 * service's key charges the cost to credits now, a customer's key (BYOK) owes only the platform fee; one usage record
 * with endpoint `images`. Returns the amounts billed.
 */
export async function settleImages(ctx: GatewayContext, input: ImagesSettleInput): Promise<BilledImages> {
  const { principal, attempt, tokens } = input
  const pricing = attempt.offer.model.pricing
  const currency = pricing.currency ?? 'USD'
  const cost = priceImages(pricing, tokens, ctx.options.exchangeRates[currency])
  const charged = await chargeAndRecord(ctx, {
    principal,
    attempt,
    cost,
    hold: input.hold,
    facts: {
      ...requestFacts(ctx, input),
      endpoint: 'images',
      prompt_tokens: tokens.textInput + tokens.imageInput,
      completion_tokens: tokens.imageOutput + tokens.textOutput,
      cached_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      usage_estimated: input.estimated,
      currency,
      images: input.images,
    },
  })
  return { cost, estimated: input.estimated, currency, charged }
}
