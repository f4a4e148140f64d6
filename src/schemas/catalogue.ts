import * as v from 'valibot'
import { int } from './common'

const strings = v.array(v.string())

/** api.md 2.7: pricing of a model (decimal strings per token or per unit, decisions.md §5). */
export const pricingSchema = v.object({
  prompt: v.string(),
  completion: v.string(),
  request: v.optional(v.string()),
  image: v.optional(v.string()),
  image_token: v.optional(v.string()),
  image_output: v.optional(v.string()),
  audio: v.optional(v.string()),
  input_audio_cache: v.optional(v.string()),
  web_search: v.optional(v.string()),
  internal_reasoning: v.optional(v.string()),
  input_cache_read: v.optional(v.string()),
  input_cache_write: v.optional(v.string()),
  character: v.optional(v.string()),
  audio_second: v.optional(v.string()),
  currency: v.optional(v.string()),
  discount: v.optional(v.number()),
})

/** api.md 2.7: one model of the catalogue. */
export const modelSchema = v.object({
  id: v.string(),
  object: v.literal('model'),
  canonical_slug: v.string(),
  hugging_face_id: v.string(),
  name: v.string(),
  created: int(),
  description: v.string(),
  context_length: int(),
  pricing: pricingSchema,
  architecture: v.object({
    modality: v.string(),
    input_modalities: strings,
    output_modalities: strings,
    tokenizer: v.string(),
    instruct_type: v.nullable(v.string()),
  }),
  top_provider: v.object({ context_length: int(), max_completion_tokens: v.nullable(int()), is_moderated: v.boolean() }),
  per_request_limits: v.nullable(v.record(v.string(), v.unknown())),
  supported_parameters: strings,
  supported_voices: strings,
  knowledge_cutoff: v.nullable(v.string()),
  release_date: v.nullable(v.string()),
  last_updated: v.nullable(v.string()),
  reasoning: v.object({ mandatory: v.boolean(), supported_efforts: strings, supports_max_tokens: v.boolean() }),
  expiration_date: v.nullable(v.string()),
  links: v.object({ details: v.string() }),
  supported_api_endpoints: strings,
  default_parameters: v.looseObject({
    temperature: v.optional(v.nullable(v.number())),
    top_p: v.optional(v.nullable(v.number())),
    top_k: v.optional(v.nullable(v.number())),
    frequency_penalty: v.optional(v.nullable(v.number())),
    presence_penalty: v.optional(v.nullable(v.number())),
    repetition_penalty: v.optional(v.nullable(v.number())),
  }),
  author: v.string(),
  slug: v.string(),
  tags: strings,
  providers: v.array(v.object({ name: v.string(), slug: v.string() })),
  author_info: v.object({
    slug: v.string(),
    name: v.string(),
    display_name: v.string(),
    icon_url: v.string(),
    gradient_from: v.string(),
    gradient_to: v.string(),
    gradient_via: v.string(),
    website_url: v.string(),
  }),
})

const flag = v.optional(v.picklist(['true', 'false', '1', '0']))

/** Query of GET /models (api.md 4.5, decisions.md §5). */
export const listModelsQuerySchema = v.object({
  category: v.optional(v.string()),
  supported_parameters: v.optional(v.string()),
  provider: v.optional(v.string()),
  use_rss: flag,
  use_rss_chat_links: flag,
})

/** GET /models answer. */
export const modelListSchema = v.object({ object: v.literal('list'), data: v.array(modelSchema) })

/** GET /models/count answer. */
export const modelCountSchema = v.object({ data: v.object({ count: int() }) })

/** api.md 2.8: one provider. */
export const providerSchema = v.object({
  id: v.string(),
  name: v.string(),
  slug: v.string(),
  description: v.string(),
  model_count: int(),
  privacy_policy_url: v.nullable(v.string()),
  terms_of_service_url: v.nullable(v.string()),
  status_page_url: v.nullable(v.string()),
  region: v.nullable(v.string()),
  enabled: v.boolean(),
  headquarters: v.nullable(v.string()),
  icon_url: v.nullable(v.string()),
  data_policy: v.record(v.string(), v.unknown()),
  byok: v.object({ supported: v.boolean() }),
})

/** GET /providers answer. */
export const providerListSchema = v.object({ data: v.array(providerSchema) })
