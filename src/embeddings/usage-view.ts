import { chargeView, exactAmount } from '../generation/money-view'
import type { BilledEmbeddings } from './billing'

/**
 * The `usage` of an embeddings answer (docs/embeddings.md#the-answer): its input tokens, then what it cost and was
 * charged; `cost_details` as OpenRouter's, its completions cost 0 (embeddings have no output).
 */
export const embeddingsUsageView = (billed: BilledEmbeddings): Record<string, unknown> => ({
  prompt_tokens: billed.promptTokens,
  total_tokens: billed.promptTokens,
  ...chargeView(billed.charged, billed.currency),
  cost_details: {
    upstream_inference_cost: exactAmount(billed.cost.units),
    upstream_inference_prompt_cost: exactAmount(billed.cost.promptUnits),
    upstream_inference_completions_cost: exactAmount(billed.cost.completionUnits),
  },
  ...(billed.estimated ? { estimated: true } : {}),
})
