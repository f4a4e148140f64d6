import { type ClaudeTraits, MAX_THINKING_BUDGET, MIN_THINKING_BUDGET } from '../providers/anthropic-translate'
import { effortForBudget, nearestEffort } from '../providers/reasoning'

type Json = Record<string, unknown>

/**
 * A client's `thinking` made one the model takes (docs/native.md#messages), the rest of the body as it was: clients
 * that predate a model ask for `{ type: "enabled", budget_tokens }`, which adaptive models (Claude 4.6 and later)
 * refuse: it becomes `{ type: "adaptive" }` with `output_config.effort` for the budget (≤ 4,096 low, ≤ 16,384
 * medium, else high; the nearest the model lists). `{ type: "adaptive" }` on a budget model becomes `enabled` with
 * half of max_tokens (1,024 … 128,000, below max_tokens). `disabled` on a model that always thinks is left out.
 */
export function thinkingForModel(body: Json, traits: ClaudeTraits): Json {
  const thinking = body.thinking as { type?: string; budget_tokens?: number } | undefined
  if (!thinking || typeof thinking !== 'object') return body
  if (thinking.type === 'disabled' && traits.thinkingAlwaysOn) {
    const { thinking: _off, ...rest } = body
    return rest
  }
  if (thinking.type === 'enabled' && traits.thinking === 'adaptive') {
    const { budget_tokens: budget, type: _enabled, ...kept } = thinking
    const asked = typeof budget === 'number' ? effortForBudget(budget) : undefined
    const config = (body.output_config ?? {}) as Json
    const effort = config.effort ?? (asked && traits.efforts?.length ? nearestEffort(asked, traits.efforts) : asked)
    return { ...body, thinking: { ...kept, type: 'adaptive' }, ...(effort ? { output_config: { ...config, effort } } : {}) }
  }
  if (thinking.type === 'adaptive' && traits.thinking === 'budget') {
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 0
    const budget = Math.min(MAX_THINKING_BUDGET, Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens / 2)))
    if (budget >= maxTokens) {
      const { thinking: _adaptive, ...rest } = body
      return rest // no room for thinking under this max_tokens: the model answers without
    }
    const { type: _adaptive, display, ...kept } = thinking as Json
    return { ...body, thinking: { ...kept, type: 'enabled', budget_tokens: budget, ...(display !== undefined ? { display } : {}) } }
  }
  return body
}
