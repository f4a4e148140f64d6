import type { GatewayContext } from '../context'
import type { GatewayError } from '../errors'
import { stringifyExact } from '../http/exact-json'
import { settledStream, type SettledStreamInput, type StreamDialect } from '../pipeline/stream'
import type { UpstreamChunk } from '../providers/types'
import { upstreamRequestFor } from './upstream-request'
import { newGenerationId, shapeChunkChoices } from './shape'

const DONE = Buffer.from('data: [DONE]\n\n')
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
 * Chat's own stream (docs/chat.md#streaming): the provider's chunks in OpenAI's shape under the generation's id,
 * provider and model; its usage chunk held back, the gateway's (with the cost) sent once billed, then [DONE]; a
 * failure after the first byte is an error chunk with `finish_reason: "error"`.
 */
function chatDialect(generationId: string, startedAt: number): StreamDialect<UpstreamChunk> {
  const created = Math.floor(startedAt / 1000)
  let base: Record<string, unknown> = { id: generationId, object: 'chat.completion.chunk', created }
  let provider = ''
  let model = ''
  const sendJson = (value: unknown) => Buffer.from(`data: ${stringifyExact(value)}\n\n`)
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
      return sendJson(shaped)
    },
    fail: (error: GatewayError) =>
      sendJson({
        ...base,
        error: { code: error.status, message: error.message, ...(error.metadata ? { metadata: error.metadata } : {}) },
        choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: null }],
      }),
    finish: (usage) => (usage ? Buffer.concat([sendJson(Object.assign({}, base, { choices: [], usage })), DONE]) : DONE),
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
