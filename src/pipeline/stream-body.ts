import { type GatewayError, toGatewayError } from '../errors'
import type { InFlight } from '../http/in-flight'
import type { RequestLog } from '../http/request-log'
import type { Logger } from '../logger'
import type { ResolvedOptions } from '../options'
import { healthKeyOf } from '../routing/attempts'
import type { HealthTracker } from '../routing/health'
import type { Attempt } from '../routing/plan'
import type { OpenedStream, StreamDialect, StreamOutput, StreamTally } from './stream-dialect'
import type { StreamMachine } from './stream-state'

const KEEP_ALIVE = new TextEncoder().encode(': service processing\n\n')

/** What a stream's body uses of the gateway: its clock, two options, logs, health, and the drain it belongs to. */
export interface StreamServices {
  now(): number
  options: Pick<ResolvedOptions, 'keepAliveMs' | 'abortedStreamUsageWaitMs'>
  logger: Logger
  health: Pick<HealthTracker, 'record'>
  inFlight: Pick<InFlight, 'signal' | 'track'>
  requestLog: Pick<RequestLog, 'hold'>
}

/** What a stream's body drives: its machine (in `waiting`: the response goes out), the provider's opening, and its ends. */
export interface StreamBodyInput<C, B = unknown> {
  machine: StreamMachine<OpenedStream<C>, B>
  /** The opening of the provider (the attempts tried until one sends its first chunk), settled or still running. */
  opening: Promise<OpenedStream<C>>
  /** The upstream call's own controller, apart from the client's signal. */
  upstreamAbort: AbortController
  /** True when the provider had not opened as the response went out: a keep-alive comment goes out at once. */
  waiting: boolean
  /** What the chunks told the billing so far (the machine's settlement reads it). */
  tally: StreamTally
  /** The client's signal. */
  client: AbortSignal
  requestId: string
  orgId: string
  startedAt: number
  /** True when the attempt's model may reason in hidden tokens: a client that leaves it is read on for the usage report. */
  readsOn(attempt: Attempt): boolean
}

/**
 * The body of a settled stream (docs/chat.md#streaming, docs/money.md), driving its machine: keep-alives while it
 * waits for its provider, one upstream chunk per pull in the dialect's words, and every end (done, a failure, the
 * client leaving, the shutdown) through the machine's one settlement. In flight until closed and settled.
 */
export function createStreamBody<C, B, T = Uint8Array>(
  services: StreamServices,
  input: StreamBodyInput<C, B>,
  dialect: StreamDialect<C, B, T>,
): ReadableStream<T> {
  const { machine, opening, upstreamAbort, tally, client, requestId } = input
  const { options, logger } = services
  const shutdown = services.inFlight.signal
  let opened: OpenedStream<C> | undefined
  let upstreamDone = false
  let reading: Promise<IteratorResult<C>> | undefined
  let keepAlive: ReturnType<typeof setTimeout> | undefined
  let lastSentAt = 0
  let controller!: ReadableStreamDefaultController<T>

  // In flight until it is closed and settled (billed, or its hold released): gateway.close() waits for it.
  const release = services.inFlight.track()
  const unhold = services.requestLog.hold(requestId)
  machine.onSettled(() => {
    shutdown.removeEventListener('abort', shutDown)
    unhold()
    release()
  })

  // Notes what a chunk tells the billing.
  const noted = (next: IteratorResult<C>) => {
    if (next.done) upstreamDone = true
    else dialect.account(next.value, tally)
    return next
  }
  // Takes the next upstream chunk (one read at a time, shared by whoever asks), noting what it tells the billing.
  const readNext = (served: OpenedStream<C>) =>
    (reading ??= served.iterator.next().then(
      (next) => {
        reading = undefined
        return noted(next)
      },
      (error: unknown) => {
        reading = undefined
        throw error
      },
    ))
  // The next upstream chunk if it is in hand already (noted), else undefined: none while a read is waiting for the body.
  const readNow = (served: OpenedStream<C>): IteratorResult<C> | undefined => {
    if (reading) return undefined
    const next = served.iterator.nextNow?.()
    return next && noted(next)
  }
  // Stops the provider: its call aborted, its stream returned.
  const stopUpstream = (served: OpenedStream<C> | undefined, reason?: unknown) => {
    upstreamAbort.abort(reason)
    if (served) void served.iterator.return?.()?.catch(() => undefined)
  }

  const send = (out: StreamOutput<T>) => {
    if (!out || !machine.writable) return
    try {
      if (Array.isArray(out)) for (const piece of out) controller.enqueue(piece)
      else controller.enqueue(out as T)
    } catch {
      return // the client cancelled the stream meanwhile
    }
    lastSentAt = Date.now()
  }
  // The bytes that tell the client the stream failed; a dialect that throws is logged, and the stream goes on to its end.
  const failure = (error: GatewayError) => {
    try {
      return dialect.fail(error)
    } catch (thrown) {
      logger.error('telling a client its stream failed threw', { request_id: requestId, error: String(thrown) })
      return undefined
    }
  }
  // The bytes that keep a waiting client's connection alive, in the dialect's words (an SSE comment by default).
  const keepAliveBytes = (): T | undefined => {
    // A dialect that does not write bytes (the in-process client's) brings its own (none).
    if (!dialect.keepAlive) return KEEP_ALIVE as T
    try {
      return dialect.keepAlive()
    } catch (thrown) {
      logger.error('keeping a stream alive threw', { request_id: requestId, error: String(thrown) })
      return undefined
    }
  }
  // The dialect's last bytes for a stream whose end could not be written (its billing or its end threw).
  const sendCut = async () => {
    try {
      if (dialect.cut) send(await dialect.cut())
    } catch (thrown) {
      logger.error('ending a broken stream threw', { request_id: requestId, error: String(thrown) })
    }
  }
  // One timer for the whole stream (not one per chunk): when it fires, a comment goes out if nothing did meanwhile.
  const armKeepAlive = (delay: number) => {
    keepAlive = setTimeout(() => {
      if (!machine.writable) return
      const idle = Date.now() - lastSentAt
      if (idle >= options.keepAliveMs) send(keepAliveBytes())
      armKeepAlive(idle >= options.keepAliveMs ? options.keepAliveMs : options.keepAliveMs - idle)
    }, delay)
  }
  // Nothing more comes from the client's side or the clock: no keep-alives, no abort event.
  const stopListening = () => {
    clearTimeout(keepAlive)
    client.removeEventListener('abort', cancel)
  }
  // The stream's last bytes went out: the client's side closes.
  const end = () => {
    stopListening()
    try {
      controller.close()
    } catch {
      // the client cancelled the stream meanwhile
    }
    machine.on('closed')
  }

  // Bills what served the stream, then sends the dialect's end with the usage.
  const finish = async (served: OpenedStream<C>, status: 'success' | 'error') => {
    const billed = await machine.settle({ kind: 'charged', served, status })
    send(await dialect.finish(billed))
    end()
  }
  // The provider ended the stream: billed as served. A billing or an end that throws is told as a failure after it began.
  const done = async (served: OpenedStream<C>) => {
    machine.on('done')
    try {
      await finish(served, 'success')
    } catch (error) {
      if (machine.on('broke')) await fail(served, error)
    }
  }
  // The stream failed after it began: the failure counts for the provider's health, is told in the dialect's words,
  // and the stream is billed for what was generated (`error`), then ended.
  const fail = async (served: OpenedStream<C>, error: unknown) => {
    const thrown = toGatewayError(error, requestId)
    logger.warn(`stream from ${served.attempt.offer.provider.slug} failed after it began`, { request_id: requestId, error: thrown.message })
    services.health.record(healthKeyOf(served.attempt), input.orgId, { ok: false, latencyMs: services.now() - input.startedAt })
    send(failure(thrown))
    await finish(served, 'error').catch(() => sendCut().then(end))
  }
  // No provider opened the stream after its response went out (every attempt failed, or the request's deadline
  // passed): the hold is released, the failure told, the stream ended.
  const endUnopened = async (error: unknown) => {
    await machine.settle({ kind: 'released' })
    try {
      send(failure(toGatewayError(error, requestId)))
      send(await dialect.finish(undefined))
    } catch (thrown) {
      logger.error('ending a stream no provider opened failed', { request_id: requestId, error: String(thrown) })
      await sendCut()
    }
    end()
  }
  // The stream ended before it took its provider: one that still opens is stopped and billed for what it sent
  // (`cancelled`), else the hold is released.
  const settleUnopened = () =>
    opening.then(
      (late) => {
        void late.iterator.return?.()?.catch(() => undefined)
        return machine.settle({ kind: 'charged', served: late, status: 'cancelled' })
      },
      () => machine.settle({ kind: 'released' }),
    )
  // After the client left a model that may reason: read on, silently, until the provider reports usage or the wait
  // ends; then bill (docs/money.md).
  const drainThenBill = async (served: OpenedStream<C>) => {
    const wait = options.abortedStreamUsageWaitMs
    const timer = setTimeout(() => upstreamAbort.abort(), wait)
    try {
      while (wait > 0 && !upstreamDone && !tally.reported) await readNext(served)
    } catch {
      // the provider failed or the wait ended: bill what is known
    } finally {
      clearTimeout(timer)
      stopUpstream(served)
    }
    machine.on('drained')
    await machine.settle({ kind: 'charged', served, status: 'cancelled' })
  }

  // The client went away: before the stream took its provider, stop it (a call that still opens is billed for what it
  // sent, else the hold is released). After, a model that may reason in hidden tokens is read on for the provider's
  // usage report, then billed; any other is stopped and billed for its text (docs/money.md). A stream ending already
  // stops its provider; its settlement is under way.
  function cancel() {
    // The request was stopped by the gateway's shutdown (its route does so at the drain deadline), not by its client.
    if (shutdown.aborted && client.reason === shutdown.reason) return shutDown()
    const from = machine.phase
    const served = opened
    const readOn = from === 'flowing' && served !== undefined && input.readsOn(served.attempt)
    if (!machine.on(readOn ? 'readOn' : 'left')) return
    stopListening()
    const logged = (what: string) => (error: unknown) => logger.error(`${what} of an abandoned stream failed`, { request_id: requestId, error: String(error) })
    if (readOn) return void drainThenBill(served).catch(logged('billing'))
    stopUpstream(served)
    if (from === 'flowing' && served) void machine.settle({ kind: 'charged', served, status: 'cancelled' }).catch(logged('billing'))
    else if (from === 'waiting') void settleUnopened().catch(logged('releasing the hold'))
  }
  // A client gone already (it left while the stream was opening) is gone for good: no abort event will come.
  if (client.aborted) queueMicrotask(cancel)
  else client.addEventListener('abort', cancel, { once: true })

  // The gateway's drain deadline passed (docs/operations.md): the stream ends as one failing after it began does, with
  // the shutdown's error, the end of what it is billed (`cancelled`; estimated when the provider reported no usage
  // yet). A provider not taken yet is stopped and the hold released: the error and the end. A stream ending already
  // (billing) finishes as it was; one read on after its client left stops reading and is billed by what is known.
  function shutDown() {
    const from = machine.phase
    if (!machine.on('shutdown')) return
    const error = shutdown.reason as GatewayError
    if (from === 'draining') return upstreamAbort.abort(error)
    send(failure(error))
    stopListening()
    const served = opened
    stopUpstream(served, error)
    const settling = served ? machine.settle({ kind: 'charged', served, status: 'cancelled' }) : settleUnopened()
    void settling
      .catch((thrown) => {
        logger.error('billing a stream cut by the shutdown failed', { request_id: requestId, error: String(thrown) })
        return undefined
      })
      .then(async (billed) => send(await dialect.finish(billed)))
      .catch((thrown) => {
        logger.error('ending a stream cut by the shutdown failed', { request_id: requestId, error: String(thrown) })
        return sendCut()
      })
      .finally(end)
  }
  shutdown.addEventListener('abort', shutDown, { once: true })

  // Sends one upstream chunk (already accounted); false when the dialect sent nothing for it.
  const forward = (chunk: C): boolean => {
    const bytes = dialect.forward(chunk)
    send(bytes)
    return bytes !== undefined
  }
  // The stream just took its provider: relays its first chunk, then chunks until one sent bytes (one per pull: the
  // client's pace holds the provider back) or the stream ended.
  const relayFirst = async (served: OpenedStream<C>) => {
    try {
      dialect.opened(served.attempt)
      let next = noted(served.first)
      for (;;) {
        if (machine.phase !== 'flowing') return
        if (next.done) return await done(served)
        if (forward(next.value)) return
        next = await readNext(served)
      }
    } catch (error) {
      if (machine.phase === 'flowing' && machine.on('broke')) await fail(served, error)
    }
  }

  const stream = new ReadableStream<T>(
    {
      start(c) {
        controller = c
        if (input.waiting) send(keepAliveBytes())
        else lastSentAt = Date.now()
        armKeepAlive(options.keepAliveMs)
      },
      async pull() {
        if (machine.phase === 'waiting') {
          let taken: OpenedStream<C>
          try {
            taken = await opening
          } catch (error) {
            if (machine.on('failed')) await endUnopened(error)
            return
          }
          if (!machine.on('opened')) return
          opened = taken
          return relayFirst(taken)
        }
        // The hot path (every later chunk), without relay's extra async step: the upstream chunks in hand (a socket
        // read often holds several), else one read (the client's pace holds the provider back); what is in hand goes
        // out in one go, with no promise each.
        const served = opened
        if (!served || machine.phase !== 'flowing') return
        try {
          let sent = false
          for (;;) {
            let next = readNow(served)
            if (next === undefined) {
              if (sent) return
              next = await readNext(served)
            }
            if (machine.phase !== 'flowing') return
            if (next.done) return await done(served)
            if (forward(next.value)) sent = true
          }
        } catch (error) {
          if (machine.phase === 'flowing' && machine.on('broke')) await fail(served, error)
        }
      },
      cancel,
    },
    { highWaterMark: 0 },
  )
  if (shutdown.aborted) shutDown() // the deadline passed while the provider opened
  return stream
}
