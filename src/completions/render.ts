import type { ChatCompletion, ChatCompletionChunk, ChatRendering, ChatStreamRenderer } from '../chat/result'
import { chatUsageView } from '../chat/usage-view'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'

/*
 * Chat's typed results (src/chat/result.ts) written as OpenAI's legacy Completions API (docs/completions.md): a
 * `text_completion` object, or its SSE chunks, each choice's text where chat has its message's content. Nothing is
 * serialised as chat and parsed back.
 */

type Json = Record<string, unknown>

const encoder = new TextEncoder()
const DONE = encoder.encode('data: [DONE]\n\n')

/** One legacy choice: its text, index and finish reason; log probabilities are not served. */
const textChoice = (text: string, index: number, finishReason: unknown) => ({ text, index, finish_reason: finishReason ?? null, logprobs: null })

/** A whole chat completion as a text completion, but its usage (docs/completions.md#the-answer). */
export function toTextCompletion(completion: ChatCompletion): Json {
  return {
    id: completion.id,
    object: 'text_completion',
    created: completion.created,
    model: completion.model,
    provider: completion.provider,
    system_fingerprint: completion.system_fingerprint ?? null,
    choices: completion.choices.map((choice) =>
      textChoice(typeof choice.message.content === 'string' ? choice.message.content : '', choice.index, choice.finish_reason),
    ),
  }
}

/**
 * One chat stream part as a text completion chunk (docs/completions.md#streaming): the choices that carry text or a
 * finish reason, the usage chunk with `choices: []`, the error chunk with its `error`; undefined when nothing of the
 * part goes out (a role or reasoning delta alone).
 */
export function textCompletionChunk(chunk: ChatCompletionChunk): Json | undefined {
  const head: Json = { id: chunk.id, object: 'text_completion', created: chunk.created, model: chunk.model ?? '' }
  if (chunk.provider) head.provider = chunk.provider
  if (chunk.error) return { ...head, error: chunk.error, choices: [textChoice('', 0, 'error')] }
  if (chunk.usage && !chunk.choices.length) return { ...head, choices: [], usage: chunk.usage }
  const choices: Json[] = []
  for (const choice of chunk.choices) {
    const content = (choice.delta as Json | undefined)?.content
    const text = typeof content === 'string' ? content : ''
    if (text || choice.finish_reason) choices.push(textChoice(text, (choice.index as number | undefined) ?? 0, choice.finish_reason))
  }
  return choices.length ? { ...head, choices } : undefined
}

/** The legacy Completions SSE: each chunk as a `data:` event, then `data: [DONE]`. */
const textCompletionSse: ChatStreamRenderer = {
  part: (chunk) => {
    const out = textCompletionChunk(chunk)
    return out ? encoder.encode(`data: ${stringifyExact(out)}\n\n`) : undefined
  },
  end: () => DONE,
}

/** Chat's results written as text completions: the whole answer with chat's usage, or the legacy SSE. */
export const completionsRendering = (requestId: string): ChatRendering => ({
  whole: ({ generationId, completion, billed }) =>
    gatewayResponse(
      stringifyExact({ ...toTextCompletion(completion), usage: chatUsageView(billed) }),
      200,
      { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId },
      requestId,
    ),
  stream: () => textCompletionSse,
})
