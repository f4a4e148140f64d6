import { estimateTokens } from '../generation/estimate'
import type { CountTokensRequest } from '../schemas/messages'
import { chatPrompt } from './request'

/**
 * POST /messages/count_tokens (docs/messages.md#counting-tokens): the gateway's own estimate, as it estimates a prompt
 * it must bill without a provider's count: 4 characters a token of the JSON of the chat messages the request becomes,
 * plus its tools'. No provider is asked, nothing is billed.
 */
export function countTokens(request: CountTokensRequest): { input_tokens: number } {
  const { messages, tools } = chatPrompt(request)
  return { input_tokens: estimateTokens(JSON.stringify(messages).length + (tools ? JSON.stringify(tools).length : 0)) }
}
