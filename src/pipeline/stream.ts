import { type Hold, releaseOrLog } from '../billing/holds'
import { estimatedUsage, mayReason, settle } from '../chat/billing'
import type { GatewayContext } from '../context'
import { type GatewayError, toGatewayError } from '../errors'
import type { GenerationTags } from '../http/attribution'
import { gatewayResponse } from '../http/respond'
import type { CallOptions, UpstreamUsage } from '../providers/types'
import { firstSuccessful, healthKeyOf } from '../routing/attempts'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import type { UsageRecord } from '../stores/usage'

const encoder = new TextEncoder()
const KEEP_ALIVE = encoder.encode(': service processing\n\n')

/** What a stream's chunks tell its billing, noted by the dialect as they pass (docs/money.md). */
export interface StreamTally {
  /** The usage the provider reported (the last report counts). */
  reported?: UpstreamUsage
  /** The provider's id of the answer. */
  upstreamId: string | null
  /** The provider's own finish reason. */
  nativeFinishReason: string | null
  /** Characters of generated text so far (what an estimate bills). */
  generatedChars: number
}

/**
 * How one API's stream is read and written (docs/native.md#streaming): chat's chunks, or a provider's native events
 * passed on. One dialect per request: it may keep state.
 */
export interface StreamDialect<C> {
  /** The provider opened the stream: the attempt that serves it. */
  opened(attempt: Attempt): void
  /** Notes what the chunk tells the billing. */
  account(chunk: C, tally: StreamTally): void
  /** The bytes that pass the chunk on; undefined when nothing goes out for it now (read on). */
  forward(chunk: C): Uint8Array | undefined
  /** The bytes that tell the client the stream failed after it began. */
  fail(error: GatewayError): Uint8Array
  /** The bytes that end the stream, once it is billed (`usage`, as the answer shows it) or its hold released (undefined). */
  finish(usage: Record<string, unknown> | undefined): Promise<Uint8Array | undefined> | Uint8Array | undefined
}

/** What a settled stream serves: the request (in chat's shape, for billing and estimates) and its attempts. */
export interface SettledStreamInput {
  principal: Principal
  request: ChatRequest
  attempts: Attempt[]
  signal: AbortSignal
  abort: AbortController
  requestId: string
  hold: Hold
  tags?: GenerationTags
  generationId: string
  startedAt: number
}

interface Opened<C> {
  attempt: Attempt
  tries: number
  iterator: AsyncIterator<C>
  first: IteratorResult<C>
  /** When the first chunk arrived (the gateway's clock). */
  firstAt: number
}

/**
 * Serves a streamed answer, billed exactly once however it ends (docs/chat.md#streaming, docs/money.md). Attempts are
 * tried until one sends its first chunk; when that is quick, a failure of every attempt is a normal HTTP error. When
 * it takes longer than the keep-alive interval, the 200 is sent with keep-alive comments and fallbacks go on inside
 * the stream. Once content flows it is piped chunk by chunk (at the client's pace) in the dialect's words; a failure
 * after that point is the dialect's error, then its end.
 */
export async function settledStream<C>(
  ctx: GatewayContext,
  input: SettledStreamInput,
  dialect: StreamDialect<C>,
  open: (attempt: Attempt, options: CallOptions) => Promise<AsyncIterable<C>>,
): Promise<Response> {
  // The upstream call's own controller: aborted when the client goes away before content flowed, or after the wait
  // for the provider's usage report once it did (docs/money.md). Not lent to routing: its deadline must fail the
  // opening (an error once keep-alives went out), not look like the client leaving.
  const upstreamAbort = new AbortController()
  const opening = firstSuccessful(
    ctx,
    input.attempts,
    { signal: upstreamAbort.signal, requestId: input.requestId, org: input.principal.org.id, client: input.signal },
    async (attempt, options) => {
      const iterator = (await open(attempt, options))[Symbol.asyncIterator]()
      try {
        return { iterator, first: await iterator.next() }
      } catch (error) {
        void iterator.return?.()?.catch(() => undefined)
        throw error
      }
    },
  ).then(({ result, attempt, tries }): Opened<C> => ({ ...result, attempt, tries, firstAt: ctx.now() }))

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
    createStream(ctx, input, dialect, { opening, upstreamAbort, waiting: early === 'waiting' }),
    200,
    {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-generation-id': input.generationId,
    },
    input.requestId,
  )
}

function createStream<C>(
  ctx: GatewayContext,
  input: SettledStreamInput,
  dialect: StreamDialect<C>,
  state: { opening: Promise<Opened<C>>; upstreamAbort: AbortController; waiting: boolean },
): ReadableStream<Uint8Array> {
  const { generationId, startedAt } = input
  let opened: Opened<C> | undefined
  const tally: StreamTally = { upstreamId: null, nativeFinishReason: null, generatedChars: 0 }
  let closed = false
  let upstreamDone = false
  let reading: Promise<IteratorResult<C>> | undefined
  let settled: Promise<Record<string, unknown>> | undefined
  let keepAlive: ReturnType<typeof setTimeout> | undefined
  let controller!: ReadableStreamDefaultController<Uint8Array>

  // Bills exactly once, whatever ends the stream (only once a provider has served it); replaces the request's hold.
  const bill = (served: Opened<C>, status: UsageRecord['status']) =>
    (settled ??= settle(ctx, {
      principal: input.principal,
      attempt: served.attempt,
      request: input.request,
      generationId,
      upstreamId: tally.upstreamId,
      stream: true,
      status,
      startedAt,
      attempts: served.tries,
      hold: input.hold,
      tags: input.tags,
      firstChunkAt: served.firstAt,
      nativeFinishReason: tally.nativeFinishReason,
      estimated: !tally.reported,
      usage:
        tally.reported ??
        estimatedUsage(ctx, input.request, served.attempt, { generatedChars: tally.generatedChars, status, elapsedMs: ctx.now() - startedAt }),
    }))
  // Takes the next upstream chunk (one read at a time, shared by whoever asks), noting what it tells the billing.
  const readNext = (served: Opened<C>) =>
    (reading ??= served.iterator.next().then(
      (next) => {
        reading = undefined
        if (next.done) upstreamDone = true
        else dialect.account(next.value, tally)
        return next
      },
      (error: unknown) => {
        reading = undefined
        throw error
      },
    ))
  // After the client left: read on, silently, until the provider reports usage or the wait ends; then bill.
  const drainThenBill = async (served: Opened<C>) => {
    const wait = ctx.options.abortedStreamUsageWaitMs
    const timer = setTimeout(() => state.upstreamAbort.abort(), wait)
    try {
      while (wait > 0 && !upstreamDone && !tally.reported) await readNext(served)
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
  const send = (bytes: Uint8Array | undefined) => {
    if (closed || !bytes) return
    controller.enqueue(bytes)
    lastSentAt = Date.now()
  }
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
  const finish = async (served: Opened<C>, status: UsageRecord['status']) => {
    const usage = await bill(served, status)
    send(await dialect.finish(usage))
    end()
  }
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
  // A client gone already (it left while the stream was opening) is gone for good: no abort event will come.
  if (input.signal.aborted) queueMicrotask(cancel)
  else input.signal.addEventListener('abort', cancel, { once: true })

  // The gateway's drain deadline passed (docs/operations.md): the stream ends as one failing after it began does, with
  // the shutdown's error, the end of what it is billed (`cancelled`; estimated when the provider reported no usage
  // yet). A provider not opened yet is stopped and the hold released: the error and the end. A stream billing
  // already (it ended) finishes as it was.
  const shutDown = () => {
    if (closed || settled) return
    const error = shutdown.reason as GatewayError
    send(dialect.fail(error))
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
    const write = (bytes: Uint8Array | undefined) => {
      try {
        if (bytes) controller.enqueue(bytes)
      } catch {
        // the stream was cancelled: nobody reads it any more
      }
    }
    void billed
      .catch((failure) => {
        ctx.logger.error('billing a stream cut by the shutdown failed', { request_id: input.requestId, error: String(failure) })
        return undefined
      })
      .then(async (usage) => write(await dialect.finish(usage)))
      .catch((failure) => ctx.logger.error('ending a stream cut by the shutdown failed', { request_id: input.requestId, error: String(failure) }))
      .finally(() => {
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
  const unhold = ctx.requestLog.hold(input.requestId)
  const untrack = () => {
    shutdown.removeEventListener('abort', onShutdown)
    unhold()
    release()
  }
  shutdown.addEventListener('abort', onShutdown, { once: true })

  // Sends one upstream chunk (already accounted); false when the dialect sent nothing for it.
  const forward = (chunk: C): boolean => {
    const bytes = dialect.forward(chunk)
    send(bytes)
    return bytes !== undefined
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
            send(dialect.fail(toGatewayError(error, input.requestId)))
            send(await dialect.finish(undefined))
            return end()
          }
          if (closed) return
          dialect.opened(opened.attempt)
          if (opened.first.done) upstreamDone = true
          else dialect.account(opened.first.value, tally)
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
          send(dialect.fail(failure))
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
