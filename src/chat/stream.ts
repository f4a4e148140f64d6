import type { GatewayContext } from '../context'
import type { GatewayError } from '../errors'
import { newGenerationId } from '../generation/id'
import { settledStreamBody, sseResponse, type StreamDialect } from '../pipeline/stream'
import type { UpstreamChunk } from '../contracts'
import { upstreamRequestFor } from './upstream-request'
import type { BilledChat } from './billing'
import type { ChatServeInput } from './serve-input'
import type { ChatCompletionChunk, ChatStreamRenderer } from './result'
import { shapeChunkChoices } from './shape'
import { chatStreamBilling } from './stream-billing'
import { chatUsageView } from './usage-view'
import { policyStreamRenderer } from './policy-stream'

// A provider chunk's fields that the gateway's chunk replaces (the usage chunk is its own) or shapes (choices).
const OWN_FIELDS: Record<string, true> = Object.assign(Object.create(null), { usage: true, id: true, model: true, object: true, created: true, choices: true })

// Characters of generated text in a delta (content, reasoning, refusal, tool arguments): what an estimate bills.
function generatedTextLength(delta: Record<string, unknown> | undefined): number {
  if (!delta) return 0
  let length = typeof delta.content === 'string' ? delta.content.length : 0
  if (typeof delta.reasoning === 'string') length += delta.reasoning.length
  if (typeof delta.refusal === 'string') length += delta.refusal.length
  for (const call of (delta.tool_calls as { function?: { arguments?: string } }[] | undefined) ?? []) length += call.function?.arguments?.length ?? 0
  return length
}

/**
 * Chat's stream as typed parts (docs/chat.md#streaming): the provider's chunks in OpenAI's shape under the generation's
 * id, provider and model; its usage chunk held back, the gateway's (with the cost) given once billed, then the end; a
 * failure after the first byte is an error chunk with `finish_reason: "error"`. `render` writes each part for the
 * client (chat's SSE, or another API's events).
 */
function chatDialect<T>(generationId: string, startedAt: number, render: ChatStreamRenderer<T>): StreamDialect<UpstreamChunk, BilledChat, T> {
  const created = Math.floor(startedAt / 1000)
  let base: Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'provider' | 'model'> = { id: generationId, object: 'chat.completion.chunk', created }
  let provider = ''
  let model = ''
  return {
    opened(attempt) {
      provider = attempt.offer.provider.name
      model = attempt.entry.id
      base = { id: generationId, provider, model, object: 'chat.completion.chunk', created }
    },
    account(chunk, tally) {
      if (chunk.usage) tally.reported = chunk.usage
      if (typeof chunk.id === 'string') tally.upstreamId = chunk.id
      for (const choice of chunk.choices) {
        tally.generatedChars += generatedTextLength(choice.delta)
        if (choice.finish_reason)
          tally.nativeFinishReason = typeof choice.native_finish_reason === 'string' ? choice.native_finish_reason : choice.finish_reason
      }
    },
    forward(chunk) {
      if (!chunk.choices.length) return undefined // the provider's own usage chunk: ours comes at the end
      // The gateway's fields, then the provider's others, then the shaped choices: built key by key, as spreading a
      // shared object into a new one costs ~20 times more, once per chunk (bench/README.md#object-literals-on-node-20).
      const shaped: Record<string, unknown> = { id: generationId, provider, model, object: 'chat.completion.chunk', created }
      const fields = chunk as unknown as Record<string, unknown>
      for (const key in fields) if (!(key in OWN_FIELDS)) shaped[key] = fields[key]
      shaped.choices = shapeChunkChoices(chunk.choices)
      return render.part(shaped as ChatCompletionChunk)
    },
    fail: (error: GatewayError) =>
      render.part({
        ...base,
        error: { code: error.status, message: error.message, ...(error.metadata ? { metadata: error.metadata } : {}) },
        choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: null }],
      }),
    async finish(billed) {
      const usage = billed ? render.part(Object.assign({}, base, { choices: [], usage: chatUsageView(billed) })) : undefined
      const end = await render.end()
      return usage !== undefined && end !== undefined ? [usage, end] : (usage ?? end)
    },
    keepAlive: render.keepAlive?.bind(render),
    cut: render.cut?.bind(render),
  }
}

/**
 * Serves a streamed chat completion (docs/chat.md#streaming) on the settled stream (src/pipeline/stream.ts): attempts
 * tried until one sends its first chunk, piped at the client's pace, billed once however it ends, and closed with
 * the usage chunk and the end, each part written by `render` (chat's SSE: docs/chat.md#streaming).
 */
export async function completeStream(ctx: GatewayContext, input: ChatServeInput, render: ChatStreamRenderer): Promise<Response> {
  const { body, generationId } = await chatStream(ctx, input, render, false)
  return sseResponse(body, generationId, input.requestId)
}

/**
 * The same stream as typed chunks (docs/first-party.md#the-in-process-client): given once a provider opened it (a
 * failure of every attempt rejects), each part as `render` hands it over, billed once however it ends.
 */
export async function completeStreamParts<T>(ctx: GatewayContext, input: ChatServeInput, render: ChatStreamRenderer<T>): Promise<ReadableStream<T>> {
  return (await chatStream(ctx, input, render, true)).body
}

// Chat's settled stream under a new generation id, written by `render`.
async function chatStream<T>(ctx: GatewayContext, input: ChatServeInput, render: ChatStreamRenderer<T>, untilOpened: boolean) {
  const startedAt = ctx.now()
  const generationId = newGenerationId(startedAt)
  // Object.assign, not a spread then fields: bench/README.md#object-literals-on-node-20.
  const billing = chatStreamBilling(ctx, Object.assign({}, input, { generationId, startedAt }))
  const body = await settledStreamBody(
    ctx,
    Object.assign({}, input, { generationId, startedAt, billing, untilOpened }),
    chatDialect(generationId, startedAt, input.policy?.filtersOutput ? policyStreamRenderer(render, input.policy) : render),
    (attempt, options) => attempt.offer.provider.chatStream(upstreamRequestFor(input.request, attempt), options),
  )
  return { body, generationId }
}
