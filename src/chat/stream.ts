import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { toGatewayError, type GatewayError } from '../errors'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { UpstreamChunk, UpstreamUsage } from '../providers/types'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import type { UsageRecord } from '../stores/usage'
import { firstSuccessful, healthKeyOf, upstreamRequestFor } from '../routing/attempts'
import { estimatedUsage, mayReason, settle } from './billing'
import { releaseOrLog, type Hold } from '../billing/holds'
import type { Attempt } from '../routing/plan'
import { newGenerationId, shapeChunkChoices } from './shape'

const encoder = new TextEncoder()
const DONE = encoder.encode('data: [DONE]\n\n')
const KEEP_ALIVE = encoder.encode(': service processing\n\n')

interface Opened {
  attempt: Attempt
  tries: number
  iterator: AsyncIterator<UpstreamChunk>
  first: IteratorResult<UpstreamChunk>
  /** When the first chunk arrived (the gateway's clock). */
  firstAt: number
}

// Characters of generated text in a delta (content, reasoning, tool arguments): what an estimate bills.
function generatedTextLength(delta: Record<string, unknown> | undefined): number {
  if (!delta) return 0
  let length = typeof delta.content === 'string' ? delta.content.length : 0
  if (typeof delta.reasoning === 'string') length += delta.reasoning.length
  for (const call of (delta.tool_calls as { function?: { arguments?: string } }[] | undefined) ?? []) length += call.function?.arguments?.length ?? 0
  return length
}

type StreamInput = {
  principal: Principal
  request: ChatRequest
  attempts: Attempt[]
  signal: AbortSignal
  abort: AbortController
  requestId: string
  hold: Hold
  tags?: GenerationTags
}

/**
 * Serves a streamed chat completion (docs/chat.md#streaming). Attempts are tried until one sends its first chunk; when
 * that is quick, a failure of every attempt is a normal HTTP error. When it takes longer than the keep-alive
 * interval, the 200 is sent with keep-alive comments and fallbacks go on inside the stream. Once content flows
 * it is piped chunk by chunk (at the client's pace), billed once however it ends, and closed with the usage chunk
 * and [DONE]; a failure after that point becomes an error chunk.
 */
export async function completeStream(ctx: GatewayContext, input: StreamInput): Promise<Response> {
  const startedAt = ctx.now()
  const generationId = newGenerationId(startedAt)
  // The upstream call's own controller: aborted when the client goes away before content flowed, or after the wait
  // for the provider's usage report once it did (docs/money.md). Not lent to routing: its deadline must fail the
  // opening (an error chunk once keep-alives went out), not look like the client leaving.
  const upstreamAbort = new AbortController()
  const opening = firstSuccessful(
    ctx,
    input.attempts,
    { signal: upstreamAbort.signal, requestId: input.requestId, org: input.principal.org.id },
    async (attempt, options) => {
      const iterator = (await attempt.offer.provider.chatStream(upstreamRequestFor(input.request, attempt), options))[Symbol.asyncIterator]()
      try {
        return { iterator, first: await iterator.next() }
      } catch (error) {
        void iterator.return?.()?.catch(() => undefined)
        throw error
      }
    },
  ).then(({ result, attempt, tries }): Opened => ({ ...result, attempt, tries, firstAt: ctx.now() }))

  let timer: ReturnType<typeof setTimeout> | undefined
  // At the gateway's drain deadline, an opening still awaited here stops: the request answers 503 (docs/operations.md).
  const shutdown = ctx.inFlight.signal
  const stopOpening = () => upstreamAbort.abort(shutdown.reason)
  shutdown.addEventListener('abort', stopOpening, { once: true })
  if (shutdown.aborted) stopOpening()
  const early = await Promise.race([
    opening.then(
      () => 'opened' as const,
      () => 'failed' as const,
    ),
    new Promise<'waiting'>((resolve) => (timer = setTimeout(() => resolve('waiting'), ctx.options.keepAliveMs))),
  ])
  clearTimeout(timer)
  shutdown.removeEventListener('abort', stopOpening)
  if (early === 'failed') await opening // rethrows: answered as an HTTP error, nothing was sent yet

  return gatewayResponse(
    createSseStream(ctx, input, { opening, generationId, startedAt, upstreamAbort, waiting: early === 'waiting' }),
    200,
    {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-generation-id': generationId,
    },
    input.requestId,
  )
}

function createSseStream(
  ctx: GatewayContext,
  input: StreamInput,
  state: { opening: Promise<Opened>; generationId: string; startedAt: number; upstreamAbort: AbortController; waiting: boolean },
): ReadableStream<Uint8Array> {
  const { generationId, startedAt } = state
  let opened: Opened | undefined
  let base: Record<string, unknown> = { id: generationId, object: 'chat.completion.chunk', created: Math.floor(startedAt / 1000) }
  let reported: UpstreamUsage | undefined
  let upstreamId: string | null = null
  let nativeFinishReason: string | null = null
  let generatedChars = 0
  let closed = false
  let upstreamDone = false
  let reading: Promise<IteratorResult<UpstreamChunk>> | undefined
  let settled: Promise<Record<string, unknown>> | undefined
  let keepAlive: ReturnType<typeof setTimeout> | undefined
  let controller!: ReadableStreamDefaultController<Uint8Array>

  // Bills exactly once, whatever ends the stream (only once a provider has served it); replaces the request's hold.
  const bill = (served: Opened, status: UsageRecord['status']) =>
    (settled ??= settle(ctx, {
      principal: input.principal,
      attempt: served.attempt,
      request: input.request,
      generationId,
      upstreamId,
      stream: true,
      status,
      startedAt,
      attempts: served.tries,
      hold: input.hold,
      tags: input.tags,
      firstChunkAt: served.firstAt,
      nativeFinishReason,
      estimated: !reported,
      usage: reported ?? estimatedUsage(ctx, input.request, served.attempt, { generatedChars, status, elapsedMs: ctx.now() - startedAt }),
    }))
  // Takes the next upstream chunk (one read at a time, shared by whoever asks), noting its usage, id and text.
  const readNext = (served: Opened) =>
    (reading ??= served.iterator.next().then(
      (next) => {
        reading = undefined
        if (next.done) upstreamDone = true
        else account(next.value)
        return next
      },
      (error: unknown) => {
        reading = undefined
        throw error
      },
    ))
  const account = (chunk: UpstreamChunk) => {
    if (chunk.usage) reported = chunk.usage
    if (typeof chunk.id === 'string') upstreamId = chunk.id
    for (const choice of chunk.choices) {
      generatedChars += generatedTextLength(choice.delta)
      if (choice.finish_reason) nativeFinishReason = typeof choice.native_finish_reason === 'string' ? choice.native_finish_reason : choice.finish_reason
    }
  }
  // After the client left: read on, silently, until the provider reports usage or the wait ends; then bill.
  const drainThenBill = async (served: Opened) => {
    const wait = ctx.options.abortedStreamUsageWaitMs
    const timer = setTimeout(() => state.upstreamAbort.abort(), wait)
    try {
      while (wait > 0 && !upstreamDone && !reported) await readNext(served)
    } catch {
      // the provider failed or the wait ended: bill what is known
    } finally {
      clearTimeout(timer)
      state.upstreamAbort.abort()
      void served.iterator.return?.()?.catch(() => undefined)
    }
    await bill(served, 'cancelled')
  }

  let lastSentAt = 0
  const send = (bytes: Uint8Array) => {
    if (closed) return
    controller.enqueue(bytes)
    lastSentAt = Date.now()
  }
  const sendJson = (value: unknown) => send(encoder.encode(`data: ${stringifyExact(value)}\n\n`))
  // One timer for the whole stream (not one per chunk): when it fires, a comment goes out if nothing did meanwhile.
  const armKeepAlive = (delay: number) => {
    keepAlive = setTimeout(() => {
      if (closed) return
      const idle = Date.now() - lastSentAt
      if (idle >= ctx.options.keepAliveMs) send(KEEP_ALIVE)
      armKeepAlive(idle >= ctx.options.keepAliveMs ? ctx.options.keepAliveMs : ctx.options.keepAliveMs - idle)
    }, delay)
  }
  const end = () => {
    if (closed) return
    closed = true
    clearTimeout(keepAlive)
    input.signal.removeEventListener('abort', cancel)
    controller.close()
    untrack()
  }
  const finish = async (served: Opened, status: UsageRecord['status']) => {
    const usage = await bill(served, status)
    sendJson({ ...base, choices: [], usage })
    send(DONE)
    end()
  }
  const fail = (error: GatewayError) =>
    sendJson({
      ...base,
      error: { code: error.status, message: error.message, ...(error.metadata ? { metadata: error.metadata } : {}) },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: null }],
    })
  // The client went away: before content flowed, stop the provider (a call that still opens is billed for what it
  // sent, else the hold is released). After, a model that may reason in hidden tokens is read on for the provider's
  // usage report, then billed; any other is stopped and billed for its text (docs/money.md).
  const cancel = () => {
    if (closed) return
    // The request was stopped by the gateway's shutdown (its route does so at the drain deadline), not by its client.
    if (shutdown.aborted && input.signal.reason === shutdown.reason) return shutDown()
    closed = true
    clearTimeout(keepAlive)
    input.signal.removeEventListener('abort', cancel)
    if (opened && mayReason(input.request, opened.attempt)) {
      void drainThenBill(opened)
        .catch((error) => ctx.logger.error('billing an abandoned stream failed', { request_id: input.requestId, error: String(error) }))
        .finally(untrack)
      return
    }
    state.upstreamAbort.abort()
    if (opened) {
      void opened.iterator.return?.()?.catch(() => undefined)
      void bill(opened, 'cancelled')
        .catch((error) => ctx.logger.error('billing an abandoned stream failed', { request_id: input.requestId, error: String(error) }))
        .finally(untrack)
      return
    }
    state.opening
      .then(
        (late) => {
          void late.iterator.return?.()?.catch(() => undefined)
          return bill(late, 'cancelled')
        },
        () => releaseOrLog(ctx, input.hold, input.requestId),
      )
      .catch((error) => ctx.logger.error('releasing the hold of an abandoned stream failed', { request_id: input.requestId, error: String(error) }))
      .finally(untrack)
  }
  input.signal.addEventListener('abort', cancel, { once: true })

  // The gateway's drain deadline passed (docs/operations.md): the stream ends as one failing after it began does, with
  // the shutdown's error chunk, the usage chunk of what it is billed (`cancelled`; estimated when the provider reported
  // no usage yet) and [DONE]. A provider not opened yet is stopped and the hold released: the error chunk and [DONE].
  // A stream billing already (it ended) finishes as it was.
  const shutDown = () => {
    if (closed || settled) return
    const error = shutdown.reason as GatewayError
    fail(error)
    closed = true
    clearTimeout(keepAlive)
    input.signal.removeEventListener('abort', cancel)
    state.upstreamAbort.abort(error)
    const served = opened
    if (served) void served.iterator.return?.()?.catch(() => undefined)
    const billed: Promise<Record<string, unknown> | undefined> = served
      ? bill(served, 'cancelled')
      : state.opening.then(
          (late) => {
            void late.iterator.return?.()?.catch(() => undefined)
            return bill(late, 'cancelled')
          },
          async () => {
            await releaseOrLog(ctx, input.hold, input.requestId)
            return undefined
          },
        )
    // Written past `closed` (which stops everything else); the client may have left meanwhile.
    const write = (bytes: Uint8Array) => {
      try {
        controller.enqueue(bytes)
      } catch {
        // the stream was cancelled: nobody reads it any more
      }
    }
    void billed
      .then(
        (usage) => usage && write(encoder.encode(`data: ${stringifyExact({ ...base, choices: [], usage })}\n\n`)),
        (failure) => ctx.logger.error('billing a stream cut by the shutdown failed', { request_id: input.requestId, error: String(failure) }),
      )
      .finally(() => {
        write(DONE)
        try {
          controller.close()
        } catch {
          // already cancelled
        }
        untrack()
      })
  }
  // Reading on after the client left (for a usage report) stops too; the stream is billed by what is known.
  const onShutdown = () => (closed ? state.upstreamAbort.abort(shutdown.reason) : shutDown())
  // In flight until it is billed (or its hold released) and closed: gateway.close() waits for it.
  const shutdown = ctx.inFlight.signal
  const release = ctx.inFlight.track()
  const untrack = () => {
    shutdown.removeEventListener('abort', onShutdown)
    release()
  }
  shutdown.addEventListener('abort', onShutdown, { once: true })

  // Sends one upstream chunk (already accounted); false for the provider's own usage chunk (ours comes at the end).
  const forward = (chunk: UpstreamChunk): boolean => {
    if (!chunk.choices.length) return false
    const { usage: _usage, id: _id, model: _model, object: _object, created: _created, choices, ...rest } = chunk
    sendJson({ ...base, ...rest, choices: shapeChunkChoices(choices) })
    return true
  }

  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c
        if (state.waiting) send(KEEP_ALIVE)
        else lastSentAt = Date.now()
        armKeepAlive(ctx.options.keepAliveMs)
      },
      // One upstream chunk per pull: the client's pace holds the provider back, nothing piles up in between.
      async pull() {
        if (!opened) {
          try {
            opened = await state.opening
          } catch (error) {
            if (closed) return
            await releaseOrLog(ctx, input.hold, input.requestId)
            fail(toGatewayError(error, input.requestId))
            send(DONE)
            return end()
          }
          if (closed) return
          base = { id: generationId, provider: opened.attempt.offer.provider.name, model: opened.attempt.entry.id, ...base }
          if (opened.first.done) upstreamDone = true
          else account(opened.first.value)
          if (opened.first.done) return finish(opened, 'success')
          if (forward(opened.first.value)) return
        }
        const served = opened
        try {
          for (;;) {
            const { done, value } = await readNext(served)
            if (closed) return
            if (done) return await finish(served, 'success')
            if (forward(value)) return
          }
        } catch (error) {
          if (closed) return
          const failure = toGatewayError(error, input.requestId)
          ctx.logger.warn(`stream from ${served.attempt.offer.provider.slug} failed after it began`, { request_id: input.requestId, error: failure.message })
          ctx.health.record(healthKeyOf(served.attempt), input.principal.org.id, { ok: false, latencyMs: ctx.now() - startedAt })
          fail(failure)
          await finish(served, 'error').catch(() => end())
        }
      },
      cancel,
    },
    { highWaterMark: 0 },
  )
  if (shutdown.aborted) shutDown() // the deadline passed while the provider opened
  return stream
}
