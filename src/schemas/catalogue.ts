import * as v from 'valibot'
import { int, queryInteger } from './common'

const strings = v.array(v.string())

const price = v.optional(v.string())
// The prices a model and each of its endpoints show (decimal strings per token or per unit).
const priceFields = {
  prompt: v.string(),
  completion: v.string(),
  request: price,
  image: price,
  image_output: price,
  audio: price,
  web_search: price,
  internal_reasoning: price,
  input_cache_read: price,
  input_cache_write: price,
  character: price,
  audio_second: price,
}

/** Pricing of a model (decimal strings per token or per unit: docs/catalogue.md#pricing-units). */
export const pricingSchema = v.object({
  ...priceFields,
  image_token: price,
  input_audio_cache: price,
  currency: v.optional(v.string()),
  discount: v.optional(v.number()),
})

/** One model of the catalogue (docs/catalogue.md#what-models-shows). */
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

// The filters of /models, /models/count and /models/user (src/catalogue/filter.ts).
const filters = {
  category: v.optional(v.string()),
  supported_parameters: v.optional(v.string()),
  provider: v.optional(v.string()),
  /** Comma list of `text`, `image`, `audio`, `file`, …: models accepting any of them. */
  input_modalities: v.optional(v.string()),
  /** Comma list of `text`, `image`, `audio`, …, or `all`: models producing any of them. */
  output_modalities: v.optional(v.string()),
}
// OpenRouter's pagination (its SDK always sends offset=0&limit=500): both absent lists everything.
const pagination = {
  offset: v.optional(queryInteger(0, Number.MAX_SAFE_INTEGER)),
  limit: v.optional(queryInteger(1, 1000)),
}

/** Query of GET /models (docs/catalogue.md#filters-pages-and-rss: its filters, OpenRouter's modality filters and pagination). */
export const listModelsQuerySchema = v.object({
  ...filters,
  ...pagination,
  use_rss: flag,
  use_rss_chat_links: flag,
})

/** Query of GET /models/user. */
export const listUserModelsQuerySchema = v.object({ ...filters, ...pagination })

/** Query of GET /embeddings/models (OpenRouter's `listEmbeddingsModels`): its pagination alone. */
export const listEmbeddingModelsQuerySchema = v.object(pagination)

/** Query of GET /models/count: the same filters as /models, so that the count matches the list. */
export const countModelsQuerySchema = v.object(filters)

/** GET /models answer: the seed's `object` and `data`, and OpenRouter's `total_count` (after filters, before pagination) and `links.next` (the next page, or null). */
export const modelListSchema = v.object({
  object: v.literal('list'),
  data: v.array(modelSchema),
  total_count: int(),
  links: v.object({ next: v.nullable(v.string()) }),
})

/** GET /models/count answer. */
export const modelCountSchema = v.object({ data: v.object({ count: int() }) })

const pathPart = v.pipe(v.string(), v.minLength(1), v.maxLength(256))
/** Path of a model as `{author}/{slug}`. */
export const modelPathSchema = v.object({ author: pathPart, slug: pathPart })
/** Path of a model as one `{id}` segment (`openai%2Fgpt-4o-mini`, as OpenAI's SDK encodes it). */
export const modelIdPathSchema = v.object({ id: pathPart })

/** GET /models/{id}: OpenAI's model object (`id`, `object`, `created`, `owned_by`) with every field of the catalogue's model beside it. */
export const modelObjectSchema = v.object({ ...modelSchema.entries, owned_by: v.string() })

/** GET /model/{author}/{slug} answer (OpenRouter's `getModel`). */
export const modelResponseSchema = v.object({ data: modelSchema })

const percentileStats = v.nullable(v.object({ p50: v.number(), p75: v.number(), p90: v.number(), p99: v.number() }))

/** One provider's endpoint of a model, in OpenRouter's shape (`PublicEndpoint`). */
export const modelEndpointSchema = v.object({
  name: v.string(),
  model_id: v.string(),
  model_name: v.string(),
  context_length: int(),
  pricing: v.object({ ...priceFields, currency: v.string(), discount: v.number() }),
  provider_name: v.string(),
  /** The provider's slug, usable in `provider.order` / `only` / `ignore`. */
  tag: v.string(),
  quantization: v.nullable(v.string()),
  max_completion_tokens: v.nullable(int()),
  max_prompt_tokens: v.nullable(int()),
  supported_parameters: strings,
  /** 0 healthy, -1 failed recently, -2 half-open (a probe may go), -3 open (skipped while another way is left). */
  status: int(),
  /** Successful outcomes in percent over the router's health window; null before any. */
  uptime_last_30m: v.nullable(v.number()),
  uptime_last_5m: v.nullable(v.number()),
  uptime_last_1d: v.nullable(v.number()),
  supports_implicit_caching: v.boolean(),
  supports_tool_choice: v.object({ auto: v.boolean(), none: v.boolean(), required: v.boolean(), function: v.boolean() }),
  /** Milliseconds until the answer (or the stream) began, percentiles over the health window. */
  latency_last_30m: percentileStats,
  /** Completion tokens per second, percentiles over the health window. */
  throughput_last_30m: percentileStats,
})

/** GET /models/{author}/{slug}/endpoints answer (OpenRouter's `listEndpoints`). */
export const modelEndpointsSchema = v.object({
  data: v.object({
    id: v.string(),
    name: v.string(),
    created: int(),
    description: v.string(),
    architecture: modelSchema.entries.architecture,
    endpoints: v.array(modelEndpointSchema),
  }),
})

/** One provider (docs/catalogue.md#what-providers-shows). */
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
