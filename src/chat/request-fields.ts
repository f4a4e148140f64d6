import type { ProviderModel } from '../contracts'

/*
 * OpenRouter's request fields that the gateway consumes (docs/limits.md#openrouters-fields-the-gateway-consumes,
 * docs/chat.md#the-request): they are accepted, and read where the gateway acts on them, but never sent to a provider
 * as they are; OpenAI itself answers 400 "Unrecognized request argument" to each. `reasoning` and `cache_control` stay in
 * the request for the providers that translate them (src/providers/*); the OpenAI-compatible provider maps `reasoning`
 * to `reasoning_effort`.
 */

/** Fields removed from every upstream request (`models` and `provider` are removed by routing itself). */
export const CONSUMED_FIELDS = ['plugins', 'session_id', 'trace', 'metadata', 'debug', 'usage', 'transforms', 'route', 'image_config'] as const

/**
 * The request without the fields the gateway consumes; `top_a` is kept only for a model whose catalogue entry lists
 * it among its `supportedParameters` (no OpenAI-compatible host the catalogue knows takes it; Anthropic's and Gemini's
 * translations never send it).
 */
export function withoutConsumedFields<T extends Record<string, unknown>>(request: T, model: ProviderModel, alsoLeftOut?: ReadonlySet<string>): T {
  // One copy key by key (a spread followed by deletes costs several times more: bench/README.md#object-literals-on-node-20).
  const keepTopA = model.supportedParameters?.includes('top_a') === true
  const out: Record<string, unknown> = {}
  for (const key in request) {
    if (CONSUMED.has(key) || alsoLeftOut?.has(key) || (key === 'top_a' && !keepTopA)) continue
    out[key] = request[key]
  }
  return out as T
}

const CONSUMED: ReadonlySet<string> = new Set(CONSUMED_FIELDS)
