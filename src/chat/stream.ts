import type { GatewayContext } from '../context'
import type { GatewayError } from '../errors'
import { stringifyExact } from '../http/exact-json'
import { settledStream, type SettledStreamInput, type StreamDialect } from '../pipeline/stream'
import type { UpstreamChunk } from '../providers/types'
import { upstreamRequestFor } from '../routing/attempts'
import { newGenerationId, shapeChunkChoices } from './shape'

const encoder = new TextEncoder()
const DONE = encoder.encode('data: [DONE]\n\n')

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
 * Chat's own stream (docs/chat.md#streaming): the provider's chunks in OpenAI's shape under the generation's id,
 * provider and model; its usage chunk held back, the gateway's (with the cost) sent once billed, then [DONE]; a
 * failure after the first byte is an error chunk with `finish_reason: "error"`.
 */
function chatDialect(generationId: string, startedAt: number): StreamDialect<UpstreamChunk> {
  let base: Record<string, unknown> = { id: generationId, object: 'chat.completion.chunk', created: Math.floor(startedAt / 1000) }
  const sendJson = (value: unknown) => encoder.encode(`data: ${stringifyExact(value)}\n\n`)
  return {
    opened(attempt) {
      base = { id: generationId, provider: attempt.offer.provider.name, model: attempt.entry.id, ...base }
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
      const { usage: _usage, id: _id, model: _model, object: _object, created: _created, choices, ...rest } = chunk
      return sendJson({ ...base, ...rest, choices: shapeChunkChoices(choices) })
    },
    fail: (error: GatewayError) =>
      sendJson({
        ...base,
        error: { code: error.status, message: error.message, ...(error.metadata ? { metadata: error.metadata } : {}) },
        choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: null }],
      }),
    finish: (usage) => (usage ? Buffer.concat([sendJson({ ...base, choices: [], usage }), DONE]) : DONE),
  }
}

/**
 * Serves a streamed chat completion (docs/chat.md#streaming) on the settled stream (src/pipeline/stream.ts): attempts
 * tried until one sends its first chunk, piped at the client's pace, billed once however it ends, and closed with
 * the usage chunk and [DONE].
 */
export function completeStream(ctx: GatewayContext, input: Omit<SettledStreamInput, 'generationId' | 'startedAt'>): Promise<Response> {
  const startedAt = ctx.now()
  const generationId = newGenerationId(startedAt)
  return settledStream(ctx, { ...input, generationId, startedAt }, chatDialect(generationId, startedAt), (attempt, options) =>
    attempt.offer.provider.chatStream(upstreamRequestFor(input.request, attempt), options),
  )
}
