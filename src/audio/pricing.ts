import type { RequestCost } from '../billing/cost'
import { decimal, isZero, multiply, sum, toLedgerUnits, ZERO, type Decimal } from '../billing/decimal'
import type { AudioUsage, ModelPricing } from '../contracts'

/** What an audio request is billed by: reported tokens, characters of input text, or seconds of input audio. */
export type AudioBasis = 'tokens' | 'characters' | 'seconds'

/** The measures of one audio request. */
export interface AudioMeasures {
  /** Usage the upstream reported (tokens, or seconds of input audio). */
  reported?: AudioUsage | null
  /** Speech: characters (Unicode code points) of the input text. */
  characters?: number
  /** Transcription: seconds of input audio (the upstream's figure where it gave one). */
  seconds?: number
}

/** The exact cost of an audio request and what it was billed by. */
export interface AudioCost extends RequestCost {
  basis: AudioBasis
  /** The model has a token price (so a bill by characters or seconds is only an estimate of it). */
  tokenPriced: boolean
  inputTokens: number
  outputTokens: number
}

const price = (text: string | undefined, fallback: Decimal = ZERO): Decimal => (text === undefined ? fallback : decimal(text))
const count = (n: unknown): bigint => BigInt(typeof n === 'number' && Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0)
const hasTokens = (usage: AudioUsage | null | undefined): usage is AudioUsage =>
  !!usage && (typeof usage.input_tokens === 'number' || typeof usage.output_tokens === 'number')

/**
 * Prices an audio request exactly (docs/money.md, docs/audio.md#billing), rounded once to ledger units:
 * - by tokens when the upstream reported token usage and the model has a token price (`prompt` per text input token,
 *   `audio` per audio input token (default `prompt`), `completion` per output token — speech: audio output tokens);
 *   input tokens without `input_token_details` count as text tokens;
 * - otherwise by `character` × characters (speech) or `audio_second` × seconds (transcription);
 * plus `request` per request in both cases.
 */
export function priceAudio(pricing: ModelPricing, measures: AudioMeasures, eurPerUnit: string): AudioCost {
  const prompt = price(pricing.prompt)
  const completion = price(pricing.completion)
  const audio = price(pricing.audio, prompt)
  const tokenPriced = !isZero(prompt) || !isZero(completion) || !isZero(audio)
  const reported = measures.reported
  let basis: AudioBasis
  let inputSide: Decimal
  let outputSide: Decimal = ZERO
  let inputTokens = 0
  let outputTokens = 0
  if (hasTokens(reported) && tokenPriced) {
    basis = 'tokens'
    const input = count(reported.input_tokens)
    const details = reported.input_token_details ?? undefined
    const audioTokens = details ? count(details.audio_tokens) : 0n
    const textTokens = details && details.text_tokens !== undefined ? count(details.text_tokens) : input - audioTokens > 0n ? input - audioTokens : 0n
    inputSide = sum([multiply(decimal(textTokens), prompt), multiply(decimal(audioTokens), audio)])
    outputSide = multiply(decimal(count(reported.output_tokens)), completion)
    inputTokens = Number(input)
    outputTokens = Number(count(reported.output_tokens))
  } else if (measures.seconds !== undefined) {
    basis = 'seconds'
    inputSide = multiply(decimal(Math.max(0, measures.seconds)), price(pricing.audio_second))
  } else {
    basis = 'characters'
    inputSide = multiply(decimal(count(measures.characters)), price(pricing.character))
  }
  if (hasTokens(reported) && basis !== 'tokens') {
    inputTokens = Number(count(reported.input_tokens))
    outputTokens = Number(count(reported.output_tokens))
  }
  const promptSide = sum([inputSide, price(pricing.request)])
  const total = sum([promptSide, outputSide])
  return {
    basis,
    tokenPriced,
    inputTokens,
    outputTokens,
    currency: pricing.currency ?? 'USD',
    units: toLedgerUnits(total),
    eurUnits: toLedgerUnits(multiply(total, decimal(eurPerUnit))),
    promptUnits: toLedgerUnits(promptSide),
    completionUnits: toLedgerUnits(outputSide),
  }
}
