import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { listenOnLoopback } from './listen'

/**
 * A fake Anthropic Messages API on 127.0.0.1, following the wire format of API version 2026-10-21 (the API reference
 * and the types of @anthropic-ai/sdk 1.x): POST /v1/messages whole and streamed, GET /v1/models, and Anthropic's
 * error bodies `{ type: 'error', error: { type, message }, request_id }`.
 *
 * It checks what the real API checks and answers 400 (invalid_request_error) as it would: the key (`x-api-key`, or
 * `Authorization: Bearer`; x-api-key wins when both are sent), `anthropic-version`, `content-type`; the body's fields
 * (unknown ones are "Extra inputs are not permitted", which covers `temperature`, `top_p` and `top_k` on 2026-10-21;
 * version 2023-06-01 still takes those three, and the `anthropic-beta` context-management-2025-06-27 `context_management`),
 * required `model`, `max_tokens`, `messages`; roles (consecutive same-role turns are combined, as the API does);
 * content block shapes and where each may appear; tool_use / tool_result pairing and order; tools defined whenever
 * tool blocks appear; prefill on models that reject it; thinking per model (adaptive vs. budget, budget ≥ 1024 and <
 * max_tokens, thinking blocks leading the last tool-use turn, signatures that match their text); forced tool use on
 * models that reject it; structured-output schemas with closed objects.
 *
 * Answers: thinking (when on) then a tool call per tool (one with disable_parallel_tool_use, the named one for
 * tool_choice tool; the one `promptTools` names for the prompt's text, or none), JSON for an output format, a reply to tool results, or `Hello from <model>: <last user text>`;
 * stop sequences and max_tokens are honoured. Streams send the real event sequence (message_start with usage, ping,
 * content_block_start / _delta (text_delta, thinking_delta, signature_delta, input_json_delta) / _stop, message_delta
 * with stop_reason and cumulative usage, message_stop). With top-level `cache_control`, a prompt is written to the
 * cache and a later request sharing its prefix reads it.
 *
 * Models by name: the current Claude ids, and these failing ones: `claude-rate-limited` (429 rate_limit_error,
 * retry-after 7), `claude-overloaded` (529 overloaded_error), `claude-invalid` (400), `claude-too-long` (400, prompt
 * too long), `claude-unauthorized` (401), `claude-forbidden` (403), `claude-api-error` (500), `claude-midstream-error`
 * (streams some text, then an `error` event), `claude-overloaded-early` (streams message_start, then an `error` event;
 * a whole request gets 529).
 */
export interface FakeAnthropic {
  /** API root, without /v1. */
  url: string
  /** Every request received, in order. */
  requests: { method: string; path: string; headers: IncomingMessage['headers']; body: any }[]
  /**
   * The tool call to answer when the last user turn's text contains the key (`promptTools['run echo'] = { name: 'Bash',
   * input: { command: 'echo hi' } }`), instead of one call per tool; null answers text. For an agent that offers
   * dozens of tools with every request.
   */
  promptTools: Record<string, { name: string; input: Record<string, unknown> } | null>
  close(): Promise<void>
}

interface Traits {
  thinking: 'adaptive' | 'budget'
  /** Thinking is on when the request says nothing. */
  defaultOn: boolean
  alwaysOn: boolean
  forcedTools: boolean
  prefill: boolean
  maxTokens: number
}

const ADAPTIVE: Traits = { thinking: 'adaptive', defaultOn: true, alwaysOn: false, forcedTools: true, prefill: false, maxTokens: 128_000 }
const MODELS: Record<string, Traits> = {
  'claude-fable-5-2': { ...ADAPTIVE, alwaysOn: true, forcedTools: false },
  'claude-fable-5-1': { ...ADAPTIVE, alwaysOn: true, forcedTools: false },
  'claude-opus-5-5': { ...ADAPTIVE, alwaysOn: true, forcedTools: false },
  'claude-opus-5': ADAPTIVE,
  'claude-sonnet-5-5': { ...ADAPTIVE, forcedTools: false },
  'claude-haiku-4-5': { thinking: 'budget', defaultOn: false, alwaysOn: false, forcedTools: true, prefill: true, maxTokens: 64_000 },
}
const FAILING = [
  'claude-rate-limited',
  'claude-overloaded',
  'claude-invalid',
  'claude-too-long',
  'claude-unauthorized',
  'claude-forbidden',
  'claude-api-error',
  'claude-midstream-error',
  'claude-overloaded-early',
]
for (const id of FAILING) MODELS[id] = { ...ADAPTIVE, defaultOn: false }

const ERRORS: Record<string, [number, string, string, Record<string, string>?]> = {
  'claude-rate-limited': [
    429,
    'rate_limit_error',
    'This request would exceed your organization’s rate limit of 50 requests per minute. Please retry after the time in the retry-after header.',
    { 'retry-after': '7' },
  ],
  'claude-overloaded': [529, 'overloaded_error', 'Overloaded'],
  'claude-overloaded-early': [529, 'overloaded_error', 'Overloaded'],
  'claude-invalid': [
    400,
    'invalid_request_error',
    'messages.0.content.0.image.source.base64.data: The image was specified using the image/png media type, but the image appears to be a image/jpeg image',
  ],
  'claude-too-long': [400, 'invalid_request_error', 'prompt is too long: 1048577 tokens > 1000000 maximum'],
  'claude-unauthorized': [401, 'authentication_error', 'invalid x-api-key'],
  'claude-forbidden': [403, 'permission_error', 'Your API key does not have permission to use the specified resource.'],
  'claude-api-error': [500, 'api_error', 'Internal server error'],
}

const BODY_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'thinking',
  'tool_choice',
  'tools',
  'output_config',
  'cache_control',
  'container',
  'diagnostics',
  'inference_geo',
  'service_tier',
  'speed',
])
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])
const EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max'])
const VERSIONS = new Set(['2023-06-01', '2026-10-21'])

class Invalid extends Error {}
const fail = (message: string): never => {
  throw new Invalid(message)
}
const isObject = (value: unknown): value is Record<string, any> => !!value && typeof value === 'object' && !Array.isArray(value)
const words = (text: string) => text.split(/\s+/).filter(Boolean)
const tokens = (value: unknown) => Math.ceil(JSON.stringify(value ?? '').length / 4)

/** The signature of a thinking block: bound to the model and the text, so a changed block is caught. */
const sign = (model: string, text: string) => `fakesig_${createHash('sha256').update(`${model}\u0000${text}`).digest('base64url')}`

function sample(schema: any, hint: string): unknown {
  if (!isObject(schema)) return hint
  if (schema.enum) return schema.enum[0]
  if (schema.type === 'object' || schema.properties) return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sample(v, hint)]))
  if (schema.type === 'array') return [sample(schema.items, hint)]
  if (schema.type === 'number' || schema.type === 'integer') return 42
  if (schema.type === 'boolean') return true
  return hint
}

function assertClosed(schema: unknown, path: string): void {
  if (Array.isArray(schema)) {
    for (const [i, s] of schema.entries()) assertClosed(s, `${path}.${i}`)
    return
  }
  if (!isObject(schema)) return
  if ((schema.type === 'object' || schema.properties) && schema.additionalProperties !== false)
    fail(`${path}: For 'object' type, 'additionalProperties' must be explicitly set to false`)
  for (const [key, value] of Object.entries(schema)) if (typeof value === 'object') assertClosed(value, `${path}.${key}`)
}

function validateBlock(block: any, role: string, path: string): void {
  if (!isObject(block)) fail(`${path}: Input should be a valid dictionary`)
  const assistantOnly = () => role !== 'assistant' && fail(`${path}: ${block.type} blocks may only appear in assistant messages`)
  const userOnly = () => role !== 'user' && fail(`${path}: ${block.type} blocks may only appear in user messages`)
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') fail(`${path}.text: Field required`)
      if (!block.text) fail(`${path}.text: text content blocks must be non-empty`)
      if (role === 'user' && Array.isArray(block.citations) && block.citations.length)
        fail(`${path}.citations: citations are not accepted on text blocks in user messages`)
      return
    case 'image': {
      const source = block.source
      userOnly()
      if (!isObject(source)) fail(`${path}.source: Field required`)
      if (source.type === 'base64') {
        if (!IMAGE_TYPES.has(source.media_type))
          fail(`${path}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`)
        if (typeof source.data !== 'string' || !source.data) fail(`${path}.source.base64.data: Field required`)
      } else if (source.type === 'url') {
        if (typeof source.url !== 'string' || !/^https?:\/\//.test(source.url)) fail(`${path}.source.url.url: Input should be a valid URL`)
      } else if (source.type !== 'file')
        fail(`${path}.source: Input tag '${source.type}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`)
      return
    }
    case 'document':
      if (role === 'assistant') fail(`${path}: document blocks are not accepted in assistant messages`)
      if (!isObject(block.source)) fail(`${path}.source: Field required`)
      return
    case 'tool_use':
      assistantOnly()
      if (typeof block.id !== 'string' || typeof block.name !== 'string') fail(`${path}: tool_use blocks need an id and a name`)
      if (!isObject(block.input)) fail(`${path}.input: Input should be a valid dictionary`)
      return
    case 'tool_result':
      userOnly()
      if (typeof block.tool_use_id !== 'string') fail(`${path}.tool_use_id: Field required`)
      if (block.content !== undefined && typeof block.content !== 'string') {
        if (!Array.isArray(block.content)) fail(`${path}.content: Input should be a valid string or list`)
        for (const [i, b] of (block.content as any[]).entries()) {
          if (b?.type === 'text' || b?.type === 'image') validateBlock(b, 'user', `${path}.content.${i}`)
          else fail(`${path}.content.${i}: unsupported block in tool_result`)
        }
      }
      return
    case 'thinking':
      assistantOnly()
      if (typeof block.thinking !== 'string') fail(`${path}.thinking: Field required`)
      if (typeof block.signature !== 'string' || !block.signature) fail(`${path}.signature: Field required`)
      return
    case 'redacted_thinking':
      assistantOnly()
      if (typeof block.data !== 'string') fail(`${path}.data: Field required`)
      return
    default:
      fail(`${path}: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags`)
  }
}

interface Turn {
  role: string
  content: any[]
}

// Fields an older version (2023-06-01) still takes, and those a beta adds (the `anthropic-beta` header's names).
const OLD_VERSION_FIELDS = new Set(['temperature', 'top_p', 'top_k'])
const BETA_FIELDS: Record<string, string> = { context_management: 'context-management-2025-06-27' }

/**
 * Validates a Messages request as API version 2026-10-21 does (2023-06-01 also takes temperature, top_p and top_k; the
 * context-management beta, `context_management`); returns the turns, same-role turns combined.
 */
function validate(body: any, version = '2026-10-21', betas: string[] = []): Turn[] {
  if (!isObject(body)) fail('Request body must be a JSON object')
  for (const key of Object.keys(body)) {
    if (BODY_FIELDS.has(key) || (version === '2023-06-01' && OLD_VERSION_FIELDS.has(key)) || (BETA_FIELDS[key] && betas.includes(BETA_FIELDS[key]))) continue
    fail(`${key}: Extra inputs are not permitted`)
  }
  if (typeof body.model !== 'string' || !body.model) fail('model: Field required')
  if (body.max_tokens === undefined) fail('max_tokens: Field required')
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 0) fail('max_tokens: Input should be a valid integer, greater than or equal to 0')
  if (!Array.isArray(body.messages)) fail('messages: Field required')
  if (!body.messages.length) fail('messages: at least one message is required')
  const traits = MODELS[body.model]
  if (traits && body.max_tokens > traits.maxTokens)
    fail(`max_tokens: ${body.max_tokens} > ${traits.maxTokens}, which is the maximum allowed number of output tokens for ${body.model}`)

  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      for (const [i, b] of (body.system as any[]).entries()) {
        if (b?.type === 'text') validateBlock(b, 'system', `system.${i}`)
        else fail(`system.${i}.type: Input should be 'text'`)
      }
    } else if (typeof body.system !== 'string') fail('system: Input should be a valid string or list')
  }

  const turns: Turn[] = []
  body.messages.forEach((message: any, i: number) => {
    if (!isObject(message)) fail(`messages.${i}: Input should be a valid dictionary`)
    for (const key of Object.keys(message)) if (key !== 'role' && key !== 'content') fail(`messages.${i}.${key}: Extra inputs are not permitted`)
    if (!['user', 'assistant', 'system'].includes(message.role)) fail(`messages.${i}.role: Input should be 'user', 'assistant' or 'system'`)
    if (message.role === 'system' && turns.at(-1)?.role !== 'user') fail(`messages.${i}: a system message must follow a user turn`)
    let content = message.content
    if (typeof content === 'string') {
      if (!content && !(message.role === 'assistant' && i === body.messages.length - 1)) fail(`messages.${i}.content: text content blocks must be non-empty`)
      content = content ? [{ type: 'text', text: content }] : []
    } else if (Array.isArray(content)) {
      for (const [j, block] of (content as any[]).entries()) validateBlock(block, message.role, `messages.${i}.content.${j}`)
    } else fail(`messages.${i}.content: Field required`)
    if (message.role === 'system') return
    const last = turns.at(-1)
    if (last && last.role === message.role) last.content.push(...content)
    else turns.push({ role: message.role, content: [...content] })
  })

  // tool_use ↔ tool_result
  const usesTools = turns.some((t) => t.content.some((b) => b.type === 'tool_use' || b.type === 'tool_result'))
  if (usesTools && !(Array.isArray(body.tools) && body.tools.length)) fail('Requests which include `tool_use` or `tool_result` blocks must define tools.')
  turns.forEach((turn, i) => {
    if (turn.role === 'assistant') {
      const ids = turn.content.filter((b) => b.type === 'tool_use').map((b) => b.id)
      const next = turns[i + 1]
      const answered = new Set((next?.content ?? []).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id))
      const missing = ids.filter((id) => !answered.has(id))
      if (ids.length && next && missing.length)
        fail(
          `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        )
    } else {
      const previous = turns[i - 1]
      const offered = new Set((previous?.role === 'assistant' ? previous.content : []).filter((b) => b.type === 'tool_use').map((b) => b.id))
      let seenOther = false
      for (const [j, block] of turn.content.entries()) {
        if (block.type !== 'tool_result') {
          seenOther = true
          continue
        }
        if (seenOther) fail(`messages.${i}.content.${j}: tool_result blocks must come before any other content in a user message`)
        if (!offered.has(block.tool_use_id))
          fail(
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          )
      }
    }
  })
  if (turns.at(-1)?.role === 'assistant' && traits && !traits.prefill)
    fail('This model does not support assistant message prefill. The conversation must end with a user message.')

  // Thinking blocks must be the model's own, unchanged.
  for (const [i, turn] of turns.entries()) {
    for (const [j, block] of turn.content.entries()) {
      if (block.type === 'thinking' && block.signature !== sign(body.model, block.thinking))
        fail(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`)
    }
  }

  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) fail('tools: Input should be a valid list')
    body.tools.forEach((tool: any, i: number) => {
      for (const key of Object.keys(tool ?? {}))
        if (!['name', 'description', 'input_schema', 'strict', 'type', 'cache_control'].includes(key)) fail(`tools.${i}.${key}: Extra inputs are not permitted`)
      if (typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name))
        fail(`tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`)
      if (!isObject(tool.input_schema) || tool.input_schema.type !== 'object') fail(`tools.${i}.input_schema.type: Input should be 'object'`)
    })
  }
  const choice = body.tool_choice
  if (choice !== undefined) {
    if (!body.tools?.length) fail('tool_choice may only be specified while providing tools.')
    if (!isObject(choice) || !['auto', 'any', 'tool', 'none'].includes(choice.type))
      fail("tool_choice: Input tag found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'")
    if (choice.type === 'tool' && !body.tools.some((t: any) => t.name === choice.name)) fail(`tool_choice.tool.name: no tool named ${String(choice.name)}`)
    if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean')
      fail('tool_choice.disable_parallel_tool_use: Input should be a valid boolean')
    if ((choice.type === 'any' || choice.type === 'tool') && traits && !traits.forcedTools)
      fail('Forced tool use (tool_choice type "any" or "tool") is not supported on this model. Use tool_choice type "auto".')
  }

  const thinking = body.thinking
  if (thinking !== undefined) {
    if (!isObject(thinking)) fail('thinking: Input should be a valid dictionary')
    if (thinking.display !== undefined && !['summarized', 'omitted'].includes(thinking.display))
      fail("thinking.display: Input should be 'summarized' or 'omitted'")
    if (thinking.type === 'enabled') {
      if (traits?.thinking === 'adaptive')
        fail('"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.')
      if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024)
        fail('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024')
      if (thinking.budget_tokens >= body.max_tokens) fail('`max_tokens` must be greater than `thinking.budget_tokens`.')
      if (choice?.type === 'any' || choice?.type === 'tool') fail('Thinking may not be enabled when tool_choice forces tool use.')
      const lastAssistant = turns.findLastIndex((t) => t.role === 'assistant')
      const lastTurn = turns[lastAssistant]
      if (lastTurn?.content.some((b) => b.type === 'tool_use') && !['thinking', 'redacted_thinking'].includes(lastTurn.content[0].type)) {
        fail(
          `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${lastTurn.content[0].type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`,
        )
      }
    } else if (thinking.type === 'adaptive') {
      if (traits?.thinking === 'budget') fail('"thinking.type.adaptive" is not supported for this model. Use "thinking.type.enabled" with "budget_tokens".')
    } else if (thinking.type === 'disabled') {
      if (traits?.alwaysOn) fail('"thinking.type.disabled" is not supported for this model: its thinking is always on.')
    } else fail("thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'between_tools', 'adaptive'")
  }

  const config = body.output_config
  if (config !== undefined) {
    if (!isObject(config)) fail('output_config: Input should be a valid dictionary')
    for (const key of Object.keys(config)) if (key !== 'effort' && key !== 'format') fail(`output_config.${key}: Extra inputs are not permitted`)
    if (config.effort !== undefined) {
      if (!EFFORTS.has(config.effort)) fail("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'")
      if (traits?.thinking === 'budget') fail('output_config.effort: effort is not supported on this model')
    }
    if (config.format !== undefined) {
      if (config.format?.type !== 'json_schema' || !isObject(config.format.schema))
        fail("output_config.format: Input should be { type: 'json_schema', schema }")
      assertClosed(config.format.schema, 'output_config.format.schema')
    }
  }
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) fail('metadata: Input should be a valid dictionary')
    for (const key of Object.keys(body.metadata)) if (key !== 'user_id') fail(`metadata.${key}: Extra inputs are not permitted`)
    if (body.metadata.user_id !== undefined && typeof body.metadata.user_id !== 'string') fail('metadata.user_id: Input should be a valid string')
  }
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.every((s: unknown) => typeof s === 'string')))
    fail('stop_sequences: Input should be a valid list of strings')
  if (
    body.cache_control !== undefined &&
    !(isObject(body.cache_control) && body.cache_control.type === 'ephemeral' && [undefined, '5m', '1h'].includes(body.cache_control.ttl))
  )
    fail("cache_control: Input should be { type: 'ephemeral', ttl?: '5m' | '1h' }")
  if (body.stream !== undefined && typeof body.stream !== 'boolean') fail('stream: Input should be a valid boolean')
  return turns
}

interface Answer {
  content: any[]
  stopReason: string
  stopSequence: string | null
  usage: Record<string, any>
}

/** Starts the fake on 127.0.0.1 (a free port). */
export async function startFakeAnthropic(options: { apiKey: string }): Promise<FakeAnthropic> {
  const fake: FakeAnthropic = { url: '', requests: [], promptTools: {}, close: async () => undefined }
  const cache = new Map<string, number>()
  let ids = 0

  function plan(body: any, turns: Turn[]): Answer {
    const model: string = body.model
    const traits = MODELS[model]
    const last = turns.at(-1)!
    const lastBlocks = last.role === 'user' ? last.content : []
    const userText = lastBlocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join(' ')
    const results = lastBlocks.filter((b) => b.type === 'tool_result')
    const content: any[] = []

    const thinkingType = body.thinking?.type ?? (traits.alwaysOn || traits.defaultOn ? (traits.thinking === 'adaptive' ? 'adaptive' : 'enabled') : 'disabled')
    let thinkingTokens = 0
    if (thinkingType === 'adaptive' || thinkingType === 'enabled') {
      const display = body.thinking?.display ?? (traits.thinking === 'adaptive' ? 'omitted' : 'summarized')
      const thought = `The user asked about ${userText || 'the tool results'}; I should answer plainly.`
      const text = display === 'omitted' ? '' : thought
      thinkingTokens = words(thought).length
      content.push({ type: 'thinking', thinking: text, signature: sign(model, text) })
    }

    let stopReason = 'end_turn'
    let stopSequence: string | null = null
    const tools: any[] = body.tools ?? []
    const choice = body.tool_choice ?? { type: 'auto' }
    const scripted = Object.entries(fake.promptTools).find(([text]) => userText.includes(text))
    if (scripted && !results.length && choice.type === 'auto' && scripted[1] && tools.some((t) => t.name === scripted[1]?.name)) {
      content.push({ type: 'tool_use', id: `toolu_fake${++ids}`, name: scripted[1].name, input: scripted[1].input, caller: { type: 'direct' } })
      stopReason = 'tool_use'
    } else if (tools.length && choice.type !== 'none' && !results.length && !scripted) {
      const chosen = choice.type === 'tool' ? tools.filter((t) => t.name === choice.name) : choice.disable_parallel_tool_use ? tools.slice(0, 1) : tools
      for (const tool of chosen)
        content.push({ type: 'tool_use', id: `toolu_fake${++ids}`, name: tool.name, input: sample(tool.input_schema, userText), caller: { type: 'direct' } })
      stopReason = 'tool_use'
    } else {
      let text: string
      if (body.output_config?.format) text = JSON.stringify(sample(body.output_config.format.schema, userText))
      else if (results.length)
        text = `The tools said: ${results.map((r) => (typeof r.content === 'string' ? r.content : (r.content ?? []).map((b: any) => b.text ?? '').join(' '))).join(' | ')}`
      else text = `Hello from ${model}: ${userText}`
      for (const stop of body.stop_sequences ?? []) {
        const at = text.indexOf(stop)
        if (at !== -1) {
          text = text.slice(0, at)
          stopReason = 'stop_sequence'
          stopSequence = stop
        }
      }
      const room = body.max_tokens - thinkingTokens
      if (words(text).length > room) {
        text = words(text).slice(0, Math.max(0, room)).join(' ')
        stopReason = 'max_tokens'
        stopSequence = null
      }
      if (text) content.push({ type: 'text', text })
    }

    const promptTokens = tokens({ system: body.system, tools: body.tools, messages: body.messages })
    let read = 0
    let written = 0
    let input = promptTokens
    if (body.cache_control) {
      // Automatic caching: everything up to the last block is cached; a request sharing a cached prefix reads it.
      const key = (n: number) => JSON.stringify({ model, system: body.system, tools: body.tools, messages: body.messages.slice(0, n) })
      for (let n = body.messages.length; n > 0 && !read; n--) read = cache.get(key(n)) ?? 0
      input = Math.min(3, promptTokens - read)
      written = promptTokens - read - input
      cache.set(key(body.messages.length), promptTokens - input)
    }
    const output = thinkingTokens + content.reduce((n, b) => n + (b.type === 'text' ? words(b.text).length : b.type === 'tool_use' ? tokens(b.input) : 0), 0)
    return {
      content,
      stopReason,
      stopSequence,
      usage: {
        input_tokens: input,
        cache_creation_input_tokens: written,
        cache_read_input_tokens: read,
        // A top-level cache_control with ttl "1h" writes for an hour.
        cache_creation:
          body.cache_control?.ttl === '1h'
            ? { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: written }
            : { ephemeral_5m_input_tokens: written, ephemeral_1h_input_tokens: 0 },
        output_tokens: output,
        output_tokens_details: { thinking_tokens: thinkingTokens },
        server_tool_use: null,
        service_tier: 'standard',
        inference_geo: body.inference_geo ?? 'global',
        speed: body.speed ?? 'standard',
      },
    }
  }

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    let body: any
    let parsed = true
    try {
      body = raw ? JSON.parse(raw) : undefined
    } catch {
      body = raw
      parsed = false
    }
    const path = (req.url ?? '').split('?')[0]
    fake.requests.push({ method: req.method ?? '', path, headers: req.headers, body })
    const requestId = `req_fake${fake.requests.length}`
    const error = (status: number, type: string, message: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers })
      res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }))
    }

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    const key = (req.headers['x-api-key'] as string | undefined) ?? bearer
    if (!key) return error(401, 'authentication_error', 'Authentication is required: send an x-api-key header or an Authorization: Bearer header')
    if (key !== options.apiKey) return error(401, 'authentication_error', 'invalid x-api-key')
    const version = req.headers['anthropic-version'] as string | undefined
    if (!version) return error(400, 'invalid_request_error', 'anthropic-version: header is required')
    if (!VERSIONS.has(version)) return error(400, 'invalid_request_error', `anthropic-version: "${version}" is not a valid version`)

    if (req.method === 'GET' && path === '/v1/models') {
      const data = Object.keys(MODELS)
        .filter((id) => !FAILING.includes(id))
        .map((id) => ({ type: 'model', id, display_name: id, created_at: '2026-01-01T00:00:00Z' }))
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId })
      return res.end(JSON.stringify({ data, has_more: false, first_id: data[0].id, last_id: data.at(-1)!.id }))
    }
    if (req.method !== 'POST' || path !== '/v1/messages') return error(404, 'not_found_error', 'Not found')
    if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
      return error(400, 'invalid_request_error', 'content-type: must be application/json')
    if (!parsed) return error(400, 'invalid_request_error', 'There was an issue with the format of your request: the body is not valid JSON')

    let turns: Turn[]
    try {
      const betas = String(req.headers['anthropic-beta'] ?? '')
        .split(',')
        .map((beta) => beta.trim())
        .filter(Boolean)
      turns = validate(body, version, betas)
    } catch (e) {
      if (e instanceof Invalid) return error(400, 'invalid_request_error', e.message)
      throw e
    }
    const model: string = body.model
    if (!MODELS[model]) return error(404, 'not_found_error', `model: ${model}`)
    if (ERRORS[model] && !(body.stream && model === 'claude-overloaded-early')) {
      const [status, type, message, headers] = ERRORS[model]
      return error(status, type, message, headers)
    }

    const answer = plan(body, turns)
    const message = {
      id: `msg_fake${fake.requests.length}`,
      type: 'message',
      role: 'assistant',
      model,
      content: answer.content,
      stop_reason: answer.stopReason,
      stop_sequence: answer.stopSequence,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: answer.usage,
    }
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId })
      return res.end(JSON.stringify(message))
    }

    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId })
    const send = (event: string, data: Record<string, unknown>) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`)
    const tick = () => new Promise((resolve) => setImmediate(resolve))
    const { output_tokens: _output, output_tokens_details: _details, ...inputUsage } = answer.usage
    send('message_start', {
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...inputUsage, output_tokens: 1, output_tokens_details: null } },
    })
    send('ping', {})
    if (model === 'claude-overloaded-early') {
      send('error', { error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: requestId })
      return res.end()
    }
    for (const [index, block] of answer.content.entries()) {
      await tick()
      if (block.type === 'thinking') {
        send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } })
        // Word by word with the whitespace before each word as it is (newlines included), so that the pieces joined
        // are the signed text exactly.
        for (const piece of block.thinking.match(/\s*\S+/g) ?? []) send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } })
        send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } })
      } else if (block.type === 'text') {
        send('content_block_start', { index, content_block: { type: 'text', text: '' } })
        for (const [i, word] of words(block.text).entries()) {
          if (model === 'claude-midstream-error' && i === 2) {
            await tick()
            send('error', { error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: requestId })
            return res.end()
          }
          send('content_block_delta', { index, delta: { type: 'text_delta', text: i ? ` ${word}` : word } })
          await tick()
        }
      } else if (block.type === 'tool_use') {
        send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {}, caller: block.caller } })
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } })
        for (const piece of JSON.stringify(block.input).match(/.{1,6}/gs) ?? [])
          send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } })
      }
      send('content_block_stop', { index })
      send('ping', {})
    }
    send('message_delta', {
      delta: { stop_reason: answer.stopReason, stop_sequence: answer.stopSequence, stop_details: null, container: null },
      usage: {
        input_tokens: answer.usage.input_tokens,
        cache_creation_input_tokens: answer.usage.cache_creation_input_tokens,
        cache_read_input_tokens: answer.usage.cache_read_input_tokens,
        output_tokens: answer.usage.output_tokens,
        output_tokens_details: answer.usage.output_tokens_details,
        server_tool_use: null,
      },
    })
    send('message_stop', {})
    res.end()
  })
  const listening = await listenOnLoopback(server)
  fake.url = `${listening.origin}`
  fake.close = listening.close
  return fake
}
