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

/** Plugins the gateway runs. None yet: an enabled plugin is refused with 400 (src/schemas/chat.ts) rather than silently not run. */
export const GATEWAY_PLUGINS: readonly string[] = []

/** The message of a `plugins` entry the gateway does not run (`{ id, enabled: false }` asks for nothing: accepted). */
export const pluginNotRun = (id: string) =>
  `the ${JSON.stringify(id)} plugin is not run by this gateway (it runs ${GATEWAY_PLUGINS.length ? GATEWAY_PLUGINS.join(', ') : 'none'}); leave it out or set enabled: false`

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
