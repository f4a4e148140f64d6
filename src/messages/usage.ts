/*
 * The gateway's usage (docs/chat.md#usage-and-cost) → Anthropic's (docs/messages.md#the-answer): prompt tokens
 * split into uncached input, cache reads and cache writes, as Anthropic counts them; the cost fields kept beside them.
 */

type Json = Record<string, unknown>

const count = (value: unknown): number => (typeof value === 'number' ? value : 0)

/** Chat usage → Anthropic's usage plus the gateway's `cost`, `cost_currency`, `cost_eur`, `is_byok`, `cost_details`. */
export function messagesUsage(usage: Json | undefined): Json {
  const prompt = (usage?.prompt_tokens_details ?? {}) as Json
  const completion = (usage?.completion_tokens_details ?? {}) as Json
  const read = count(prompt.cached_tokens)
  const written = count(prompt.cache_write_tokens)
  const out: Json = {
    input_tokens: Math.max(0, count(usage?.prompt_tokens) - read - written),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: count(usage?.completion_tokens),
    output_tokens_details: { thinking_tokens: count(completion.reasoning_tokens) },
  }
  for (const key of ['cost', 'cost_currency', 'cost_eur', 'is_byok', 'cost_details', 'estimated']) if (usage?.[key] !== undefined) out[key] = usage[key]
  return out
}
