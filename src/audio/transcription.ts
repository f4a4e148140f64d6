import type * as v from 'valibot'
import type { Hold } from '../billing/holds'
import type { Attempt } from '../routing/plan'
import { maxAudioCost } from './max-cost'
import { newGenerationId } from '../generation/id'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { invalidRequest } from '../errors'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { UpstreamTranscriptionRequest } from '../contracts'
import { upstreamError } from '../providers/upstream-error'
import { firstSuccessful } from '../routing/attempts'
import type { transcriptionFormSchema, transcriptionRequestSchema } from '../schemas/audio'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/account-types'
import { settleAudio } from './billing'
import { audioUsageView } from './usage-view'
import { assertFormat, declaredFormat, decodeBase64, measureDuration, sniffFormat, TRANSCRIPTION_FORMATS } from './formats'
import { serveCapability } from '../pipeline/serve'

/** A validated JSON transcription request. */
export type TranscriptionJsonRequest = v.InferOutput<typeof transcriptionRequestSchema>
/** A validated multipart transcription upload (OpenAI's form). */
export type TranscriptionForm = v.InferOutput<typeof transcriptionFormSchema>

/** A transcription request, whichever way it came: the audio decoded and its format checked. */
export interface TranscriptionInput extends UpstreamTranscriptionRequest {
  /** Routing preferences (as for chat). */
  provider?: ChatRequest['provider']
}

/** The JSON form: `input_audio.data` is raw base64 of audio in `input_audio.format` (400 for bad base64 or another format). */
export function fromJson(body: TranscriptionJsonRequest): TranscriptionInput {
  const audio = decodeBase64(body.input_audio.data, 'input_audio.data')
  assertFormat(audio, body.input_audio.format, 'input_audio.data')
  return {
    model: body.model,
    audio,
    format: body.input_audio.format,
    language: body.language,
    prompt: body.prompt,
    temperature: body.temperature,
    response_format: body.response_format,
    timestamp_granularities: body.timestamp_granularities,
    provider: body.provider,
  }
}

/**
 * OpenAI's multipart upload: the format is the one the file's name (or else its media type) declares, which its
 * bytes must match; a file that declares none is recognised by its magic bytes.
 */
export function fromForm(form: TranscriptionForm): TranscriptionInput {
  const { file } = form
  if (!file.size) throw invalidRequest('file: is empty', 'file')
  const declared = declaredFormat(file.filename, file.type)
  if (declared) assertFormat(file.data, declared, 'file')
  const format = declared ?? sniffFormat(file.data)
  if (!format) throw invalidRequest(`file: not a supported audio format (send one of ${TRANSCRIPTION_FORMATS.join(', ')})`, 'file')
  const granularities = form['timestamp_granularities[]']
  return {
    model: form.model,
    audio: file.data,
    format,
    language: form.language,
    prompt: form.prompt,
    temperature: form.temperature,
    response_format: form.response_format,
    ...(granularities !== undefined ? { timestamp_granularities: ([] as ('word' | 'segment')[]).concat(granularities) } : {}),
  }
}

/** What serveTranscription takes: the caller, the request, the client's signal, the request id and the generation's tags. */
type TranscribeInput = { principal: Principal; request: TranscriptionInput; signal: AbortSignal; requestId: string; tags?: GenerationTags }

const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0

/**
 * Serves POST /audio/transcriptions (docs/audio.md#transcription): plans the attempts, refuses without credits,
 * transcribes with the first provider that succeeds, bills once (reported tokens, else seconds: the upstream's, else
 * measured from the audio) and answers `{ text, usage }` (verbose_json adds `language`, `duration`, `segments`).
 */
export async function serveTranscription(ctx: GatewayContext, input: TranscribeInput): Promise<Response> {
  const { request, principal } = input
  const measured = measureDuration(request.audio, request.format)
  return serveCapability(ctx, {
    principal,
    routing: { capability: 'transcription', model: request.model, provider: request.provider },
    requestId: input.requestId,
    maxCost: (attempts) => maxAudioCost(ctx, attempts, { seconds: measured.seconds }),
    run: (attempts, hold) => transcribe(ctx, input, attempts, hold, measured),
  })
}

// Transcribes with the first provider that succeeds and bills it; the hold is replaced by the charge.
async function transcribe(
  ctx: GatewayContext,
  input: TranscribeInput,
  attempts: Attempt[],
  hold: Hold,
  measuredAudio: { seconds: number; estimated: boolean },
): Promise<Response> {
  const { request, principal } = input

  const startedAt = ctx.now()
  const upstreamRequest = (upstreamId: string): UpstreamTranscriptionRequest => ({
    model: upstreamId,
    audio: request.audio,
    format: request.format,
    response_format: request.response_format,
    ...(request.language !== undefined ? { language: request.language } : {}),
    ...(request.prompt !== undefined ? { prompt: request.prompt } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.timestamp_granularities !== undefined ? { timestamp_granularities: request.timestamp_granularities } : {}),
  })
  const { result, attempt, tries } = await firstSuccessful(ctx, attempts, { ...input, org: principal.org.id }, async (a, options) => {
    const transcription = await a.offer.provider.transcribe!(upstreamRequest(a.offer.upstreamId), options)
    if (typeof transcription?.text !== 'string') throw upstreamError(a.offer.provider, 'malformed_response', 'the transcription has no text')
    return transcription
  })

  const generationId = newGenerationId(startedAt)
  const reported = result.usage ?? undefined
  const measured = finite(reported?.seconds) || finite(result.duration) ? undefined : measuredAudio
  const seconds = finite(reported?.seconds) ? reported.seconds : finite(result.duration) ? result.duration : measured!.seconds
  const billed = await settleAudio(ctx, {
    principal,
    attempt,
    endpoint: 'transcription',
    measures: { reported, seconds },
    estimatedMeasure: measured?.estimated ?? false,
    generationId,
    upstreamId: typeof result.id === 'string' ? result.id : null,
    stream: false,
    status: 'success',
    startedAt,
    attempts: tries,
    hold,
    tags: input.tags,
  })
  const verbose = request.response_format === 'verbose_json'
  const body = {
    text: result.text,
    ...(verbose
      ? {
          language: result.language ?? request.language ?? 'unknown',
          duration: finite(result.duration) ? result.duration : seconds,
          segments: Array.isArray(result.segments) ? result.segments : [],
          ...(Array.isArray(result.words) ? { words: result.words } : {}),
        }
      : {}),
    ...(Array.isArray(result.logprobs) ? { logprobs: result.logprobs } : {}),
    usage: audioUsageView(billed),
  }
  return gatewayResponse(stringifyExact(body), 200, { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId }, input.requestId)
}
