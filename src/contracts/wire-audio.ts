/** Audio formats of speech output (docs/audio.md#speech). */
export type SpeechFormat = 'mp3' | 'pcm' | 'wav' | 'opus' | 'aac' | 'flac'
/** Audio formats a transcription accepts (docs/audio.md#formats-and-magic-bytes). */
export type TranscriptionFormat = 'wav' | 'mp3' | 'flac' | 'm4a' | 'ogg' | 'webm' | 'aac'

/** Media type of each transcription input format (what an upload of it is labelled upstream). */
export const TRANSCRIPTION_CONTENT_TYPES: Readonly<Record<TranscriptionFormat, string>> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  webm: 'audio/webm',
  aac: 'audio/aac',
}

/** A speech request as a provider receives it: the provider's model id, the voice already checked. */
export interface UpstreamSpeechRequest {
  model: string
  input: string
  voice?: string
  response_format: SpeechFormat
  speed?: number
  instructions?: string
  /** `sse`: stream the audio as events ending with token usage (set by the gateway when the model has `speechUsageEvents`). */
  stream_format?: 'sse' | 'audio'
}

/** Usage an audio upstream reports: tokens (gpt-4o-mini-tts, gpt-4o-transcribe) or seconds of input audio (whisper-1). */
export interface AudioUsage {
  input_tokens?: number
  output_tokens?: number
  total_tokens?: number
  input_token_details?: { text_tokens?: number; audio_tokens?: number; [key: string]: unknown } | null
  /** Seconds of input audio (OpenAI's `usage: { type: "duration", seconds }`). */
  seconds?: number
  [key: string]: unknown
}

/** A speech answer: the audio as it arrives. */
export interface UpstreamSpeech {
  /** The audio bytes, in the requested format, as they arrive. Iterate it once. */
  audio: AsyncIterable<Uint8Array>
  /** Usage the provider reported; complete only once `audio` has ended (it may come last, as in OpenAI's SSE). */
  usage?: AudioUsage
  /** The provider's id of the request, when it gives one. */
  id?: string
}

/** A transcription request as a provider receives it: the decoded audio, its format already checked. */
export interface UpstreamTranscriptionRequest {
  model: string
  audio: Uint8Array
  format: TranscriptionFormat
  language?: string
  prompt?: string
  temperature?: number
  response_format: 'json' | 'verbose_json'
  timestamp_granularities?: ('word' | 'segment')[]
}

/** A transcription as OpenAI shapes it (`json` or `verbose_json`). */
export interface UpstreamTranscription {
  text: string
  language?: string
  /** Seconds of audio (verbose_json). */
  duration?: number
  segments?: unknown[]
  words?: unknown[]
  usage?: AudioUsage | null
  [key: string]: unknown
}
