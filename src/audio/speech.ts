import type * as v from 'valibot'
import { releaseOrLog, type Hold } from '../billing/holds'
import { maxAudioCost } from './max-cost'
import { newGenerationId } from '../generation/id'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { invalidRequest, toGatewayError } from '../errors'
import { gatewayResponse } from '../http/respond'
import { upstreamError } from '../providers/upstream-error'
import { firstSuccessful, healthKeyOf } from '../routing/attempts'
import type { Attempt } from '../routing/plan'
import type { speechRequestSchema } from '../schemas/audio'
import type { Principal } from '../stores/account-types'
import { settleAudio } from './billing'
import { SPEECH_CONTENT_TYPES } from './formats'
import { offerServes, type UpstreamSpeech, type UpstreamSpeechRequest } from '../contracts'
import { serveCapability } from '../pipeline/serve'
import { createStreamMachine } from '../pipeline/stream-state'

/** A validated speech request. */
export type SpeechRequest = v.InferOutput<typeof speechRequestSchema>

interface Opened {
  speech: UpstreamSpeech
  iterator: AsyncIterator<Uint8Array>
  /** The first non-empty chunk: an attempt counts as served only once audio arrived (until then it may fall back). */
  first: Uint8Array
}

/** Speech once a provider sent audio: the attempt that serves it, how many were made, and when its audio began. */
interface Served extends Opened {
  attempt: Attempt
  tries: number
  firstChunkAt: number
}

/** What serveSpeech takes: the caller, the request, the client's signal, the request id and the generation's tags. */
type SpeechInput = { principal: Principal; request: SpeechRequest; signal: AbortSignal; requestId: string; tags?: GenerationTags }

/** Characters of the input text, as speech is priced: Unicode code points. */
export const countCharacters = (text: string): number => {
  let n = 0
  for (const _ of text) n++
  return n
}

/**
 * Serves POST /audio/speech (docs/audio.md#speech): checks the model serves speech and the voice is one of its voices,
 * plans the attempts, refuses without credits, then tries providers until one sends audio, and pipes the audio to
 * the client chunk by chunk as it arrives (at the client's pace), with the Content-Type of the requested format.
 * Billed exactly once however the stream ends (reported tokens, else characters).
 */
export async function serveSpeech(ctx: GatewayContext, input: SpeechInput): Promise<Response> {
  const { request, principal } = input
  const voice = request.voice
  const accepts = (voices: string[] | undefined) => voice === undefined || !voices?.length || voices.includes(voice)
  // The voice is checked against every speech offer of the model (400), then each attempt keeps to providers that have it.
  await ctx.catalogue.ready()
  const offers = ctx.catalogue.require(request.model).offers.filter((offer) => offerServes(offer, 'speech'))
  const voices = [...new Set(offers.flatMap((offer) => offer.model.supportedVoices ?? []))]
  if (!accepts(voices)) throw invalidRequest(`voice: ${voice} is not a voice of ${request.model}; use one of ${voices.join(', ')}`, 'voice')
  const characters = countCharacters(request.input)
  return serveCapability(ctx, {
    principal,
    routing: { capability: 'speech', model: request.model, provider: request.provider, accept: (offer) => accepts(offer.model.supportedVoices) },
    requestId: input.requestId,
    maxCost: (attempts) => maxAudioCost(ctx, attempts, { characters }),
    run: (attempts, hold) => speak(ctx, input, attempts, hold, characters),
  })
}

// Tries providers until one sends audio, then pipes it. The audio ends through the stream's machine
// (src/pipeline/stream-state.ts), whose one settlement replaces the hold by the charge, or releases it, however it ends.
async function speak(ctx: GatewayContext, input: SpeechInput, attempts: Attempt[], hold: Hold, characters: number): Promise<Response> {
  const { request, principal } = input

  const startedAt = ctx.now()
  const generationId = newGenerationId(startedAt)
  const upstreamAbort = new AbortController()
  const signal = AbortSignal.any([input.signal, upstreamAbort.signal])
  const machine = createStreamMachine<Served>({
    charge: (served, status) =>
      settleAudio(ctx, {
        principal,
        attempt: served.attempt,
        endpoint: 'speech',
        measures: { characters, reported: served.speech.usage },
        estimatedMeasure: false,
        generationId,
        upstreamId: served.speech.id ?? null,
        stream: true,
        status,
        startedAt,
        attempts: served.tries,
        hold,
        tags: input.tags,
        firstChunkAt: served.firstChunkAt,
      }),
    release: () => releaseOrLog(ctx, hold, input.requestId),
  })
  let served: Served
  try {
    const { result, attempt, tries } = await firstSuccessful(
      ctx,
      attempts,
      { signal, requestId: input.requestId, org: principal.org.id },
      async (a, options) => {
        const speech = await a.offer.provider.speech!(upstreamRequestFor(request, a), options)
        const iterator = speech.audio[Symbol.asyncIterator]()
        try {
          for (;;) {
            const next = await iterator.next()
            if (next.done) throw upstreamError(a.offer.provider, 'malformed_response', 'the answer held no audio')
            if (next.value.byteLength) return { speech, iterator, first: next.value } satisfies Opened
          }
        } catch (error) {
          void iterator.return?.()?.catch(() => undefined)
          throw error
        }
      },
    )
    served = { ...result, attempt, tries, firstChunkAt: ctx.now() }
  } catch (error) {
    // Answered as an HTTP error, nothing was sent yet: the hold is released (the pipeline's own release finds it so).
    machine.on('failed')
    await machine.settle({ kind: 'released' })
    throw error
  }
  machine.on('opened')
  const { attempt, iterator } = served
  const bill = (status: 'success' | 'error' | 'cancelled') => machine.settle({ kind: 'charged', served, status })

  let first: Uint8Array | undefined = served.first
  // In flight until it is closed and billed: gateway.close() waits for it (docs/operations.md).
  const shutdown = ctx.inFlight.signal
  const release = ctx.inFlight.track()
  const unhold = ctx.requestLog.hold(input.requestId)
  machine.onSettled(() => {
    shutdown.removeEventListener('abort', shutDown)
    unhold()
    release()
  })
  const stopUpstream = (reason?: unknown) => {
    input.signal.removeEventListener('abort', cancel)
    upstreamAbort.abort(reason)
    void iterator.return?.()?.catch(() => undefined)
  }
  let bodyController!: ReadableStreamDefaultController<Uint8Array>
  // Ends the body: closed whole, or cut short with `error` (the only way to tell a failure once the status is sent).
  const end = (error?: unknown) => {
    try {
      if (error === undefined) bodyController.close()
      else bodyController.error(error)
    } catch {
      // the client left meanwhile
    }
    machine.on('closed')
  }
  // The client went away: stop the provider, bill what was asked for.
  function cancel() {
    // The request was stopped by the gateway's shutdown (its route does so at the drain deadline), not by its client.
    if (shutdown.aborted && input.signal.reason === shutdown.reason) return shutDown()
    const from = machine.phase
    if (!machine.on('left')) return
    stopUpstream()
    // Audio that ended or was cut is billing already.
    if (from === 'flowing')
      void bill('cancelled').catch((error) => ctx.logger.error('billing abandoned speech failed', { request_id: input.requestId, error: String(error) }))
  }
  input.signal.addEventListener('abort', cancel, { once: true })
  // The gateway's drain deadline passed: the audio is cut short (as on a failure after it began, the only way to say
  // so once the status is sent) and billed as on a client's abort. Audio already billing (it ended) finishes as it was.
  function shutDown() {
    if (!machine.on('shutdown')) return
    stopUpstream(shutdown.reason)
    void bill('cancelled')
      .catch((error) => ctx.logger.error('billing speech cut by the shutdown failed', { request_id: input.requestId, error: String(error) }))
      .finally(() => end(shutdown.reason))
  }
  shutdown.addEventListener('abort', shutDown, { once: true })

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        bodyController = controller
      },
      // One upstream chunk per pull: nothing piles up in the gateway.
      async pull(controller) {
        if (first) {
          controller.enqueue(first)
          first = undefined
          return
        }
        try {
          for (;;) {
            const { done, value } = await iterator.next()
            if (machine.phase !== 'flowing') return
            if (done) {
              machine.on('done')
              input.signal.removeEventListener('abort', cancel)
              try {
                await bill('success')
              } catch (error) {
                return end(error)
              }
              return end()
            }
            if (value.byteLength) return controller.enqueue(value)
          }
        } catch (error) {
          if (!machine.on('broke')) return
          input.signal.removeEventListener('abort', cancel)
          const failure = toGatewayError(error, input.requestId)
          // Audio is on its way: the status is sent, so the only way to say it failed is to cut the response short.
          ctx.logger.warn(`speech from ${attempt.offer.provider.slug} failed after it began`, { request_id: input.requestId, error: failure.message })
          ctx.health.record(healthKeyOf(attempt), principal.org.id, { ok: false, latencyMs: ctx.now() - startedAt })
          await bill('error').catch(() => undefined)
          end(failure)
        }
      },
      cancel,
    },
    { highWaterMark: 0 },
  )
  if (shutdown.aborted) shutDown() // the deadline passed while the provider opened

  return gatewayResponse(
    body,
    200,
    {
      'content-type': SPEECH_CONTENT_TYPES[request.response_format],
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-generation-id': generationId,
    },
    input.requestId,
  )
}

/** The request as the attempt's provider receives it: its model id, the voice (default: the model's first), SSE when it reports usage so. */
function upstreamRequestFor(request: SpeechRequest, attempt: Attempt): UpstreamSpeechRequest {
  const voice = request.voice ?? attempt.offer.model.supportedVoices?.[0]
  return {
    model: attempt.offer.upstreamId,
    input: request.input,
    response_format: request.response_format,
    ...(voice !== undefined ? { voice } : {}),
    ...(request.speed !== undefined ? { speed: request.speed } : {}),
    ...(request.instructions !== undefined ? { instructions: request.instructions } : {}),
    ...(attempt.offer.model.speechUsageEvents ? { stream_format: 'sse' as const } : {}),
  }
}
