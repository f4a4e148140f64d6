import { BUDGET_SHARE, type ClaudeTraits, MAX_THINKING_BUDGET, MIN_THINKING_BUDGET } from '../providers/anthropic-translate'
import { effortForBudget, nearestEffort } from '../providers/reasoning'

type Json = Record<string, unknown>

/** The body without `output_config.effort` (and without `output_config` when nothing else was in it). */
function withoutEffort(body: Json): Json {
  const config = body.output_config as Json | undefined
  if (!config || typeof config !== 'object' || config.effort === undefined) return body
  const { effort: _effort, ...kept } = config
  const { output_config: _config, ...rest } = body
  return Object.keys(kept).length ? { ...rest, output_config: kept } : rest
}

/**
 * A client's `thinking` and `output_config.effort` made ones the model takes (docs/native.md#messages), the rest of
 * the body as it was: clients that predate a model ask for `{ type: "enabled", budget_tokens }`, which adaptive models
 * (Claude 4.6 and later) refuse: it becomes `{ type: "adaptive" }` with `output_config.effort` for the budget (≤ 4,096
 * low, ≤ 16,384 medium, else high; the nearest the model lists), and an effort the model does not list becomes the
 * nearest it does. A budget model (Claude 4.5 and earlier, whose catalogue entry lists no effort levels) refuses
 * `output_config.effort` and `{ type: "adaptive" }`, which clients send it when they do not know the model's id (Claude
 * Code with `anthropic/claude-haiku-4.5`): the effort is left out, and adaptive becomes `enabled` with the effort's
 * share of max_tokens (docs/reasoning.md; half without an effort; 1,024 … 128,000, below max_tokens), or no thinking
 * when max_tokens leaves no room. `disabled` on a model that always thinks is left out.
 */
export function thinkingForModel(body: Json, traits: ClaudeTraits): Json {
  const thinking = body.thinking as { type?: string; budget_tokens?: number } | undefined
  const config = (body.output_config ?? {}) as Json
  const effort = typeof config.effort === 'string' ? config.effort : undefined
  if (traits.thinking === 'budget') {
    const rest = withoutEffort(body)
    if (thinking?.type !== 'adaptive') return rest
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 0
    const share = (effort && BUDGET_SHARE[effort]) || 0.5
    const budget = Math.min(MAX_THINKING_BUDGET, Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens * share)), maxTokens - 1)
    if (budget < MIN_THINKING_BUDGET) {
      const { thinking: _adaptive, ...unthinking } = rest
      return unthinking // no room for thinking under this max_tokens: the model answers without
    }
    const { type: _adaptive, display, ...kept } = thinking as Json
    return { ...rest, thinking: { ...kept, type: 'enabled', budget_tokens: budget, ...(display !== undefined ? { display } : {}) } }
  }
  const offered = effort && traits.efforts?.length ? nearestEffort(effort, traits.efforts) : effort
  const adapted = offered === effort ? body : offered ? { ...body, output_config: { ...config, effort: offered } } : withoutEffort(body)
  if (!thinking || typeof thinking !== 'object') return adapted
  if (thinking.type === 'disabled' && traits.thinkingAlwaysOn) {
    const { thinking: _off, ...rest } = adapted
    return rest
  }
  if (thinking.type === 'enabled') {
    const { budget_tokens: budget, type: _enabled, ...kept } = thinking
    const asked = typeof budget === 'number' ? effortForBudget(budget) : undefined
    const chosen = offered ?? (asked && traits.efforts?.length ? nearestEffort(asked, traits.efforts) : asked)
    const adaptedConfig = (adapted.output_config ?? {}) as Json
    return { ...adapted, thinking: { ...kept, type: 'adaptive' }, ...(chosen ? { output_config: { ...adaptedConfig, effort: chosen } } : {}) }
  }
  return adapted
}
