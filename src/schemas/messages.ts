import * as v from 'valibot'
import { CHAT_LIMITS, cacheControlSchema, providerPreferencesSchema } from './chat'
import { int, safeInt } from './common'

/*
 * Anthropic's Messages API (docs/messages.md): the body of POST /messages and /messages/count_tokens, and the message
 * answered. Blocks the gateway cannot translate (server tools' blocks) pass the schema and are refused by the
 * translation with a 400 naming their type (src/messages/request.ts).
 */

// Anthropic sends null for what a client leaves unset in a few places: null means absent.
const cacheControl = v.optional(v.nullable(cacheControlSchema))
const nonEmptyText = v.string()

const textBlock = v.looseObject({ type: v.literal('text'), text: nonEmptyText, cache_control: cacheControl, citations: v.optional(v.unknown()) })
const imageBlock = v.looseObject({
  type: v.literal('image'),
  source: v.variant('type', [
    v.object({ type: v.literal('base64'), media_type: v.picklist(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), data: v.string() }),
    v.object({ type: v.literal('url'), url: v.string() }),
    v.object({ type: v.literal('file'), file_id: v.string() }),
  ]),
  cache_control: cacheControl,
})
const documentBlock = v.looseObject({
  type: v.literal('document'),
  source: v.variant('type', [
    v.object({ type: v.literal('base64'), media_type: v.literal('application/pdf'), data: v.string() }),
    v.object({ type: v.literal('text'), media_type: v.literal('text/plain'), data: v.string() }),
    v.looseObject({ type: v.literal('url'), url: v.string() }),
    v.looseObject({ type: v.literal('file'), file_id: v.string() }),
    v.looseObject({ type: v.literal('content'), content: v.unknown() }),
  ]),
  title: v.optional(v.nullable(v.string())),
  context: v.optional(v.nullable(v.string())),
  cache_control: cacheControl,
})
const toolUseBlock = v.looseObject({
  type: v.literal('tool_use'),
  id: v.pipe(v.string(), v.minLength(1)),
  name: v.string(),
  input: v.record(v.string(), v.unknown()),
  cache_control: cacheControl,
})
const toolResultBlock = v.looseObject({
  type: v.literal('tool_result'),
  tool_use_id: v.pipe(v.string(), v.minLength(1)),
  content: v.optional(v.union([v.string(), v.array(v.variant('type', [textBlock, imageBlock, documentBlock]))])),
  is_error: v.optional(v.nullable(v.boolean())),
  cache_control: cacheControl,
})
const thinkingBlock = v.looseObject({ type: v.literal('thinking'), thinking: v.string(), signature: v.string() })
const redactedThinkingBlock = v.looseObject({ type: v.literal('redacted_thinking'), data: v.string() })

/** Blocks that only server tools produce (Anthropic runs them): accepted by the schema, refused by name in the translation. */
export const SERVER_BLOCK_TYPES = [
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'container_upload',
  'search_result',
  'mcp_tool_use',
  'mcp_tool_result',
] as const
const serverBlock = v.looseObject({ type: v.picklist(SERVER_BLOCK_TYPES) })

/** One content block of a message. */
export const messagesBlockSchema = v.variant('type', [
  textBlock,
  imageBlock,
  documentBlock,
  toolUseBlock,
  toolResultBlock,
  thinkingBlock,
  redactedThinkingBlock,
  serverBlock,
])
const content = v.union([v.string(), v.array(messagesBlockSchema)])
const systemText = v.union([v.string(), v.array(textBlock)])

const message = v.variant('role', [
  v.object({ role: v.literal('user'), content }),
  v.object({ role: v.literal('assistant'), content }),
  // Version 2026-10-21 takes system messages between the turns too.
  v.object({ role: v.literal('system'), content: systemText }),
])

// A tool: custom ({ name, input_schema }) or an Anthropic server tool ({ type: 'web_search_…', … }), refused by type.
const tool = v.looseObject({
  type: v.optional(v.nullable(v.string())),
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, _ or -')),
  description: v.optional(v.string()),
  input_schema: v.optional(v.looseObject({ type: v.literal('object') })),
  strict: v.optional(v.nullable(v.boolean())),
  cache_control: cacheControl,
})

const toolChoice = v.variant('type', [
  v.object({ type: v.literal('auto'), disable_parallel_tool_use: v.optional(v.boolean()) }),
  v.object({ type: v.literal('any'), disable_parallel_tool_use: v.optional(v.boolean()) }),
  v.object({ type: v.literal('tool'), name: v.string(), disable_parallel_tool_use: v.optional(v.boolean()) }),
  v.object({ type: v.literal('none') }),
])

const display = v.optional(v.nullable(v.picklist(['summarized', 'omitted'])))
const thinking = v.variant('type', [
  v.object({ type: v.literal('enabled'), budget_tokens: safeInt(1024), display }),
  v.object({ type: v.literal('adaptive'), display }),
  v.object({ type: v.literal('between_tools') }),
  v.object({ type: v.literal('disabled') }),
])

const outputConfig = v.looseObject({
  effort: v.optional(v.nullable(v.picklist(['low', 'medium', 'high', 'xhigh', 'max']))),
  format: v.optional(v.nullable(v.object({ type: v.literal('json_schema'), schema: v.record(v.string(), v.unknown()) }))),
})

const modelId = v.pipe(v.string(), v.minLength(1), v.maxLength(CHAT_LIMITS.modelId))
const unit = v.pipe(v.number(), v.minValue(0), v.maxValue(1))

// What a Messages request and a count_tokens request share: the prompt and the tools.
const prompt = {
  model: modelId,
  messages: v.pipe(v.array(message), v.minLength(1, 'must not be empty')),
  system: v.optional(systemText),
  tools: v.optional(v.pipe(v.array(tool), v.maxLength(CHAT_LIMITS.tools))),
  tool_choice: v.optional(toolChoice),
  thinking: v.optional(thinking),
  output_config: v.optional(outputConfig),
  cache_control: cacheControl,
  mcp_servers: v.optional(v.array(v.unknown())),
}

/**
 * Body of POST /messages: Anthropic's request (unknown fields are accepted and ignored, never passed on, as Claude Code
 * sends fields of newer versions: docs/native.md#messages) plus OpenRouter's `models` fallbacks and `provider` preferences.
 */
export const messagesRequestSchema = v.looseObject({
  ...prompt,
  max_tokens: safeInt(1),
  stop_sequences: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(CHAT_LIMITS.stopLength))), v.maxLength(CHAT_LIMITS.stops))),
  temperature: v.optional(v.nullable(unit)),
  top_p: v.optional(v.nullable(unit)),
  top_k: v.optional(v.nullable(safeInt(0))),
  metadata: v.optional(v.nullable(v.looseObject({ user_id: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(256)))) }))),
  stream: v.optional(v.boolean()),
  // Options that change Anthropic's price, passed on natively only where the catalogue prices them (docs/money.md#priced-options).
  speed: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(32)))),
  inference_geo: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(32)))),
  service_tier: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(32)))),
  // Anthropic's context management (its beta header); passed on natively as it is.
  context_management: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  models: v.optional(v.pipe(v.array(modelId), v.minLength(1), v.maxLength(CHAT_LIMITS.models))),
  provider: v.optional(providerPreferencesSchema),
})

/** A validated Messages request. */
export type MessagesRequest = v.InferOutput<typeof messagesRequestSchema>

/** Body of POST /messages/count_tokens: the prompt of a Messages request (`max_tokens` and sampling are not needed). */
export const countTokensRequestSchema = v.looseObject(prompt)

/** A validated count_tokens request. */
export type CountTokensRequest = v.InferOutput<typeof countTokensRequestSchema>

/** The answer of POST /messages/count_tokens. */
export const countTokensResponseSchema = v.object({ input_tokens: int() })

/** Usage of a message, with the gateway's cost beside Anthropic's counts (docs/messages.md#the-answer). */
export const messagesUsageSchema = v.looseObject({
  input_tokens: int(),
  output_tokens: int(),
  cache_creation_input_tokens: v.nullable(int()),
  cache_read_input_tokens: v.nullable(int()),
  output_tokens_details: v.optional(v.nullable(v.object({ thinking_tokens: int() }))),
  cost: v.optional(v.number()),
  cost_currency: v.optional(v.string()),
  cost_eur: v.optional(v.number()),
  is_byok: v.optional(v.boolean()),
})

/** A whole message answered by POST /messages (docs/messages.md#the-answer). */
export const messagesResponseSchema = v.object({
  id: v.string(),
  type: v.literal('message'),
  role: v.literal('assistant'),
  model: v.string(),
  provider: v.optional(v.string()),
  content: v.array(v.looseObject({ type: v.picklist(['text', 'thinking', 'redacted_thinking', 'tool_use']) })),
  stop_reason: v.nullable(v.picklist(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded'])),
  stop_sequence: v.nullable(v.string()),
  stop_details: v.nullable(v.looseObject({ type: v.literal('refusal') })),
  usage: messagesUsageSchema,
})
