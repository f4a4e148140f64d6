import { chargeView, exactAmount } from '../generation/money-view'
import { type BilledChat, cachedTokensOf, cacheWriteTokensOf, reasoningTokensOf } from './billing'

/** Chat's usage object (docs/chat.md#usage-and-cost) of a billed request: its tokens, then what it cost and was charged. */
export function chatUsageView(billed: BilledChat): Record<string, unknown> {
  const { usage, cost } = billed
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: cachedTokensOf(usage), cache_write_tokens: cacheWriteTokensOf(usage), ...(usage.prompt_tokens_details ?? {}) },
    completion_tokens_details: { reasoning_tokens: reasoningTokensOf(usage), ...(usage.completion_tokens_details ?? {}) },
    ...chargeView(billed.charged, billed.currency),
    cost_details: {
      upstream_inference_cost: exactAmount(cost.units),
      upstream_inference_prompt_cost: exactAmount(cost.promptUnits),
      upstream_inference_completions_cost: exactAmount(cost.completionUnits),
    },
    ...(billed.estimated ? { estimated: true } : {}),
  }
}
