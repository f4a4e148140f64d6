import type { Json } from './json'

/**
 * The provider options the provider reads (docs/first-party.md#the-ai-sdk-provider): under `modelGateway`, or under
 * `openrouter` as OpenRouter's AI SDK provider takes them; `modelGateway` wins where both name a field.
 */

/** The keys of providerOptions (and of a part's or message's options) the provider reads. */
export const OPTION_KEYS = ['openrouter', 'modelGateway'] as const

/** The options of one call, message or part under the provider's keys, merged (`modelGateway` last). */
export function gatewayOptions(providerOptions: Record<string, Record<string, Json> | undefined> | undefined): Record<string, Json> {
  const merged: Record<string, Json> = {}
  for (const key of OPTION_KEYS) Object.assign(merged, providerOptions?.[key] ?? {})
  return merged
}

/** Call options the provider reads itself rather than sending as body fields. */
const OWN = new Set(['strictJsonSchema', 'reasoningDetails', 'reasoning_details', 'cacheControl', 'cache_control'])
/** Body fields the provider writes from the call and an option may not replace. */
const WRITTEN = new Set(['model', 'messages', 'stream', 'stream_options'])
/** Camel-case option names and the body fields they stand for. */
const RENAMED: Record<string, string> = { parallelToolCalls: 'parallel_tool_calls', reasoningEffort: 'reasoning_effort', topLogprobs: 'top_logprobs' }

/**
 * The call's options as fields of the chat body (`reasoning`, `provider`, `models`, `user`, `usage`, …, as
 * docs/chat.md names them), passed through for the gateway to validate.
 */
export function bodyFields(options: Record<string, Json>): Record<string, Json> {
  const fields: Record<string, Json> = {}
  for (const [key, value] of Object.entries(options)) {
    if (OWN.has(key) || value === undefined) continue
    const field = RENAMED[key] ?? key
    if (!WRITTEN.has(field)) fields[field] = value
  }
  return fields
}
