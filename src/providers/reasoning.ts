import type { UpstreamChatRequest } from '../contracts'

/*
 * What a chat request asks of a reasoning model, as every provider reads it (docs/reasoning.md): OpenRouter's
 * `reasoning` object, or OpenAI's top-level `reasoning_effort`.
 */

/** Efforts from least to most: the order "nearest" is measured in. */
export const EFFORT_ORDER = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const

/** OpenRouter's `reasoning` object, as the schema leaves it (nulls already removed). */
export interface ReasoningRequest {
  effort?: string
  max_tokens?: number
  exclude?: boolean
  enabled?: boolean
}

/** The request's `reasoning`, if any. */
export const reasoningOf = (request: UpstreamChatRequest): ReasoningRequest | undefined => request.reasoning as ReasoningRequest | undefined

/**
 * The effort the request asks for: `reasoning.effort`, else `reasoning_effort`; `reasoning.enabled: false` is `none`.
 * Undefined when it names none (a `reasoning.max_tokens` alone, `enabled: true`, or nothing).
 */
export function requestedEffort(request: UpstreamChatRequest): string | undefined {
  const reasoning = reasoningOf(request)
  if (reasoning?.enabled === false) return 'none'
  return reasoning?.effort ?? (typeof request.reasoning_effort === 'string' ? request.reasoning_effort : undefined)
}

/**
 * The effort among `offered` nearest to `wanted` in EFFORT_ORDER; a tie goes to the higher one (never less thinking
 * than asked when two are as near). `wanted` itself when it is offered; undefined when nothing is offered.
 */
export function nearestEffort(wanted: string, offered: readonly string[]): string | undefined {
  if (offered.includes(wanted)) return wanted
  const at = EFFORT_ORDER.indexOf(wanted as (typeof EFFORT_ORDER)[number])
  let best: string | undefined
  let distance = Infinity
  for (const effort of offered) {
    const index = EFFORT_ORDER.indexOf(effort as (typeof EFFORT_ORDER)[number])
    if (index < 0) continue
    const d = Math.abs(index - at)
    if (d < distance || (d === distance && best !== undefined && index > EFFORT_ORDER.indexOf(best as (typeof EFFORT_ORDER)[number]))) {
      best = effort
      distance = d
    }
  }
  return best
}

/** The effort a reasoning budget in tokens stands for, where a model takes efforts only: ≤ 4,096 low, ≤ 16,384 medium, else high. */
export const effortForBudget = (budget: number): string => (budget <= 4096 ? 'low' : budget <= 16_384 ? 'medium' : 'high')
