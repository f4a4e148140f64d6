import * as v from 'valibot'
import { CHAT_LIMITS, providerPreferencesSchema } from './chat'
import { int, safeInt } from './common'

/** Size bounds of an embeddings request (docs/embeddings.md#limits, docs/limits.md). */
export const EMBEDDING_LIMITS = {
  /** Inputs of one request (OpenAI's own limit). */
  inputs: 2048,
  /** Characters of one input string. */
  inputCharacters: 262_144,
  /** Tokens of one input token array. */
  inputTokens: 65_536,
} as const

const modelId = v.pipe(v.string(), v.minLength(1), v.maxLength(CHAT_LIMITS.modelId))

// The four shapes OpenAI's `input` takes; sizes and token values are checked with their own messages (src/embeddings/input.ts).
const input = v.union(
  [v.string(), v.array(v.string()), v.array(v.number()), v.array(v.array(v.number()))],
  'must be a string, an array of strings, an array of token ids, or an array of token id arrays',
)

/** Body of POST /embeddings: OpenAI's request plus OpenRouter's `models` and `provider` (docs/embeddings.md). */
export const embeddingsRequestSchema = v.looseObject({
  model: modelId,
  models: v.optional(v.nullable(v.pipe(v.array(modelId), v.maxLength(CHAT_LIMITS.models)))),
  input,
  encoding_format: v.optional(
    v.pipe(
      v.nullable(v.picklist(['float', 'base64'], 'must be "float" or "base64"')),
      v.transform((format) => format ?? 'float'),
    ),
    'float',
  ),
  dimensions: v.optional(
    v.pipe(
      v.nullable(safeInt(1)),
      v.transform((n) => n ?? undefined),
    ),
  ),
  user: v.optional(v.nullable(v.string())),
  provider: v.optional(providerPreferencesSchema),
})

/** A validated embeddings request. */
export type EmbeddingsRequest = v.InferOutput<typeof embeddingsRequestSchema>

/** Answer of POST /embeddings (docs/embeddings.md#the-answer). */
export const embeddingsResponseSchema = v.object({
  id: v.string(),
  object: v.literal('list'),
  data: v.array(
    v.object({
      object: v.literal('embedding'),
      index: int(),
      /** Floats, or with `encoding_format: "base64"` the float32 little-endian bytes in base64. */
      embedding: v.union([v.array(v.number()), v.string()]),
    }),
  ),
  model: v.string(),
  provider: v.string(),
  usage: v.looseObject({
    prompt_tokens: int(),
    total_tokens: int(),
    cost: v.number(),
    cost_currency: v.string(),
    cost_eur: v.number(),
    is_byok: v.boolean(),
    cost_details: v.looseObject({
      upstream_inference_cost: v.nullable(v.number()),
      upstream_inference_prompt_cost: v.number(),
      upstream_inference_completions_cost: v.number(),
    }),
    estimated: v.optional(v.boolean()),
  }),
})
