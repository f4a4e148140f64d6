import * as v from 'valibot'
import { int, safeInt } from './common'
import { providerPreferencesSchema } from './provider-preferences'
import { GATEWAY_PLUGINS, pluginNotRun } from './plugins'

/**
 * A prompt-cache breakpoint as OpenRouter takes it, on a content part, a message, a tool or the whole request: sent to
 * Anthropic (which caches up to it), left out for providers that cache on their own (docs/limits.md).
 */
export const cacheControlSchema = v.object({ type: v.literal('ephemeral'), ttl: v.optional(v.picklist(['5m', '1h'])) })
const cacheControl = v.optional(cacheControlSchema)

const text = v.object({ type: v.literal('text'), text: v.string(), cache_control: cacheControl })
const imageUrl = v.object({
  type: v.literal('image_url'),
  image_url: v.object({ url: v.string(), detail: v.optional(v.picklist(['auto', 'low', 'high'])) }),
  cache_control: cacheControl,
})
const inputAudio = v.object({ type: v.literal('input_audio'), input_audio: v.object({ data: v.string(), format: v.string() }), cache_control: cacheControl })
const file = v.object({
  type: v.literal('file'),
  file: v.looseObject({ file_data: v.optional(v.string()), file_id: v.optional(v.string()), filename: v.optional(v.string()) }),
  cache_control: cacheControl,
})
const refusal = v.object({ type: v.literal('refusal'), refusal: v.string() })

/** One content part of a message. */
export const contentPartSchema = v.variant('type', [text, imageUrl, inputAudio, file, refusal])
const content = v.union([v.string(), v.pipe(v.array(contentPartSchema), v.minLength(1))])

const toolCall = v.object({
  id: v.string(),
  type: v.literal('function'),
  function: v.object({ name: v.string(), arguments: v.string() }),
})

/** One chat message: every OpenAI role. */
export const messageSchema = v.variant('role', [
  v.looseObject({ role: v.literal('system'), content, name: v.optional(v.string()), cache_control: cacheControl }),
  v.looseObject({ role: v.literal('developer'), content, name: v.optional(v.string()), cache_control: cacheControl }),
  v.looseObject({ role: v.literal('user'), content, name: v.optional(v.string()), cache_control: cacheControl }),
  v.looseObject({
    role: v.literal('assistant'),
    content: v.optional(v.nullable(content)),
    name: v.optional(v.string()),
    tool_calls: v.optional(v.array(toolCall)),
    refusal: v.optional(v.nullable(v.string())),
    reasoning: v.optional(v.nullable(v.string())),
    cache_control: cacheControl,
  }),
  v.looseObject({ role: v.literal('tool'), content, tool_call_id: v.string(), cache_control: cacheControl }),
])

const tool = v.object({
  type: v.literal('function'),
  function: v.object({
    name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, _ or -')),
    description: v.optional(v.string()),
    parameters: v.optional(v.record(v.string(), v.unknown())),
    strict: v.optional(v.nullable(v.boolean())),
  }),
  cache_control: cacheControl,
})

const toolChoice = v.union([v.picklist(['none', 'auto', 'required']), v.object({ type: v.literal('function'), function: v.object({ name: v.string() }) })])

const responseFormat = v.variant('type', [
  v.object({ type: v.literal('text') }),
  v.object({ type: v.literal('json_object') }),
  v.object({
    type: v.literal('json_schema'),
    json_schema: v.object({
      name: v.string(),
      description: v.optional(v.string()),
      schema: v.optional(v.record(v.string(), v.unknown())),
      strict: v.optional(v.nullable(v.boolean())),
    }),
  }),
])

/** The reasoning efforts a request may ask for, least to most (OpenRouter's and OpenAI's values; docs/reasoning.md). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const

// An object without its null fields, typed as if they were never there.
const withoutNulls = <T extends Record<string, unknown>>(value: T) =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null)) as { [K in keyof T]?: Exclude<T[K], null> }

const unit = (min: number, max: number) => v.pipe(v.number(), v.minValue(min), v.maxValue(max))
const positiveInt = safeInt(1)

/** Size bounds of a chat request (docs/limits.md): far above any real use, well inside the body limit. */
export const CHAT_LIMITS = {
  /** Characters of a model id (`model`, each of `models`). */
  modelId: 256,
  /** Entries of `models`, the fallback list. */
  models: 32,
  /** Entries of `provider.order`, `provider.only`, `provider.ignore`; characters of each. */
  providers: 64,
  providerSlug: 128,
  /** Entries of `stop`; characters of each. */
  stops: 16,
  stopLength: 4096,
  /** Entries of `tools` (OpenAI's own limit). */
  tools: 128,
  /** Entries of `logit_bias`. */
  logitBias: 1024,
  /** Choices (`n`) of one request (OpenAI's own limit). */
  choices: 128,
  /** Entries of `plugins`. */
  plugins: 16,
  /** Characters of `session_id` (OpenRouter's own limit). */
  sessionId: 128,
  /** Entries of `metadata`; characters of each key and value (OpenAI's limits). */
  metadata: 16,
  metadataKey: 64,
  metadataValue: 512,
  /** Entries of `trace`; bytes of its JSON. */
  trace: 32,
  traceBytes: 16 * 1024,
  /** Entries of `image_config`; entries of `transforms`; characters of an id or name among them. */
  imageConfig: 16,
  transforms: 8,
  name: 64,
} as const

const modelId = v.pipe(v.string(), v.minLength(1), v.maxLength(CHAT_LIMITS.modelId))
const stopText = v.pipe(v.string(), v.maxLength(CHAT_LIMITS.stopLength))
const name = v.pipe(v.string(), v.minLength(1), v.maxLength(CHAT_LIMITS.name))

// OpenRouter's fields the gateway consumes (docs/limits.md#openrouters-fields-the-gateway-consumes): accepted here,
// never sent to a provider as they are (src/chat/request-fields.ts). A plugin the gateway does not run is refused
// there.
const openRouterFields = {
  plugins: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.looseObject({ id: name, enabled: v.optional(v.boolean()) }),
          v.check(
            (plugin) => plugin.enabled === false || GATEWAY_PLUGINS.includes(plugin.id),
            (issue) => pluginNotRun((issue.input as { id: string }).id),
          ),
        ),
      ),
      v.maxLength(CHAT_LIMITS.plugins),
    ),
  ),
  session_id: v.optional(v.pipe(v.string(), v.maxLength(CHAT_LIMITS.sessionId))),
  trace: v.optional(
    v.pipe(
      v.record(name, v.unknown()),
      v.maxEntries(CHAT_LIMITS.trace),
      v.check((trace) => Buffer.byteLength(JSON.stringify(trace)) <= CHAT_LIMITS.traceBytes, `must be at most ${CHAT_LIMITS.traceBytes} bytes of JSON`),
    ),
  ),
  metadata: v.optional(
    v.pipe(
      v.record(v.pipe(v.string(), v.maxLength(CHAT_LIMITS.metadataKey)), v.pipe(v.string(), v.maxLength(CHAT_LIMITS.metadataValue))),
      v.maxEntries(CHAT_LIMITS.metadata),
    ),
  ),
  debug: v.optional(v.object({ echo_upstream_body: v.optional(v.boolean()) })),
  top_a: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(1)))),
  image_config: v.optional(
    v.pipe(
      v.record(
        name,
        v.union([
          v.pipe(v.string(), v.maxLength(CHAT_LIMITS.name)),
          v.pipe(v.number(), v.finite()),
          v.pipe(v.array(v.unknown()), v.maxLength(CHAT_LIMITS.imageConfig)),
        ]),
      ),
      v.maxEntries(CHAT_LIMITS.imageConfig),
    ),
  ),
  usage: v.optional(v.nullable(v.object({ include: v.optional(v.nullable(v.boolean())) }))),
  transforms: v.optional(v.pipe(v.array(name), v.maxLength(CHAT_LIMITS.transforms))),
  route: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(CHAT_LIMITS.name)))),
}

export { providerPreferencesSchema } from './provider-preferences'

/** Body of POST /chat/completions: OpenAI's request plus OpenRouter's `models`, `provider` and the fields it consumes. */
export const chatRequestSchema = v.looseObject({
  model: v.optional(modelId),
  models: v.optional(v.pipe(v.array(modelId), v.minLength(1), v.maxLength(CHAT_LIMITS.models))),
  messages: v.pipe(v.array(messageSchema), v.minLength(1, 'must not be empty')),
  stream: v.optional(v.boolean()),
  stream_options: v.optional(v.nullable(v.object({ include_usage: v.optional(v.boolean()) }))),
  max_tokens: v.optional(v.nullable(positiveInt)),
  max_completion_tokens: v.optional(v.nullable(positiveInt)),
  temperature: v.optional(v.nullable(unit(0, 2))),
  top_p: v.optional(v.nullable(unit(0, 1))),
  top_k: v.optional(v.nullable(safeInt(0))),
  frequency_penalty: v.optional(v.nullable(unit(-2, 2))),
  presence_penalty: v.optional(v.nullable(unit(-2, 2))),
  repetition_penalty: v.optional(v.nullable(unit(0, 2))),
  min_p: v.optional(v.nullable(unit(0, 1))),
  seed: v.optional(v.nullable(safeInt())),
  stop: v.optional(v.nullable(v.union([stopText, v.pipe(v.array(stopText), v.maxLength(CHAT_LIMITS.stops))]))),
  // More than 1 only where a provider takes it (src/chat/choices.ts); 128 is OpenAI's own limit.
  n: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(CHAT_LIMITS.choices)))),
  logprobs: v.optional(v.nullable(v.boolean())),
  top_logprobs: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(20)))),
  logit_bias: v.optional(v.nullable(v.pipe(v.record(v.string(), unit(-100, 100)), v.maxEntries(CHAT_LIMITS.logitBias)))),
  tools: v.optional(v.pipe(v.array(tool), v.maxLength(CHAT_LIMITS.tools))),
  tool_choice: v.optional(toolChoice),
  parallel_tool_calls: v.optional(v.nullable(v.boolean())),
  response_format: v.optional(responseFormat),
  // OpenRouter's reasoning settings and OpenAI's reasoning_effort, mapped per provider (docs/reasoning.md). OpenRouter's
  // SDK sends null for what it leaves unset: null is read as absent.
  reasoning: v.optional(
    v.pipe(
      v.nullable(
        v.object({
          effort: v.optional(v.nullable(v.picklist(REASONING_EFFORTS))),
          max_tokens: v.optional(v.nullable(positiveInt)),
          exclude: v.optional(v.nullable(v.boolean())),
          enabled: v.optional(v.nullable(v.boolean())),
          summary: v.optional(v.nullable(v.picklist(['auto', 'concise', 'detailed']))),
        }),
      ),
      v.transform((reasoning) => (reasoning ? withoutNulls(reasoning) : undefined)),
    ),
  ),
  reasoning_effort: v.optional(
    v.pipe(
      v.nullable(v.picklist(REASONING_EFFORTS)),
      v.transform((effort) => effort ?? undefined),
    ),
  ),
  include_reasoning: v.optional(v.nullable(v.boolean())),
  user: v.optional(v.string()),
  // Fields that change the provider's price: allowed only where the catalogue prices them (src/chat/priced-fields.ts).
  service_tier: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(64)))),
  web_search_options: v.optional(v.nullable(v.looseObject({}))),
  // Anthropic's automatic prompt caching (OpenRouter's top-level cache_control).
  cache_control: cacheControl,
  provider: v.optional(providerPreferencesSchema),
  ...openRouterFields,
})

/** A validated chat request. */
export type ChatRequest = v.InferOutput<typeof chatRequestSchema>

const tokenEntry = v.object({
  token: v.string(),
  logprob: v.number(),
  bytes: v.nullable(v.array(int())),
  top_logprobs: v.array(v.object({ token: v.string(), logprob: v.number(), bytes: v.nullable(v.array(int())) })),
})

/** Usage of a completion, with its exact cost (docs/chat.md#usage-and-cost). */
export const usageSchema = v.looseObject({
  prompt_tokens: int(),
  completion_tokens: int(),
  total_tokens: int(),
  prompt_tokens_details: v.optional(
    v.looseObject({
      cached_tokens: v.optional(int()),
      audio_tokens: v.optional(int()),
      cache_write_tokens: v.optional(int()),
      video_tokens: v.optional(int()),
    }),
  ),
  completion_tokens_details: v.optional(
    v.looseObject({
      reasoning_tokens: v.optional(int()),
      audio_tokens: v.optional(int()),
      accepted_prediction_tokens: v.optional(int()),
      rejected_prediction_tokens: v.optional(int()),
      image_tokens: v.optional(int()),
    }),
  ),
  cost: v.optional(v.number()),
  cost_currency: v.optional(v.string()),
  cost_eur: v.optional(v.number()),
  is_byok: v.optional(v.boolean()),
  cost_details: v.optional(
    v.looseObject({
      upstream_inference_cost: v.optional(v.nullable(v.number())),
      upstream_inference_prompt_cost: v.optional(v.number()),
      upstream_inference_completions_cost: v.optional(v.number()),
    }),
  ),
})

/** A whole chat completion (docs/chat.md#the-answer). */
export const chatCompletionSchema = v.object({
  id: v.string(),
  provider: v.string(),
  object: v.literal('chat.completion'),
  created: int(),
  model: v.string(),
  service_tier: v.optional(v.nullable(v.string())),
  system_fingerprint: v.optional(v.nullable(v.string())),
  choices: v.array(
    v.object({
      index: int(),
      message: v.looseObject({
        role: v.literal('assistant'),
        content: v.nullable(v.string()),
        name: v.optional(v.string()),
        tool_calls: v.optional(
          v.array(
            v.object({
              id: v.string(),
              type: v.literal('function'),
              index: v.optional(int()),
              function: v.object({ name: v.string(), arguments: v.string() }),
            }),
          ),
        ),
        refusal: v.optional(v.nullable(v.string())),
        reasoning: v.optional(v.nullable(v.string())),
        annotations: v.optional(v.array(v.unknown())),
      }),
      finish_reason: v.nullable(v.picklist(['stop', 'length', 'tool_calls', 'content_filter', 'error'])),
      native_finish_reason: v.nullable(v.string()),
      logprobs: v.optional(v.nullable(v.object({ content: v.nullable(v.array(tokenEntry)), refusal: v.nullable(v.array(tokenEntry)) }))),
    }),
  ),
  usage: usageSchema,
})
