import type { GatewayContext } from '../context'
import { toGatewayError } from '../errors'
import { stringifyExact } from '../http/exact-json'
import type { UpstreamChunk, UpstreamUsage } from '../providers/types'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import type { UsageRecord } from '../stores/usage'
import { firstSuccessful, upstreamRequestFor } from './attempts'
import { estimateTokens, settle } from './billing'
import type { Attempt } from './plan'
import { newGenerationId, shapeChunkChoices } from './shape'

const encoder = new TextEncoder()
const DONE = encoder.encode('data: [DONE]\n\n')
const KEEP_ALIVE = encoder.encode(': service processing\n\n')

/**
 * Serves a streamed chat completion (decisions.md §8): falls back between attempts until one is accepted, then pipes
 * its chunks as OpenAI SSE chunks, sends keep-alive comments while waiting, bills once at the end (also when the
 * client goes away or the provider fails mid-stream), and sends usage with cost in the last chunk before [DONE].
 */
export async function completeStream(ctx: GatewayContext, input: { principal: Principal; request: ChatRequest; attempts: Attempt[]; signal: AbortSignal; requestId: string }): Promise<Response> {
  const startedAt = ctx.now()
  const upstreamAbort = new AbortController()
  const signal = AbortSignal.any([input.signal, upstreamAbort.signal])
  const { result: chunks, attempt, tries } = await firstSuccessful(ctx, input.attempts, signal, (a, options) =>
    a.offer.provider.chatStream(upstreamRequestFor(input.request, a), options),
  )
  const generationId = newGenerationId(startedAt)
  const iterator = chunks[Symbol.asyncIterator]()
  const base = { id: generationId, provider: attempt.offer.provider.name, model: attempt.entry.id, object: 'chat.completion.chunk', created: Math.floor(startedAt / 1000) }

  let reported: UpstreamUsage | undefined
  let upstreamId: string | null = null
  let generatedChars = 0
  let closed = false
  let settled: Promise<Record<string, unknown>> | undefined
  let keepAlive: ReturnType<typeof setTimeout> | undefined

  // Bills exactly once, whatever ends the stream.
  const bill = (status: UsageRecord['status']) =>
    (settled ??= settle(ctx, {
      principal: input.principal, attempt, request: input.request, generationId, upstreamId, stream: true, status, startedAt, attempts: tries,
      estimated: !reported,
      usage: reported ?? { prompt_tokens: estimateTokens(JSON.stringify(input.request.messages).length), completion_tokens: estimateTokens(generatedChars) },
    }))

  let controller!: ReadableStreamDefaultController<Uint8Array>
  const send = (bytes: Uint8Array) => {
    if (closed) return
    controller.enqueue(bytes)
    armKeepAlive()
  }
  const sendJson = (value: unknown) => send(encoder.encode(`data: ${stringifyExact(value)}\n\n`))
  const armKeepAlive = () => {
    clearTimeout(keepAlive)
    keepAlive = setTimeout(() => send(KEEP_ALIVE), ctx.options.keepAliveMs)
  }
  const end = () => {
    if (closed) return
    closed = true
    clearTimeout(keepAlive)
    input.signal.removeEventListener('abort', cancel)
    controller.close()
  }
  const finish = async (status: UsageRecord['status']) => {
    const usage = await bill(status)
    sendJson({ ...base, choices: [], usage })
    send(DONE)
    end()
  }
  // The client went away: stop the provider, bill what was generated.
  const cancel = () => {
    if (closed) return
    closed = true
    clearTimeout(keepAlive)
    input.signal.removeEventListener('abort', cancel)
    upstreamAbort.abort()
    void iterator.return?.()?.catch(() => undefined)
    void bill('cancelled')
  }
  input.signal.addEventListener('abort', cancel, { once: true })

  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c
      armKeepAlive()
    },
    // One upstream chunk per pull: the client's pace holds the provider back, nothing piles up in between.
    async pull() {
      try {
        for (;;) {
          const { done, value } = await iterator.next()
          if (closed) return
          if (done) return await finish('success')
          const chunk = value as UpstreamChunk
          if (chunk.usage) reported = chunk.usage
          if (typeof chunk.id === 'string') upstreamId = chunk.id
          if (!chunk.choices.length) continue // the provider's usage chunk: ours is sent at the end
          for (const choice of chunk.choices) generatedChars += JSON.stringify(choice.delta ?? '').length
          const { usage: _usage, id: _id, model: _model, object: _object, created: _created, choices, ...rest } = chunk
          return sendJson({ ...base, ...rest, choices: shapeChunkChoices(choices) })
        }
      } catch (error) {
        if (closed) return
        const failure = toGatewayError(error, input.requestId)
        ctx.logger.warn(`stream from ${attempt.offer.provider.slug} failed after it began`, { request_id: input.requestId, error: failure.message })
        sendJson({
          ...base,
          error: { code: failure.status, message: failure.message, ...(failure.metadata ? { metadata: failure.metadata } : {}) },
          choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: null }],
        })
        await finish('error').catch(() => end())
      }
    },
    cancel,
  }, { highWaterMark: 0 })

  return new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-request-id': input.requestId,
      'x-generation-id': generationId,
    },
  })
}
