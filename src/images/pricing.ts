import type { RequestCost } from '../billing/cost'
import { decimal, multiply, sum, toLedgerUnits, ZERO, type Decimal } from '../billing/decimal'
import type { ImageUsage, ModelPricing } from '../contracts'

/** The tokens an image generation is billed by: text and image input tokens, image and text output tokens. */
export interface ImageTokens {
  textInput: number
  imageInput: number
  imageOutput: number
  textOutput: number
}

/** The exact cost of an image generation and the tokens it was priced by. */
export interface ImageCost extends RequestCost {
  tokens: ImageTokens
}

const price = (text: string | undefined, fallback: Decimal = ZERO): Decimal => (text === undefined ? fallback : decimal(text))
const count = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0)

/** Whether the upstream reported token usage. */
export const hasImageTokens = (usage: ImageUsage | null | undefined): usage is ImageUsage =>
  !!usage && (typeof usage.input_tokens === 'number' || typeof usage.output_tokens === 'number')

/**
 * The tokens of a reported usage, as OpenAI's GPT Image models report it: input tokens split by
 * `input_tokens_details` (without it, all text), output tokens split by `output_tokens_details` (without it, all image).
 */
export function tokensOfUsage(usage: ImageUsage): ImageTokens {
  const input = count(usage.input_tokens)
  const inDetails = usage.input_tokens_details ?? undefined
  const imageInput = inDetails ? count(inDetails.image_tokens) : 0
  const textInput = inDetails && inDetails.text_tokens !== undefined ? count(inDetails.text_tokens) : Math.max(0, input - imageInput)
  const output = count(usage.output_tokens)
  const outDetails = usage.output_tokens_details ?? undefined
  const textOutput = outDetails ? count(outDetails.text_tokens) : 0
  const imageOutput = outDetails && outDetails.image_tokens !== undefined ? count(outDetails.image_tokens) : Math.max(0, output - textOutput)
  return { textInput, imageInput, imageOutput, textOutput }
}

/**
 * Prices an image generation exactly (docs/images.md#billing), rounded once to ledger units: `prompt` per input token
 * (a generation's input is its text prompt; image input tokens, which only edits have, are priced as text),
 * `image_output` per image output token, `completion` per text output token, plus `request` per request.
 */
export function priceImages(pricing: ModelPricing, tokens: ImageTokens, eurPerUnit: string): ImageCost {
  const prompt = price(pricing.prompt)
  const inputSide = sum([multiply(decimal(tokens.textInput), prompt), multiply(decimal(tokens.imageInput), prompt), price(pricing.request)])
  const outputSide = sum([multiply(decimal(tokens.imageOutput), price(pricing.image_output)), multiply(decimal(tokens.textOutput), price(pricing.completion))])
  const total = sum([inputSide, outputSide])
  return {
    tokens,
    currency: pricing.currency ?? 'USD',
    units: toLedgerUnits(total),
    eurUnits: toLedgerUnits(multiply(total, decimal(eurPerUnit))),
    promptUnits: toLedgerUnits(inputSide),
    completionUnits: toLedgerUnits(outputSide),
  }
}
