import { chargeView, exactAmount } from '../generation/money-view'
import type { BilledImages } from './billing'

/** The `usage` of an image generation answer (docs/images.md#billing): OpenAI's token usage, what it was charged, how many images. */
export function imagesUsageView(billed: BilledImages, images: number): Record<string, unknown> {
  const { tokens } = billed.cost
  const input = tokens.textInput + tokens.imageInput
  const output = tokens.imageOutput + tokens.textOutput
  return {
    ...chargeView(billed.charged, billed.currency),
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    input_tokens_details: { text_tokens: tokens.textInput, image_tokens: tokens.imageInput },
    output_tokens_details: { image_tokens: tokens.imageOutput, text_tokens: tokens.textOutput },
    images,
    cost_details: { upstream_inference_cost: exactAmount(billed.cost.units) },
    ...(billed.estimated ? { estimated: true } : {}),
  }
}
