import * as v from 'valibot'
import { CHAT_LIMITS, REASONING_EFFORTS, providerPreferencesSchema } from './chat'
import { int, queryInteger, safeInt } from './common'

/** Size bounds of a Responses request beyond chat's (docs/responses.md). */
export const RESPONSES_LIMITS = {
  /** Items of `input`. */
  inputItems: 10_000,
  /** Characters of a response id (`previous_response_id`, the path of GET /responses/{id}). */
  responseId: 64,
  /** Characters of an item id (`item_reference`, the cursors of GET /responses/{id}/input_items). */
  itemId: 128,
  /** Items of one page of GET /responses/{id}/input_items (docs/responses.md#input-items-of-a-stored-response). */
  pageItems: 100,
} as const

/** A response id as the gateway makes them: `resp_` and hex digits (docs/responses.md#stored-responses). */
export const responseIdSchema = v.pipe(
  v.string(),
  v.maxLength(RESPONSES_LIMITS.responseId),
  v.regex(/^resp_[0-9a-f]{12,59}$/, 'must be a response id (resp_…)'),
)

const modelId = v.pipe(v.string(), v.minLength(1), v.maxLength(CHAT_LIMITS.modelId))
const unit = (min: number, max: number) => v.pipe(v.number(), v.minValue(min), v.maxValue(max))

const inputText = v.object({ type: v.literal('input_text'), text: v.string() })
const inputImage = v.object({
  type: v.literal('input_image'),
  image_url: v.optional(v.nullable(v.string())),
  file_id: v.optional(v.nullable(v.string())),
  detail: v.optional(v.picklist(['auto', 'low', 'high', 'original'])),
})
const inputFile = v.object({
  type: v.literal('input_file'),
  file_data: v.optional(v.string()),
  file_id: v.optional(v.nullable(v.string())),
  file_url: v.optional(v.string()),
  filename: v.optional(v.string()),
})
const outputText = v.looseObject({ type: v.literal('output_text'), text: v.string() })
const refusal = v.object({ type: v.literal('refusal'), refusal: v.string() })

/** One content part of an input message. */
export const inputPartSchema = v.variant('type', [inputText, inputImage, inputFile, outputText, refusal])

const messageItem = v.looseObject({
  type: v.optional(v.literal('message')),
  id: v.optional(v.string()),
  role: v.picklist(['user', 'assistant', 'system', 'developer']),
  content: v.union([v.string(), v.array(inputPartSchema)]),
  status: v.optional(v.string()),
})
const functionCallItem = v.looseObject({
  type: v.literal('function_call'),
  id: v.optional(v.string()),
  call_id: v.pipe(v.string(), v.minLength(1)),
  name: v.string(),
  arguments: v.string(),
  status: v.optional(v.string()),
})
// The output of a call (`call_id`), or, without one, a named output the client adds on its own (`name`, with its
// `namespace`: Codex's goal objective), served as a user message (docs/responses.md#input-items).
const functionCallOutputItem = v.pipe(
  v.looseObject({
    type: v.literal('function_call_output'),
    id: v.optional(v.nullable(v.string())),
    call_id: v.optional(v.pipe(v.string(), v.minLength(1))),
    name: v.optional(v.pipe(v.string(), v.minLength(1))),
    namespace: v.optional(v.nullable(v.string())),
    output: v.union([v.string(), v.array(v.variant('type', [inputText, inputImage, inputFile]))]),
    status: v.optional(v.nullable(v.string())),
  }),
  v.forward(
    v.check((item) => item.call_id !== undefined || item.name !== undefined, 'is required'),
    ['call_id'],
  ),
)
const reasoningItem = v.looseObject({
  type: v.literal('reasoning'),
  id: v.optional(v.string()),
  summary: v.array(v.object({ type: v.literal('summary_text'), text: v.string() })),
  content: v.optional(v.nullable(v.array(v.object({ type: v.literal('reasoning_text'), text: v.string() })))),
  encrypted_content: v.optional(v.nullable(v.string())),
  status: v.optional(v.string()),
})

const itemReference = v.object({
  type: v.literal('item_reference'),
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(RESPONSES_LIMITS.itemId)),
})

/**
 * One item of `input`: a message (its `type` may be left out), a function call, its output, a reasoning item, or an
 * `item_reference` to an item of a stored response (docs/responses.md#item-references).
 */
export const inputItemSchema = v.variant('type', [messageItem, functionCallItem, functionCallOutputItem, reasoningItem, itemReference])

const functionTool = v.looseObject({
  type: v.literal('function'),
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, _ or -')),
  description: v.optional(v.nullable(v.string())),
  parameters: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  strict: v.optional(v.nullable(v.boolean())),
})
// Any other tool type is a built-in tool OpenAI runs itself: refused with a 400 naming it (src/responses/request.ts).
const otherTool = v.looseObject({
  type: v.pipe(
    v.string(),
    v.check((type) => type !== 'function', 'a function tool needs a valid name'),
  ),
})

const toolChoice = v.union([
  v.picklist(['none', 'auto', 'required']),
  v.object({ type: v.literal('function'), name: v.string(), namespace: v.optional(v.string()) }),
  v.looseObject({ type: v.string() }),
])

const textFormat = v.variant('type', [
  v.object({ type: v.literal('text') }),
  v.object({ type: v.literal('json_object') }),
  v.object({
    type: v.literal('json_schema'),
    name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, _ or -')),
    description: v.optional(v.string()),
    schema: v.record(v.string(), v.unknown()),
    strict: v.optional(v.nullable(v.boolean())),
  }),
])

/** Body of POST /responses: OpenAI's Responses request plus OpenRouter's `models` and `provider` (docs/responses.md). */
export const responsesRequestSchema = v.looseObject({
  model: v.optional(modelId),
  models: v.optional(v.pipe(v.array(modelId), v.minLength(1), v.maxLength(CHAT_LIMITS.models))),
  input: v.union([v.string(), v.pipe(v.array(inputItemSchema), v.minLength(1, 'must not be empty'), v.maxLength(RESPONSES_LIMITS.inputItems))]),
  instructions: v.optional(v.nullable(v.string())),
  tools: v.optional(v.pipe(v.array(v.union([functionTool, otherTool])), v.maxLength(CHAT_LIMITS.tools))),
  tool_choice: v.optional(toolChoice),
  parallel_tool_calls: v.optional(v.nullable(v.boolean())),
  text: v.optional(v.nullable(v.looseObject({ format: v.optional(textFormat), verbosity: v.optional(v.nullable(v.string())) }))),
  reasoning: v.optional(
    v.nullable(
      v.looseObject({
        effort: v.optional(v.nullable(v.picklist(REASONING_EFFORTS))),
        summary: v.optional(v.nullable(v.picklist(['auto', 'concise', 'detailed']))),
      }),
    ),
  ),
  max_output_tokens: v.optional(v.nullable(safeInt(1))),
  temperature: v.optional(v.nullable(unit(0, 2))),
  top_p: v.optional(v.nullable(unit(0, 1))),
  // The most likely tokens per position with `include: ["message.output_text.logprobs"]` (docs/responses.md#refusals-and-logprobs).
  top_logprobs: v.optional(
    v.nullable(
      v.pipe(
        v.number(),
        v.integer('must be an integer from 0 to 20'),
        v.minValue(0, 'must be an integer from 0 to 20'),
        v.maxValue(20, 'must be an integer from 0 to 20'),
      ),
    ),
  ),
  metadata: v.optional(
    v.nullable(
      v.pipe(
        v.record(v.pipe(v.string(), v.maxLength(CHAT_LIMITS.metadataKey)), v.pipe(v.string(), v.maxLength(CHAT_LIMITS.metadataValue))),
        v.maxEntries(CHAT_LIMITS.metadata),
      ),
    ),
  ),
  user: v.optional(v.string()),
  store: v.optional(v.nullable(v.boolean())),
  previous_response_id: v.optional(v.nullable(responseIdSchema)),
  include: v.optional(v.nullable(v.array(v.string()))),
  stream: v.optional(v.nullable(v.boolean())),
  background: v.optional(v.nullable(v.boolean())),
  // OpenAI's service tier: priced as chat's `service_tier` is (docs/money.md#priced-options).
  service_tier: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(64)))),
  truncation: v.optional(v.nullable(v.picklist(['auto', 'disabled']))),
  safety_identifier: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(256)))),
  prompt_cache_key: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(256)))),
  prompt_cache_retention: v.optional(v.nullable(v.picklist(['in_memory', '24h']))),
  provider: v.optional(providerPreferencesSchema),
})

/** A validated Responses request. */
export type ResponsesRequest = v.InferOutput<typeof responsesRequestSchema>
/** One validated input item. */
export type InputItem = v.InferOutput<typeof inputItemSchema>
/** An input item once item references are resolved: what is stored and turned into chat messages. */
export type ResolvedItem = Exclude<InputItem, { type: 'item_reference' }>

/** The path of GET and DELETE /responses/{id}. */
export const responseIdParamsSchema = v.object({ id: responseIdSchema })

const itemCursor = v.pipe(v.string(), v.minLength(1), v.maxLength(RESPONSES_LIMITS.itemId))
const includes = v.union([v.string(), v.array(v.string())])

/**
 * The query of GET /responses/{id}/input_items (docs/responses.md#input-items-of-a-stored-response): `order` (default
 * desc, as OpenAI), `limit` 1–100 (default 20), the cursors `after` and `before` (item ids), and `include` (the
 * openai SDK sends it as `include[]`).
 */
export const inputItemsQuerySchema = v.looseObject({
  order: v.optional(v.picklist(['asc', 'desc'], 'must be asc or desc'), 'desc'),
  limit: v.optional(queryInteger(1, RESPONSES_LIMITS.pageItems), '20'),
  after: v.optional(itemCursor),
  before: v.optional(itemCursor),
  include: v.optional(includes),
  'include[]': v.optional(includes),
})

/** A page of a stored response's input items, in OpenAI's list shape. */
export const inputItemListSchema = v.object({
  object: v.literal('list'),
  data: v.array(v.looseObject({ id: v.string(), type: v.string() })),
  first_id: v.nullable(v.string()),
  last_id: v.nullable(v.string()),
  has_more: v.boolean(),
})

const topLogprob = v.object({ token: v.string(), logprob: v.number(), bytes: v.array(v.number()) })
const outputTextPart = v.object({
  type: v.literal('output_text'),
  text: v.string(),
  annotations: v.array(v.unknown()),
  // With `include: ["message.output_text.logprobs"]` (docs/responses.md#refusals-and-logprobs).
  logprobs: v.optional(v.array(v.object({ ...topLogprob.entries, top_logprobs: v.array(topLogprob) }))),
})

/** One item of a response's `output` (docs/responses.md#the-response). */
export const outputItemSchema = v.variant('type', [
  v.object({
    type: v.literal('message'),
    id: v.string(),
    role: v.literal('assistant'),
    status: v.picklist(['completed', 'incomplete']),
    content: v.array(v.union([outputTextPart, refusal])),
  }),
  v.object({
    type: v.literal('function_call'),
    id: v.string(),
    call_id: v.string(),
    name: v.string(),
    arguments: v.string(),
    status: v.picklist(['completed', 'incomplete']),
  }),
  v.object({
    type: v.literal('reasoning'),
    id: v.string(),
    summary: v.array(v.object({ type: v.literal('summary_text'), text: v.string() })),
    encrypted_content: v.optional(v.string()),
  }),
])

/** A Response object: what POST /responses answers whole, and GET /responses/{id} (docs/responses.md#the-response). */
export const responseObjectSchema = v.looseObject({
  id: v.string(),
  object: v.literal('response'),
  created_at: int(),
  status: v.picklist(['completed', 'incomplete', 'failed', 'in_progress']),
  /** Unix seconds; null until the response is completed. */
  completed_at: v.nullable(int()),
  model: v.string(),
  output: v.array(outputItemSchema),
  error: v.nullable(v.looseObject({ code: v.string(), message: v.string() })),
  incomplete_details: v.nullable(v.object({ reason: v.string() })),
  usage: v.nullable(
    v.looseObject({
      input_tokens: int(),
      input_tokens_details: v.looseObject({ cached_tokens: int() }),
      output_tokens: int(),
      output_tokens_details: v.looseObject({ reasoning_tokens: int() }),
      total_tokens: int(),
      cost: v.optional(v.number()),
      cost_eur: v.optional(v.number()),
      cost_details: v.optional(
        v.looseObject({
          upstream_inference_cost: v.nullable(v.number()),
          upstream_inference_input_cost: v.number(),
          upstream_inference_output_cost: v.number(),
        }),
      ),
    }),
  ),
  frequency_penalty: v.nullable(v.number()),
  presence_penalty: v.nullable(v.number()),
  previous_response_id: v.nullable(v.string()),
  store: v.boolean(),
})

/** What DELETE /responses/{id} answers. */
export const deletedResponseSchema = v.object({ id: v.string(), object: v.literal('response.deleted'), deleted: v.literal(true) })
