import { notImplemented } from '../errors'
import { speechRequestSchema, transcriptionRequestSchema, transcriptionSchema } from '../schemas/audio'
import { defineRoute } from './define'

const pending = () => {
  throw notImplemented('Audio')
}

/** POST /audio/speech (api.md 4.4): answers raw audio bytes. */
export const speechRoute = defineRoute({
  method: 'POST', path: '/audio/speech', operationId: 'createSpeech', summary: 'Synthesize speech; answers the audio bytes', tag: 'Audio',
  auth: 'key', status: 200, body: speechRequestSchema, responseType: 'audio/mpeg', handler: pending,
})

/** POST /audio/transcriptions (api.md 4.4). */
export const transcriptionRoute = defineRoute({
  method: 'POST', path: '/audio/transcriptions', operationId: 'createTranscription', summary: 'Transcribe base64 audio', tag: 'Audio',
  auth: 'key', status: 200, body: transcriptionRequestSchema, response: transcriptionSchema,
  bodyLimit: 'transcription', handler: pending,
})
