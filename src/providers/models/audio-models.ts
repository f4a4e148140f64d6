import type { ProviderModel } from '../../contracts'

/*
 * OpenAI's speech (`/audio/speech`) and transcription (`/audio/transcriptions`) models, with their published list
 * prices in USD and voices. Checked on 2026-11-26: OpenAI retires the speech models on 2027-01-06 and the
 * transcription models on 2027-02-26 (see each entry's `source`); their prices are unchanged per the 2026-11-26 audit.
 * Override them with `createGateway({ modelOverrides })` when your contract differs.
 *
 * No replacement is named for them: OpenAI recommends gpt-realtime-2.1-mini for speech, which does not serve
 * `/audio/speech`, and gpt-transcribe / gpt-live-transcribe for transcription, whose token prices were not found.
 *
 * Pricing units (docs/audio.md#billing, docs/catalogue.md#pricing-units):
 * - `character`: USD per character of input text (speech; tts-1 $15 and tts-1-hd $30 per 1M characters);
 * - `audio_second`: USD per second of input audio (transcription; whisper-1 $0.006 per minute);
 * - per token, where the upstream reports token usage: `prompt` per text input token, `audio` per audio input token,
 *   `completion` per output token (speech: audio output tokens; transcription: text output tokens).
 * A token-priced model also carries `character` or `audio_second` at OpenAI's published per-minute estimate, used
 * (and marked as an estimate) only when an answer reports no usage.
 */

const perMillion = (usd: number) => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const perMinute = (usd: number) => (usd / 60).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const docs = (model: string) => `https://platform.openai.com/docs/models/${model}`
const CHECKED = '2026-11-26'
const SPEECH_SHUTDOWN = '2027-01-06'
const TRANSCRIPTION_SHUTDOWN = '2027-02-26'
const speechSource = (note = ''): ProviderModel['source'] => ({
  url: 'https://www.assemblyai.com/blog/migrate-openai-tts-to-assemblyai',
  checked: CHECKED,
  note: `OpenAI shuts tts-1, tts-1-hd and gpt-4o-mini-tts down on 2027-01-06 (deprecations notice of 2026-10-01, quoted by AssemblyAI and micdrop.dev); its replacement, gpt-realtime-2.1-mini, does not serve /audio/speech, so none is named. Prices per the 2026-11-26 audit.${note}`,
})
const transcriptionSource = (note = ''): ProviderModel['source'] => ({
  url: 'https://www.developersdigest.tech/blog/whisper-1-gpt-4o-transcribe-deprecation',
  checked: CHECKED,
  note: `OpenAI shuts whisper-1, gpt-4o-transcribe and gpt-4o-mini-transcribe down on 2027-02-26 (deprecations notice of 2026-08-26); it recommends gpt-transcribe ($0.0045 a minute) or gpt-live-transcribe, not added: their token prices were not found.${note}`,
})
const TRANSCRIBE_AUDIO =
  ' Audio input at $6 (mini $3) per M tokens as OpenAI’s cookbook and its pricing page give it (commit a22e6cb of openai/openai-cookbook; halfpower.work for the mini); LiteLLM’s table lists audio at the text-input rate ($2.50, mini $1.25), which looks like its own default, so $6 / $3 are kept.'

/** The voices of tts-1 and tts-1-hd. */
export const OPENAI_TTS_VOICES = ['alloy', 'ash', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer']
/** The voices of gpt-4o-mini-tts: tts-1's and ballad, verse, marin, cedar. */
export const OPENAI_GPT_TTS_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar']

const SPEECH_PARAMETERS = ['voice', 'speed', 'response_format']
const TRANSCRIPTION_PARAMETERS = ['language', 'prompt', 'temperature', 'response_format']
const speech = { inputModalities: ['text'], outputModalities: ['audio'], endpoints: ['/audio/speech'] } satisfies Partial<ProviderModel>
const transcription = { inputModalities: ['audio'], outputModalities: ['text'], endpoints: ['/audio/transcriptions'] } satisfies Partial<ProviderModel>

/** OpenAI's speech and transcription models (add them to `knownModels.openai`). */
export const openaiAudioModels: ProviderModel[] = [
  {
    id: 'openai/tts-1',
    name: 'OpenAI: TTS-1',
    description: 'Text to speech optimised for speed. 9 voices; no instructions. $15 per 1M characters.',
    pricing: { prompt: '0', completion: '0', character: perMillion(15), currency: 'USD' },
    supportedParameters: SPEECH_PARAMETERS,
    supportedVoices: OPENAI_TTS_VOICES,
    ...speech,
    created: 1699228800,
    detailsUrl: docs('tts-1'),
    expirationDate: SPEECH_SHUTDOWN,
    source: speechSource(),
  },
  {
    id: 'openai/tts-1-hd',
    name: 'OpenAI: TTS-1 HD',
    description: 'Text to speech optimised for quality. 9 voices; no instructions. $30 per 1M characters.',
    pricing: { prompt: '0', completion: '0', character: perMillion(30), currency: 'USD' },
    supportedParameters: SPEECH_PARAMETERS,
    supportedVoices: OPENAI_TTS_VOICES,
    ...speech,
    created: 1699228800,
    detailsUrl: docs('tts-1-hd'),
    expirationDate: SPEECH_SHUTDOWN,
    source: speechSource(),
  },
  {
    id: 'openai/gpt-4o-mini-tts',
    name: 'OpenAI: GPT-4o mini TTS',
    contextLength: 2_000,
    description:
      'Steerable text to speech (instructions set tone and style). Billed by tokens: $0.60 per 1M text input tokens, $12 per 1M audio output tokens (about $0.015 a minute).',
    // Per character: $0.015 a minute at about 15 characters a second of speech ≈ $15 per 1M characters (estimate only).
    pricing: { prompt: perMillion(0.6), completion: perMillion(12), character: perMillion(15), currency: 'USD' },
    supportedParameters: [...SPEECH_PARAMETERS, 'instructions'],
    supportedVoices: OPENAI_GPT_TTS_VOICES,
    speechUsageEvents: true,
    ...speech,
    created: 1742428800,
    detailsUrl: docs('gpt-4o-mini-tts'),
    expirationDate: SPEECH_SHUTDOWN,
    source: speechSource(' The per-character price is an estimate from $0.015 a minute, used only when no usage is reported.'),
  },
  {
    id: 'openai/whisper-1',
    name: 'OpenAI: Whisper',
    description: 'Speech to text (Whisper V2). Billed per second of audio: $0.006 a minute.',
    pricing: { prompt: '0', completion: '0', audio_second: perMinute(0.006), currency: 'USD' },
    supportedParameters: [...TRANSCRIPTION_PARAMETERS, 'timestamp_granularities'],
    ...transcription,
    created: 1677532800,
    detailsUrl: docs('whisper-1'),
    expirationDate: TRANSCRIPTION_SHUTDOWN,
    source: transcriptionSource(' $0.006 a minute per the 2026-11-26 audit.'),
  },
  {
    id: 'openai/gpt-4o-transcribe',
    name: 'OpenAI: GPT-4o Transcribe',
    contextLength: 16_000,
    description:
      'Speech to text with GPT-4o. Billed by tokens: $2.50 per 1M text input, $6 per 1M audio input, $10 per 1M output tokens (about $0.006 a minute). json only (no verbose_json).',
    pricing: { prompt: perMillion(2.5), audio: perMillion(6), completion: perMillion(10), audio_second: perMinute(0.006), currency: 'USD' },
    supportedParameters: TRANSCRIPTION_PARAMETERS,
    ...transcription,
    created: 1742428800,
    detailsUrl: docs('gpt-4o-transcribe'),
    expirationDate: TRANSCRIPTION_SHUTDOWN,
    source: transcriptionSource(TRANSCRIBE_AUDIO),
  },
  {
    id: 'openai/gpt-4o-mini-transcribe',
    name: 'OpenAI: GPT-4o mini Transcribe',
    contextLength: 16_000,
    description:
      'Speech to text with GPT-4o mini. Billed by tokens: $1.25 per 1M text input, $3 per 1M audio input, $5 per 1M output tokens (about $0.003 a minute). json only (no verbose_json).',
    pricing: { prompt: perMillion(1.25), audio: perMillion(3), completion: perMillion(5), audio_second: perMinute(0.003), currency: 'USD' },
    supportedParameters: TRANSCRIPTION_PARAMETERS,
    ...transcription,
    created: 1742428800,
    detailsUrl: docs('gpt-4o-mini-transcribe'),
    expirationDate: TRANSCRIPTION_SHUTDOWN,
    source: transcriptionSource(TRANSCRIBE_AUDIO),
  },
]
