import { type Charged, chargeAndRecord, requestFacts, type RequestOutcome } from '../billing/charge'
import type { GatewayContext } from '../context'
import { priceAudio, type AudioCost, type AudioMeasures } from './pricing'

/** What is known of a finished (or ended) audio request when it is billed. */
export interface AudioSettleInput extends RequestOutcome {
  endpoint: 'speech' | 'transcription'
  measures: AudioMeasures
  /** The characters or seconds measured are an estimate (a duration guessed from the size of the audio). */
  estimatedMeasure: boolean
}

/** What an audio request was billed: how it was measured and priced, and what it was charged (audio/usage-view.ts shows it). */
export interface BilledAudio {
  cost: AudioCost
  measures: AudioMeasures
  estimated: boolean
  currency: string
  charged: Charged
}

/**
 * Bills an audio request exactly as chat is billed (docs/money.md, docs/byok.md, docs/audio.md#billing): priced once,
 * the service's key charges the cost to credits now, a customer's key (BYOK) owes only the platform fee (pending until
 * settlement); one usage record. Never throws for a storage failure (the provider has served the request): it logs what
 * to reconcile. Returns the amounts billed.
 */
export async function settleAudio(ctx: GatewayContext, input: AudioSettleInput): Promise<BilledAudio> {
  const { principal, attempt } = input
  const pricing = attempt.offer.model.pricing
  const currency = pricing.currency ?? 'USD'
  const cost = priceAudio(pricing, input.measures, ctx.options.exchangeRates[currency])
  // An estimate: billed by a measure that was guessed, or by characters/seconds where the model is priced by token.
  const estimated = cost.basis !== 'tokens' && (input.estimatedMeasure || cost.tokenPriced)
  const charged = await chargeAndRecord(ctx, {
    principal,
    attempt,
    cost,
    hold: input.hold,
    facts: {
      ...requestFacts(ctx, input),
      endpoint: input.endpoint,
      prompt_tokens: cost.inputTokens,
      completion_tokens: cost.outputTokens,
      cached_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      usage_estimated: estimated,
      currency,
      billed_by: cost.basis,
      ...(input.measures.characters !== undefined ? { characters: input.measures.characters } : {}),
      ...(input.measures.seconds !== undefined ? { audio_seconds: input.measures.seconds } : {}),
    },
  })
  return { cost, measures: input.measures, estimated, currency, charged }
}
