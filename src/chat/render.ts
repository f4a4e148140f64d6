import { plainNumbers, stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionResult, ChatRendering, ChatStreamRenderer } from './result'
import { chatUsageView } from './usage-view'

const DONE = Buffer.from('data: [DONE]\n\n')

/** Chat's own SSE (docs/chat.md#streaming): each part as a `data:` event, then `data: [DONE]`. */
const chatSse: ChatStreamRenderer = {
  part: (chunk) => Buffer.from(`data: ${stringifyExact(chunk)}\n\n`),
  end: () => DONE,
}

/** Chat's own answers (docs/chat.md#the-answer): the completion with its usage as JSON, or chat's SSE. */
export const chatRendering = (requestId: string): ChatRendering => ({
  whole: ({ generationId, completion, billed }) =>
    gatewayResponse(
      stringifyExact(Object.assign({}, completion, { usage: chatUsageView(billed) })), // not a spread then a field: bench/README.md#object-literals-on-node-20
      200,
      { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId },
      requestId,
    ),
  stream: () => chatSse,
})

/** Chat's usage object as a client reads it (docs/chat.md#usage-and-cost): tokens, and what the request cost. */
export interface ChatUsageObject {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens: number; [field: string]: unknown }
  completion_tokens_details: { reasoning_tokens: number; [field: string]: unknown }
  /** What the request was charged, in `cost_currency`. */
  cost: number
  cost_currency: string
  cost_eur: number
  is_byok: boolean
  cost_details: { upstream_inference_cost: number; upstream_inference_prompt_cost: number; upstream_inference_completions_cost: number }
  /** Set when the provider reported no usage and the tokens were estimated (docs/money.md). */
  estimated?: true
}

/** A chat completion as the in-process client gives it: the object chat's JSON answer carries (docs/first-party.md). */
export type ChatCompletionObject = ChatCompletion & { usage: ChatUsageObject }

/** What the in-process client gets of a chat completion: the whole completion, or its stream of chunk objects. */
export type InProcessChatAnswer = { completion: ChatCompletionObject } | { stream: ReadableStream<ChatCompletionChunk> }

/** A whole, billed completion as the object its JSON answer carries: exact amounts as plain numbers. */
export const chatCompletionObject = ({ completion, billed }: ChatCompletionResult): ChatCompletionObject =>
  Object.assign({}, completion, { usage: plainNumbers(chatUsageView(billed)) as ChatUsageObject })

/** Chat's stream for the in-process client: each part handed over as the chunk object it is, nothing to keep alive. */
export const chatPartsRenderer: ChatStreamRenderer<ChatCompletionChunk> = {
  part: (chunk) => (chunk.usage ? Object.assign({}, chunk, { usage: plainNumbers(chunk.usage) as Record<string, unknown> }) : chunk),
  end: () => undefined,
  keepAlive: () => undefined,
}
