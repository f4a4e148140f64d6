import { chargeView, exactAmount } from '../generation/money-view'
import type { BilledAudio } from './billing'

/** The `usage` of an audio answer (docs/audio.md#billing): what it was charged, its tokens, its measures and how it was billed. */
export function audioUsageView(billed: BilledAudio): Record<string, unknown> {
  const { cost, measures } = billed
  return {
    ...chargeView(billed.charged, billed.currency),
    input_tokens: cost.inputTokens,
    output_tokens: cost.outputTokens,
    total_tokens: cost.inputTokens + cost.outputTokens,
    ...(measures.seconds !== undefined ? { seconds: measures.seconds } : {}),
    ...(measures.characters !== undefined ? { characters: measures.characters } : {}),
    billed_by: cost.basis,
    cost_details: { upstream_inference_cost: exactAmount(cost.units) },
    ...(billed.estimated ? { estimated: true } : {}),
  }
}
