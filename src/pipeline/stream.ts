import type { GatewayContext } from '../context'
import { gatewayResponse } from '../http/respond'
import type { CallOptions } from '../contracts'
import { firstSuccessful } from '../routing/attempts'
import type { Attempt } from '../routing/plan'
import type { Principal } from '../stores/account-types'
import { createStreamBody } from './stream-body'
import type { OpenedStream, StreamDialect, StreamTally } from './stream-dialect'
import { createStreamMachine } from './stream-state'

export type { OpenedStream, StreamDialect, StreamTally } from './stream-dialect'

/** How a stream is billed (the feature's: chat's prices and estimates, docs/money.md): what the settlement calls. */
export interface StreamBilling<B> {
  /** Bills what served the stream with the usage its provider reported (in the tally), else an estimate; resolves with what was billed. */
  charge(served: OpenedStream<unknown>, status: 'success' | 'error' | 'cancelled', tally: StreamTally): Promise<B>
  /** Releases the request's hold (no provider served it); never throws. */
  release(): Promise<void>
  /** True when the attempt's model may reason in hidden tokens: a client that leaves it is read on for the usage report. */
  readsOn(attempt: Attempt): boolean
}

/** What a settled stream serves: its attempts, the client's signal, its generation, and how it is billed. */
export interface SettledStreamInput<B> {
  principal: Principal
  attempts: Attempt[]
  signal: AbortSignal
  requestId: string
  generationId: string
  startedAt: number
  billing: StreamBilling<B>
  /**
   * Given only once a provider opened the stream, however long that takes (the in-process client: nothing to keep
   * alive, and a failure of every attempt rejects as a typed error: docs/first-party.md#the-in-process-client).
   */
  untilOpened?: boolean
}

/**
 * Serves a streamed answer, billed exactly once however it ends (docs/chat.md#streaming, docs/money.md). Attempts are
 * tried until one sends its first chunk; when that is quick, a failure of every attempt is a normal HTTP error. When
 * it takes longer than the keep-alive interval, the 200 is sent with keep-alive comments and fallbacks go on inside
 * the stream. Once content flows it is piped chunk by chunk (at the client's pace) in the dialect's words; a failure
 * after that point is the dialect's error, then its end. Every end goes through the stream's machine
 * (src/pipeline/stream-state.ts), whose one settlement bills it or releases its hold.
 */
export async function settledStream<C, B>(
  ctx: GatewayContext,
  input: SettledStreamInput<B>,
  dialect: StreamDialect<C, B>,
  open: (attempt: Attempt, options: CallOptions) => Promise<AsyncIterable<C>>,
): Promise<Response> {
  return sseResponse(await settledStreamBody(ctx, input, dialect, open), input.generationId, input.requestId)
}

/** The 200 of a settled stream's SSE body, under its generation id. */
export function sseResponse(body: ReadableStream<Uint8Array>, generationId: string, requestId: string): Response {
  return gatewayResponse(
    body,
    200,
    { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-generation-id': generationId },
    requestId,
  )
}

/**
 * The settled stream's body (settledStream), whatever its dialect writes: SSE bytes for HTTP, typed chunks for the
 * in-process client (docs/first-party.md#the-in-process-client). Rejects, with nothing sent, when every attempt failed
 * before the keep-alive interval.
 */
export async function settledStreamBody<C, B, T>(
  ctx: GatewayContext,
  input: SettledStreamInput<B>,
  dialect: StreamDialect<C, B, T>,
  open: (attempt: Attempt, options: CallOptions) => Promise<AsyncIterable<C>>,
): Promise<ReadableStream<T>> {
  // The upstream call's own controller: aborted when the client goes away before content flowed, or after the wait
  // for the provider's usage report once it did (docs/money.md). Lent to routing (one signal per stream less): its
  // deadline aborts it while the stream opens, and fails the opening as a deadline (routing tells the two apart by
  // its `deadline.passed`, the client's leaving by `client`), an error chunk once keep-alives went out.
  const upstreamAbort = new AbortController()
  const tally: StreamTally = { upstreamId: null, nativeFinishReason: null, generatedChars: 0 }
  const { billing } = input
  const machine = createStreamMachine<OpenedStream<C>, B>({
    charge: (served, status) => billing.charge(served, status, tally),
    release: () => billing.release(),
  })
  const opening = firstSuccessful(
    ctx,
    input.attempts,
    { signal: upstreamAbort.signal, abort: upstreamAbort, requestId: input.requestId, org: input.principal.org.id, client: input.signal },
    async (attempt, options) => {
      const iterator = (await open(attempt, options))[Symbol.asyncIterator]()
      try {
        return { iterator, first: await iterator.next() }
      } catch (error) {
        void iterator.return?.()?.catch(() => undefined)
        throw error
      }
    },
  ).then(({ result, attempt, tries }): OpenedStream<C> => Object.assign({}, result, { attempt, tries, firstAt: ctx.now() }))

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
    new Promise<'waiting'>((resolve) => {
      if (!input.untilOpened) timer = setTimeout(() => resolve('waiting'), ctx.options.keepAliveMs)
    }),
  ])
  clearTimeout(timer)
  shutdown.removeEventListener('abort', stopOpening)
  if (early === 'failed') {
    // Answered as an HTTP error, nothing was sent yet: the hold is released (the pipeline's own release finds it so).
    machine.on('failed')
    await machine.settle({ kind: 'released' })
    await opening // rethrows
  }

  machine.on('responded')
  return createStreamBody(
    ctx,
    {
      machine,
      opening,
      upstreamAbort,
      waiting: early === 'waiting',
      tally,
      client: input.signal,
      requestId: input.requestId,
      orgId: input.principal.org.id,
      startedAt: input.startedAt,
      readsOn: (attempt) => billing.readsOn(attempt),
    },
    dialect,
  )
}
