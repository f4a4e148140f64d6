import { CAPABILITIES } from '../contracts'
import { serveSpeech } from '../audio/speech'
import { fromForm, fromJson, serveTranscription } from '../audio/transcription'
import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { speechRequestSchema, transcriptionFormSchema, transcriptionRequestSchema, transcriptionSchema } from '../schemas/audio'
import { defineRoute } from './define'
import { withPolicyTrail } from '../policies/run'
import { speechView, transcriptionView } from '../policies/views'

/** POST /audio/speech (docs/audio.md#speech): answers the raw audio bytes, streamed as they arrive. */
export const speechRoute = defineRoute({
  method: 'POST',
  path: CAPABILITIES.speech.path,
  capability: 'speech',
  operationId: 'createSpeech',
  summary: 'Synthesize speech; answers the audio bytes',
  tag: 'Audio',
  auth: 'key',
  status: 200,
  body: speechRequestSchema,
  responseType: 'audio/mpeg',
  policyView: speechView,
  handler: ({ ctx, principal, body, event, requestId, policy }) =>
    serveSpeech(ctx, {
      principal: principal,
      request: body,
      signal: clientAbortController(event).signal,
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, body), policy),
    }),
})

/** POST /audio/transcriptions (docs/audio.md#transcription): JSON with base64 `input_audio`, or OpenAI's multipart upload. */
export const transcriptionRoute = defineRoute({
  method: 'POST',
  path: CAPABILITIES.transcription.path,
  capability: 'transcription',
  operationId: 'createTranscription',
  summary: 'Transcribe audio (base64 JSON or a multipart file upload)',
  tag: 'Audio',
  auth: 'key',
  status: 200,
  body: transcriptionRequestSchema,
  form: transcriptionFormSchema,
  response: transcriptionSchema,
  bodyLimit: 'transcription',
  policyView: transcriptionView,
  handler: ({ ctx, principal, body, form, event, requestId, policy }) =>
    serveTranscription(ctx, {
      principal: principal,
      request: form ? fromForm(form) : fromJson(body!),
      signal: clientAbortController(event).signal,
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, form ?? body), policy),
    }),
})
