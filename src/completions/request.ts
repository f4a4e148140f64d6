import type { ChatRequest } from '../schemas/chat'
import type { CompletionsRequest } from '../schemas/completions'

/**
 * A validated /completions request → the chat request serveChat serves (docs/completions.md#the-request): the
 * prompt as one user message, every other chat field as sent; the legacy fields the schema let through (`suffix: ""`,
 * `echo: false`, `logprobs: null`, `best_of: 1`) change nothing and are left out.
 */
export function toChatRequest(request: CompletionsRequest): ChatRequest {
  const { prompt, suffix: _suffix, echo: _echo, logprobs: _logprobs, best_of: _bestOf, ...chat } = request
  const text = typeof prompt === 'string' ? prompt : prompt[0]
  return { ...chat, messages: [{ role: 'user', content: text }] } as ChatRequest
}
