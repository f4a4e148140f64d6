import type { MaxCost } from '../billing/holds'
import { platformFee } from '../billing/byok-fees'
import type { GatewayContext } from '../context'
import type { Attempt } from '../routing/plan'
import { priceAudio, type AudioMeasures } from './pricing'

/** Tokens an audio request is assumed to use at most per character of speech input (text in, audio out). */
export const SPEECH_TOKENS_PER_CHARACTER = { input: 1, output: 8 }
/** Tokens a transcription is assumed to use at most per second of input audio (audio in, text out). */
export const TRANSCRIPTION_TOKENS_PER_SECOND = { input: 40, output: 10 }

/**
 * The most an audio request can cost, in EUR, over its attempts (docs/money.md): the dearer of its price by
 * characters or seconds and by tokens at generous rates per character or second; a customer's key owes only the fee.
 */
export function maxAudioCost(ctx: GatewayContext, attempts: Attempt[], measure: { characters: number } | { seconds: number }): MaxCost {
  const tokens =
    'characters' in measure
      ? { input_tokens: measure.characters * SPEECH_TOKENS_PER_CHARACTER.input, output_tokens: measure.characters * SPEECH_TOKENS_PER_CHARACTER.output }
      : {
          input_tokens: Math.ceil(measure.seconds * TRANSCRIPTION_TOKENS_PER_SECOND.input),
          output_tokens: Math.ceil(measure.seconds * TRANSCRIPTION_TOKENS_PER_SECOND.output),
        }
  let worst = 0n
  let withByok = 0n
  for (const attempt of attempts) {
    const pricing = attempt.offer.model.pricing
    const rate = ctx.options.exchangeRates[pricing.currency ?? 'USD']
    const measures: AudioMeasures = 'characters' in measure ? { characters: measure.characters } : { seconds: measure.seconds }
    const byMeasure = priceAudio(pricing, measures, rate).eurUnits
    const byTokens = priceAudio(pricing, { ...measures, reported: tokens }, rate).eurUnits
    const most = byMeasure > byTokens ? byMeasure : byTokens
    const eurUnits = attempt.credential ? platformFee(ctx, most) : most
    if (eurUnits > worst) worst = eurUnits
    // With a customer's key, what a key whose limit counts BYOK usage holds: the upstream cost and the fee (docs/keys.md).
    if (most + (attempt.credential ? eurUnits : 0n) > withByok) withByok = most + (attempt.credential ? eurUnits : 0n)
  }
  return { eurUnits: worst, withByokEurUnits: withByok }
}
