import * as v from 'valibot'
import { CHAT_LIMITS, providerPreferencesSchema } from './chat'
import { int } from './common'

/** Size bounds of an image generation request (docs/images.md#limits): OpenAI's own for its GPT Image models. */
export const IMAGE_LIMITS = {
  /** Characters of the prompt. */
  promptCharacters: 32_000,
  /** Images of one request. */
  images: 10,
} as const

/** Sizes of OpenAI's GPT Image models (`auto`: the model picks one). */
export const IMAGE_SIZES = ['auto', '1024x1024', '1536x1024', '1024x1536'] as const
/** Qualities of OpenAI's GPT Image models (`auto`: the model picks one). */
export const IMAGE_QUALITIES = ['auto', 'low', 'medium', 'high'] as const

const modelId = v.pipe(v.string(), v.minLength(1), v.maxLength(CHAT_LIMITS.modelId))

/** Body of POST /images/generations: OpenAI's Images API request plus OpenRouter's `models` and `provider` (docs/images.md). */
export const imagesRequestSchema = v.looseObject({
  model: modelId,
  models: v.optional(v.nullable(v.pipe(v.array(modelId), v.maxLength(CHAT_LIMITS.models)))),
  prompt: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(IMAGE_LIMITS.promptCharacters)),
  n: v.optional(v.pipe(int(), v.minValue(1), v.maxValue(IMAGE_LIMITS.images)), 1),
  size: v.optional(v.picklist(IMAGE_SIZES), 'auto'),
  quality: v.optional(v.picklist(IMAGE_QUALITIES), 'auto'),
  background: v.optional(v.picklist(['auto', 'transparent', 'opaque'])),
  output_format: v.optional(v.picklist(['png', 'jpeg', 'webp'])),
  output_compression: v.optional(v.pipe(int(), v.minValue(0), v.maxValue(100))),
  moderation: v.optional(v.picklist(['auto', 'low'])),
  response_format: v.optional(v.picklist(['b64_json'], 'must be "b64_json": images are returned as base64'), 'b64_json'),
  user: v.optional(v.string()),
  provider: v.optional(providerPreferencesSchema),
})

/** A validated image generation request. */
export type ImagesRequest = v.InferOutput<typeof imagesRequestSchema>

/** Answer of POST /images/generations. */
export const imagesResponseSchema = v.looseObject({
  created: int(),
  data: v.array(v.looseObject({ b64_json: v.string(), revised_prompt: v.optional(v.string()) })),
  model: v.string(),
  provider: v.string(),
  usage: v.looseObject({
    cost: v.number(),
    cost_eur: v.number(),
    input_tokens: int(),
    output_tokens: int(),
    total_tokens: int(),
    images: int(),
  }),
})
