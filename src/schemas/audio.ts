import * as v from 'valibot'
import { FormFile } from '../http/body'
import { CHAT_LIMITS, providerPreferencesSchema } from './chat'
import { int } from './common'

const modelId = v.pipe(v.string(), v.minLength(1), v.maxLength(CHAT_LIMITS.modelId))

/** Body of POST /audio/speech (docs/audio.md#speech). */
export const speechRequestSchema = v.looseObject({
  model: modelId,
  input: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(4096)),
  voice: v.optional(v.string()),
  response_format: v.optional(v.picklist(['mp3', 'pcm', 'wav', 'opus', 'aac', 'flac']), 'mp3'),
  speed: v.optional(v.pipe(v.number(), v.minValue(0.25), v.maxValue(4))),
  instructions: v.optional(v.string()),
  provider: v.optional(providerPreferencesSchema),
})

/** Body of POST /audio/transcriptions (JSON form; docs/audio.md#transcription). */
export const transcriptionRequestSchema = v.looseObject({
  model: modelId,
  input_audio: v.object({
    data: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
    format: v.picklist(['wav', 'mp3', 'flac', 'm4a', 'ogg', 'webm', 'aac']),
  }),
  language: v.optional(v.string()),
  prompt: v.optional(v.string()),
  temperature: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  response_format: v.optional(v.picklist(['json', 'verbose_json']), 'json'),
  timestamp_granularities: v.optional(v.pipe(v.array(v.picklist(['word', 'segment'])), v.maxLength(2))),
  provider: v.optional(providerPreferencesSchema),
})

const granularity = v.picklist(['word', 'segment'])

/** Multipart form of POST /audio/transcriptions: OpenAI's upload (`file`, `model`, …), so its clients work unchanged. */
export const transcriptionFormSchema = v.looseObject({
  file: v.instance(FormFile, 'must be an uploaded file'),
  model: modelId,
  language: v.optional(v.string()),
  prompt: v.optional(v.string()),
  temperature: v.optional(v.pipe(v.string(), v.regex(/^\s*\d+(?:\.\d+)?\s*$/, 'must be a number'), v.transform(Number), v.minValue(0), v.maxValue(1))),
  response_format: v.optional(v.picklist(['json', 'verbose_json']), 'json'),
  'timestamp_granularities[]': v.optional(v.union([granularity, v.pipe(v.array(granularity), v.maxLength(2))])),
})

/** Answer of POST /audio/transcriptions. */
export const transcriptionSchema = v.looseObject({
  text: v.string(),
  usage: v.object({
    cost: v.number(),
    cost_eur: v.number(),
    input_tokens: int(),
    output_tokens: int(),
    total_tokens: int(),
    seconds: v.number(),
  }),
  language: v.optional(v.string()),
  duration: v.optional(v.number()),
  segments: v.optional(v.array(v.unknown())),
})
