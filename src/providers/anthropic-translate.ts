import { GatewayError } from '../errors'
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../http/json-depth'
import type { ProviderModel, UpstreamChatRequest, UpstreamCompletion, UpstreamUsage, UpstreamSource } from '../contracts'
import { fromHttpStatus, retryHeaders, upstreamError, type UpstreamError } from './upstream-error'
import { effortForBudget, nearestEffort, reasoningOf, requestedEffort } from './reasoning'

/*
 * OpenAI chat format ⇄ Anthropic Messages API, version 2026-10-21: the request body the provider sends, the whole
 * answer it gets back, usage, and Anthropic's errors. The streamed answer is translated in anthropic-stream.ts.
 *
 * Facts of version 2026-10-21 this follows (API reference, migration guide, @anthropic-ai/sdk 1.x types):
 * - `temperature`, `top_p` and `top_k` are removed: a request with any of them is a 400, even at default values.
 *   They are dropped here, like the other OpenAI sampling fields Anthropic never had (penalties, seed, logit_bias).
 * - Structured output is native: `output_config.format: { type: 'json_schema', schema }`, every object closed with
 *   `additionalProperties: false`. Claude 4.6 and later reject a prefilled assistant turn, so `json_object` is asked
 *   for in the system prompt, without a prefill.
 * - Thinking: `{ type: 'adaptive' }` with `output_config.effort` on Claude 4.6 and later (4.7 and later reject
 *   `type: 'enabled'`), `{ type: 'enabled', budget_tokens ≥ 1024, < max_tokens }` on Claude 4.5 and earlier.
 */

/** How a Claude model takes thinking. */
export interface ClaudeTraits {
  /** `adaptive` (+ `output_config.effort`): Claude 4.6 and later. `budget` (`type: 'enabled'`): Claude 4.5 and earlier. */
  thinking: 'adaptive' | 'budget'
  /** Thinking cannot be turned off (`type: 'disabled'` is a 400). */
  thinkingAlwaysOn: boolean
  /** The largest `max_tokens` the model takes, when known. */
  maxOutputTokens?: number
  /** The `output_config.effort` values the model takes (its catalogue `reasoning.efforts`), when known. */
  efforts?: string[]
}

/** The format tag of the `reasoning_details` this provider writes (OpenRouter's name for Claude's thinking blocks). */
export const REASONING_FORMAT = 'anthropic-claude-v1'

/** Default `max_tokens` when neither the request nor the catalogue gives one. */
export const FALLBACK_MAX_TOKENS = 4096
/**
 * The official SDK refuses a non-streamed request whose `max_tokens` could run past 10 minutes (above 128,000 × 10/60
 * = 21,333 tokens): a whole answer's default `max_tokens` is capped there; a streamed one gets the model's maximum.
 */
export const WHOLE_ANSWER_MAX_TOKENS = 21_333
/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024

/** Anthropic's largest thinking budget as OpenRouter computes it (its budget formula caps there). */
export const MAX_THINKING_BUDGET = 128_000
/**
 * Share of max_tokens given to thinking per effort, on models with a token budget: OpenRouter's documented shares
 * (minimal ≈ 10 %, low ≈ 20 %, medium ≈ 50 %, high ≈ 80 %, xhigh ≈ 95 %); `max` as xhigh. docs/reasoning.md.
 */
export const BUDGET_SHARE: Record<string, number> = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8, xhigh: 0.95, max: 0.95 }
// OpenAI / OpenRouter effort → Anthropic `output_config.effort` (low, medium, high, xhigh, max).
const ADAPTIVE_EFFORT: Record<string, string> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max' }
const ADAPTIVE_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max']
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])
const JSON_INSTRUCTION = 'Answer with a single valid JSON object and nothing else: no prose before or after it, no code fences.'

type Json = Record<string, unknown>
/** One Anthropic content block. */
export type Block = Json & { type: string }
interface Turn {
  role: 'user' | 'assistant'
  content: Block[]
}

const version = (id: string): [number, number] | undefined => {
  const match = /^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$/.exec(id) ?? /^claude-(\d+)(?:-(\d{1,2}))?-[a-z]+/.exec(id)
  return match ? [Number(match[1]), Number(match[2] ?? 0)] : undefined
}

/** The thinking traits of a model: from its catalogue entry (`reasoning.efforts` → adaptive, `supportsMaxTokens` → budget), else from the version in its id. */
export function traitsOf(model: ProviderModel | undefined, upstreamId: string): ClaudeTraits {
  const reasoning = model?.reasoning
  const maxOutputTokens = model?.maxCompletionTokens
  if (reasoning?.efforts?.length) return { thinking: 'adaptive', thinkingAlwaysOn: !!reasoning.mandatory, maxOutputTokens, efforts: reasoning.efforts }
  if (reasoning?.supportsMaxTokens) return { thinking: 'budget', thinkingAlwaysOn: !!reasoning.mandatory, maxOutputTokens }
  const v = version(upstreamId)
  const adaptive = !!v && (v[0] > 4 || (v[0] === 4 && v[1] >= 6))
  return { thinking: adaptive ? 'adaptive' : 'budget', thinkingAlwaysOn: false, maxOutputTokens }
}

/** A 400 for a request this provider cannot translate (not retried on another provider: the request is at fault). */
function untranslatable(provider: string, why: string, param?: string): GatewayError {
  return new GatewayError(400, `${provider} cannot take this request: ${why}`, {
    param,
    metadata: { provider_name: provider, error_type: 'invalid_request', raw: why },
  })
}

const textOf = (parts: unknown): string =>
  typeof parts === 'string'
    ? parts
    : Array.isArray(parts)
      ? parts.map((p) => (p as { text?: string; refusal?: string }).text ?? (p as { refusal?: string }).refusal ?? '').join('')
      : ''

// ---------------------------------------------------------------------------------------------------------------
// Request: OpenAI → Anthropic

/** A data URL's media type and base64 payload. */
function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url)
  return match ? { mediaType: match[1].toLowerCase(), data: match[2] } : undefined
}

function imageBlock(url: string, provider: string, param: string): Block {
  if (url.startsWith('data:')) {
    const parsed = parseDataUrl(url)
    if (!parsed) throw untranslatable(provider, 'an image data URL must be base64 (data:<type>;base64,<data>)', param)
    if (!IMAGE_TYPES.has(parsed.mediaType)) throw untranslatable(provider, `image type ${parsed.mediaType} is not supported (jpeg, png, gif, webp are)`, param)
    return { type: 'image', source: { type: 'base64', media_type: parsed.mediaType, data: parsed.data } }
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } }
  throw untranslatable(provider, 'an image must be an http(s) URL or a base64 data URL', param)
}

function fileBlock(file: { file_data?: string; file_id?: string; filename?: string }, provider: string, param: string): Block {
  if (!file.file_data) throw untranslatable(provider, 'files must be sent inline as file_data (an OpenAI file_id means nothing to Anthropic)', param)
  const parsed = parseDataUrl(file.file_data)
  if (!parsed) throw untranslatable(provider, 'file_data must be a base64 data URL', param)
  const title = file.filename ? { title: file.filename } : {}
  if (parsed.mediaType === 'application/pdf')
    return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: parsed.data }, ...title }
  if (parsed.mediaType === 'text/plain')
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(parsed.data, 'base64').toString('utf8') }, ...title }
  if (IMAGE_TYPES.has(parsed.mediaType)) return { type: 'image', source: { type: 'base64', media_type: parsed.mediaType, data: parsed.data } }
  throw untranslatable(provider, `file type ${parsed.mediaType} is not supported (PDF, plain text and images are)`, param)
}

/**
 * A prompt-cache breakpoint (`cache_control` on a content part, a message or a tool, as OpenRouter takes them) as
 * Anthropic's: `{ type: 'ephemeral' }`. A `ttl` is not sent: the catalogue prices cache writes at the 5-minute rate,
 * and a 1-hour write costs more (as for the top-level cache_control).
 */
function cacheOf(source: Json | undefined): Json {
  const cache = source?.cache_control as { type?: string } | undefined
  return cache?.type === 'ephemeral' ? { cache_control: { type: 'ephemeral' } } : {}
}

/** Sets a message-level `cache_control` on the last block the message gave (a breakpoint caches up to its block). */
function cacheLast(blocks: Block[], message: Json): Block[] {
  const cache = cacheOf(message)
  const last = blocks.at(-1)
  if (last && cache.cache_control) Object.assign(last, cache)
  return blocks
}

/** User content (string or parts) → text, image and document blocks, with their cache_control; empty text is dropped (Anthropic rejects it). */
function userBlocks(content: unknown, provider: string, param: string): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : []
  const blocks: Block[] = []
  for (const [j, part] of ((content as Json[] | undefined) ?? []).entries()) {
    const where = `${param}.content[${j}]`
    if (part.type === 'text' || part.type === 'refusal') {
      const text = (part.text ?? part.refusal) as string
      if (text) blocks.push({ type: 'text', text, ...cacheOf(part) })
    } else if (part.type === 'image_url') blocks.push({ ...imageBlock((part.image_url as { url: string }).url, provider, where), ...cacheOf(part) })
    else if (part.type === 'file') blocks.push({ ...fileBlock(part.file as { file_data?: string }, provider, where), ...cacheOf(part) })
    else if (part.type === 'input_audio') throw untranslatable(provider, 'audio input is not supported by Claude', where)
    else throw untranslatable(provider, `content part type ${String(part.type)} is not supported`, where)
  }
  return blocks
}

/** System and developer content → text blocks, with their cache_control (Anthropic's system prompt is text only). */
function systemBlocks(content: unknown, provider: string, param: string): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : []
  if ((content as Json[]).some((p) => p.type !== 'text')) throw untranslatable(provider, 'system and developer messages may hold text only', param)
  return (content as Json[]).filter((p) => p.text).map((p) => ({ type: 'text', text: p.text as string, ...cacheOf(p) }))
}

export interface ReasoningDetail {
  type?: string
  text?: string
  signature?: string
  data?: string
  format?: string
  index?: number
}

/**
 * `reasoning_details` as a client may send them back: a streamed thinking block arrives in pieces (its text, then its
 * signature) that share the block's `index` (anthropic-stream.ts). Consecutive `reasoning.text` entries with the same
 * index are joined into one block (text appended, the signature kept); anything else stays as it is.
 */
export function mergeReasoningDetails(details: ReasoningDetail[]): ReasoningDetail[] {
  const merged: ReasoningDetail[] = []
  for (const detail of details) {
    if (!detail || typeof detail !== 'object') continue
    const last = merged.at(-1)
    if (
      detail.type === 'reasoning.text' &&
      last?.type === 'reasoning.text' &&
      detail.index !== undefined &&
      detail.index === last.index &&
      detail.format === last.format
    ) {
      merged[merged.length - 1] = { ...last, text: (last.text ?? '') + (detail.text ?? ''), signature: detail.signature || last.signature }
    } else merged.push(detail)
  }
  return merged
}

/** An assistant message → thinking blocks (from `reasoning_details`), text, then tool_use blocks. */
function assistantBlocks(message: Json, provider: string, param: string): Block[] {
  const blocks: Block[] = []
  const details = Array.isArray(message.reasoning_details) ? mergeReasoningDetails(message.reasoning_details as ReasoningDetail[]) : []
  for (const detail of details) {
    if (detail.format !== undefined && detail.format !== REASONING_FORMAT) continue // another provider's reasoning
    if (detail.type === 'reasoning.text' && typeof detail.signature === 'string' && detail.signature)
      blocks.push({ type: 'thinking', thinking: detail.text ?? '', signature: detail.signature })
    else if (detail.type === 'reasoning.encrypted' && typeof detail.data === 'string') blocks.push({ type: 'redacted_thinking', data: detail.data })
  }
  const text = textOf(message.content)
  if (text) blocks.push({ type: 'text', text })
  for (const [j, call] of ((message.tool_calls as { id: string; function: { name: string; arguments: string } }[] | undefined) ?? []).entries()) {
    let input: unknown = {}
    if (call.function.arguments.trim()) {
      if (exceedsJsonDepth(call.function.arguments)) {
        throw untranslatable(provider, `tool call arguments must not nest deeper than ${MAX_JSON_DEPTH} levels`, `${param}.tool_calls[${j}].function.arguments`)
      }
      try {
        input = JSON.parse(call.function.arguments)
      } catch {
        throw untranslatable(provider, 'tool call arguments must be JSON', `${param}.tool_calls[${j}].function.arguments`)
      }
    }
    if (!input || typeof input !== 'object' || Array.isArray(input))
      throw untranslatable(provider, 'tool call arguments must be a JSON object', `${param}.tool_calls[${j}].function.arguments`)
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input })
  }
  return blocks
}

/** A `tool` message → a tool_result block (text and images; a string stays a string). */
function toolResultBlock(message: Json, provider: string, param: string): Block {
  const content = message.content
  const block: Block = { type: 'tool_result', tool_use_id: message.tool_call_id as string }
  if (typeof content === 'string') {
    if (content) block.content = content
  } else {
    const parts = userBlocks(content, provider, param).filter((b) => b.type === 'text' || b.type === 'image')
    if (parts.length) block.content = parts
  }
  return block
}

/** The messages → Anthropic's top-level system and alternating user / assistant turns. */
export function convertMessages(messages: Json[], provider: string): { system: Block[]; turns: Turn[] } {
  const system: Block[] = []
  const turns: Turn[] = []
  const push = (role: Turn['role'], blocks: Block[]) => {
    if (!blocks.length) return
    const last = turns.at(-1)
    if (last?.role === role) last.content.push(...blocks)
    else turns.push({ role, content: blocks })
  }
  for (const [i, message] of messages.entries()) {
    const param = `messages[${i}]`
    if (message.role === 'system' || message.role === 'developer') system.push(...cacheLast(systemBlocks(message.content, provider, param), message))
    else if (message.role === 'user') push('user', cacheLast(userBlocks(message.content, provider, param), message))
    else if (message.role === 'assistant') push('assistant', cacheLast(assistantBlocks(message, provider, param), message))
    else if (message.role === 'tool') push('user', cacheLast([toolResultBlock(message, provider, param)], message))
  }
  // Anthropic wants a user turn's tool_result blocks before anything else in it.
  for (const turn of turns) {
    if (turn.role === 'user') turn.content = [...turn.content.filter((b) => b.type === 'tool_result'), ...turn.content.filter((b) => b.type !== 'tool_result')]
  }
  return { system, turns }
}

/** A JSON schema with every object closed (`additionalProperties: false` where unset), as structured outputs require. */
export function closeObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closeObjects)
  if (!schema || typeof schema !== 'object') return schema
  const out: Json = { ...(schema as Json) }
  for (const key of ['items', 'not', 'additionalItems']) if (out[key] && typeof out[key] === 'object') out[key] = closeObjects(out[key])
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(closeObjects)
  for (const key of ['properties', '$defs', 'definitions']) {
    if (out[key] && typeof out[key] === 'object')
      out[key] = Object.fromEntries(Object.entries(out[key] as Json).map(([name, value]) => [name, closeObjects(value)]))
  }
  const isObject = out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object')) || (out.type === undefined && 'properties' in out)
  if (isObject && out.additionalProperties === undefined) out.additionalProperties = false
  return out
}

/** Whether the client asked for the reasoning text to be left out (`reasoning.exclude`, `include_reasoning: false`). */
export const excludesReasoning = (request: UpstreamChatRequest): boolean => reasoningOf(request)?.exclude === true || request.include_reasoning === false

/**
 * `reasoning` (OpenRouter) / `reasoning_effort` (OpenAI) → `thinking`, `output_config.effort` and the final max_tokens
 * (docs/reasoning.md). Effort `none` (or `reasoning.enabled: false`) turns thinking off; on a model whose thinking is
 * always on (`type: 'disabled'` is a 400 there) `thinking` is left out, so the model thinks as it does by default.
 * Adaptive models: effort minimal/low → low, medium → medium, high → high, xhigh → xhigh, max → max, then the nearest
 * the model takes; a `reasoning.max_tokens` without effort picks low (≤ 4,096), medium (≤ 16,384) or high.
 * Budget models: `budget_tokens` = `reasoning.max_tokens`, else max_tokens × 0.1 / 0.2 / 0.5 / 0.8 / 0.95 for
 * minimal / low / medium (the default) / high / xhigh and max, within 1,024 … 128,000 and always below max_tokens;
 * when the budget leaves no room under max_tokens, max_tokens grows by it (up to the model's maximum) so the answer
 * keeps its room.
 */
function thinkingOf(request: UpstreamChatRequest, traits: ClaudeTraits, maxTokens: number): { thinking?: Json; effort?: string; maxTokens: number } {
  const reasoning = reasoningOf(request)
  const asked = requestedEffort(request)
  if (asked === 'none') return traits.thinkingAlwaysOn ? { maxTokens } : { thinking: { type: 'disabled' }, maxTokens }
  if (!reasoning && !asked) return { maxTokens }
  const exclude = excludesReasoning(request)
  const effort = asked
  if (traits.thinking === 'adaptive') {
    const level = effort ? ADAPTIVE_EFFORT[effort] : reasoning?.max_tokens ? effortForBudget(reasoning.max_tokens) : undefined
    const offered = traits.efforts?.filter((e) => ADAPTIVE_EFFORTS.includes(e))
    return {
      thinking: { type: 'adaptive', display: exclude ? 'omitted' : 'summarized' },
      effort: level && offered?.length ? nearestEffort(level, offered) : level,
      maxTokens,
    }
  }
  const share = BUDGET_SHARE[effort ?? 'medium'] ?? BUDGET_SHARE.medium
  let budget = Math.min(MAX_THINKING_BUDGET, Math.max(MIN_THINKING_BUDGET, reasoning?.max_tokens ?? Math.floor(maxTokens * share)))
  let max = maxTokens
  if (budget >= max) max = Math.min(budget + max, traits.maxOutputTokens ?? Number.MAX_SAFE_INTEGER)
  if (budget >= max) budget = max - 1
  return { thinking: { type: 'enabled', budget_tokens: budget, ...(exclude ? { display: 'omitted' } : {}) }, maxTokens: max }
}

function toolChoiceOf(choice: unknown, parallel: unknown): Json | undefined {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === 'none') return { type: 'none' }
  if (choice === 'required') return { type: 'any', ...single }
  if (choice && typeof choice === 'object') return { type: 'tool', name: (choice as { function: { name: string } }).function.name, ...single }
  if (choice === 'auto' || parallel === false) return { type: 'auto', ...single }
  return undefined
}

const inputSchemaOf = (parameters: Json | undefined): Json =>
  !parameters ? { type: 'object', properties: {} } : parameters.type === undefined ? { type: 'object', ...parameters } : parameters

/**
 * The body of POST /v1/messages for an OpenAI-format request. Fields are chosen, never copied: anything Anthropic
 * does not take (sampling parameters, penalties, seed, logprobs, n, OpenRouter fields) stays out.
 */
export function toAnthropicRequest(request: UpstreamChatRequest, options: { provider: string; traits: ClaudeTraits; stream: boolean }): Json {
  const { provider, traits, stream } = options
  const { system, turns } = convertMessages(request.messages as Json[], provider)

  const requested = (request.max_completion_tokens ?? request.max_tokens) as number | null | undefined
  const modelMax = traits.maxOutputTokens ?? FALLBACK_MAX_TOKENS
  const { thinking, effort, maxTokens } = thinkingOf(request, traits, requested ?? (stream ? modelMax : Math.min(modelMax, WHOLE_ANSWER_MAX_TOKENS)))

  const outputConfig: Json = {}
  if (effort) outputConfig.effort = effort
  const format = request.response_format as { type: string; json_schema?: { schema?: Json } } | undefined
  if (format?.type === 'json_schema' && format.json_schema?.schema)
    outputConfig.format = { type: 'json_schema', schema: closeObjects(format.json_schema.schema) }
  else if (format?.type === 'json_schema' || format?.type === 'json_object') system.push({ type: 'text', text: JSON_INSTRUCTION })

  type OpenAITool = { function: { name: string; description?: string; parameters?: Json; strict?: boolean | null }; cache_control?: Json }
  let tools: Json[] = ((request.tools as OpenAITool[] | undefined) ?? []).map((t) => ({
    name: t.function.name,
    ...(t.function.description ? { description: t.function.description } : {}),
    input_schema: inputSchemaOf(t.function.parameters),
    ...(t.function.strict ? { strict: true } : {}),
    ...cacheOf(t as Json),
  }))
  let toolChoice = tools.length ? toolChoiceOf(request.tool_choice, request.parallel_tool_calls) : undefined
  // Anthropic needs the tools of tool_use blocks in the conversation defined; OpenAI lets a last turn leave them out.
  // Then they are declared as unavailable and the model may not call them.
  if (!tools.length) {
    const used = [...new Set(turns.flatMap((t) => t.content.filter((b) => b.type === 'tool_use').map((b) => b.name as string)))]
    if (used.length) {
      tools = used.map((name) => ({ name, description: 'Not available in this turn.', input_schema: { type: 'object', properties: {} } }))
      toolChoice = { type: 'none' }
    }
  }

  const stop = request.stop as string | string[] | null | undefined
  const stopSequences = (typeof stop === 'string' ? [stop] : (stop ?? [])).filter((s) => s !== '')
  const cacheControl = request.cache_control as { type?: string } | undefined

  return {
    model: request.model,
    max_tokens: maxTokens,
    ...(system.length ? { system } : {}),
    messages: turns,
    ...(tools.length ? { tools } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(thinking ? { thinking } : {}),
    ...(Object.keys(outputConfig).length ? { output_config: outputConfig } : {}),
    ...(stopSequences.length ? { stop_sequences: stopSequences } : {}),
    ...(typeof request.user === 'string' && request.user ? { metadata: { user_id: request.user } } : {}),
    // Automatic prompt caching (OpenRouter's top-level cache_control). The TTL is left at 5 minutes: the catalogue
    // prices cache writes at the 5-minute rate, and a 1-hour write costs more.
    ...(cacheControl?.type === 'ephemeral' ? { cache_control: { type: 'ephemeral' } } : {}),
    ...(stream ? { stream: true } : {}),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Response: Anthropic → OpenAI

/** Anthropic's usage (a message's, or a message_delta's cumulative counts). */
export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
  /** The cache writes by how long they are kept. */
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null
  output_tokens_details?: { thinking_tokens?: number } | null
  [key: string]: unknown
}

/**
 * Anthropic's usage as OpenAI's: every input token in prompt_tokens, cache reads as cached_tokens, cache writes as
 * cache_write_tokens (those kept an hour also as cache_write_1h_tokens, priced as such: docs/money.md#priced-options).
 */
export function usageFrom(usage: AnthropicUsage): UpstreamUsage {
  const input = usage.input_tokens ?? 0
  const read = usage.cache_read_input_tokens ?? 0
  const written = usage.cache_creation_input_tokens ?? 0
  const hour = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0
  const output = usage.output_tokens ?? 0
  const prompt = input + read + written
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details:
      hour > 0 ? { cached_tokens: read, cache_write_tokens: written, cache_write_1h_tokens: hour } : { cached_tokens: read, cache_write_tokens: written },
    completion_tokens_details: { reasoning_tokens: usage.output_tokens_details?.thinking_tokens ?? 0 },
  }
}

/** A Messages API answer. */
export interface AnthropicMessage {
  id: string
  type: 'message'
  model: string
  content: Block[]
  stop_reason: string | null
  stop_sequence?: string | null
  stop_details?: { explanation?: string | null } | null
  usage: AnthropicUsage
}

/** A thinking or redacted_thinking block as one OpenRouter `reasoning_details` entry (kept so a client can send it back). */
export function reasoningDetail(block: Block, index: number): Json | undefined {
  if (block.type === 'thinking')
    return { type: 'reasoning.text', text: block.thinking ?? '', signature: block.signature ?? '', format: REASONING_FORMAT, index }
  if (block.type === 'redacted_thinking') return { type: 'reasoning.encrypted', data: block.data, format: REASONING_FORMAT, index }
  return undefined
}

/**
 * A whole answer → OpenAI's completion: text blocks joined as `content`, tool_use blocks as `tool_calls`, thinking as
 * `reasoning` (blocks separated by a blank line) and `reasoning_details`. `finish_reason` is Anthropic's stop_reason
 * as it is: the gateway normalizes it and keeps it as `native_finish_reason`.
 */
export function fromAnthropicMessage(message: AnthropicMessage, options: { excludeReasoning: boolean }): UpstreamCompletion {
  const texts: string[] = []
  const thoughts: string[] = []
  const details: Json[] = []
  const toolCalls: Json[] = []
  for (const block of message.content) {
    if (block.type === 'text') texts.push(block.text as string)
    else if (block.type === 'tool_use')
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } })
    else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
      if (block.type === 'thinking' && block.thinking) thoughts.push(block.thinking as string)
      details.push(reasoningDetail(block, details.length)!)
    }
  }
  const reasoning = !options.excludeReasoning && thoughts.length ? thoughts.join('\n\n') : null
  return {
    id: message.id,
    created: Math.floor(Date.now() / 1000),
    model: message.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: texts.length ? texts.join('') : null,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          refusal: message.stop_reason === 'refusal' ? (message.stop_details?.explanation ?? null) : null,
          reasoning,
          ...(details.length ? { reasoning_details: details } : {}),
        },
        finish_reason: message.stop_reason,
      },
    ],
    usage: usageFrom(message.usage ?? {}),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** Anthropic's error body: `{ type: 'error', error: { type, message }, request_id }`. */
export function parseAnthropicError(text: string): { type?: string; message: string } {
  try {
    const body = JSON.parse(text) as { error?: { type?: string; message?: string } }
    if (body?.error && typeof body.error.message === 'string') return { type: body.error.type, message: body.error.message }
  } catch {
    // not JSON
  }
  return { message: text.slice(0, 500) }
}

const CONTEXT_TOO_LONG = /prompt is too long|exceed context limit|context window|context.length|too many (input )?tokens/i

/**
 * An Anthropic error (HTTP status and body, or a stream's `error` event) → the gateway's error: rate_limit_error →
 * rate_limit_exceeded (429, retryable, Retry-After kept); overloaded_error → provider_overloaded (retryable);
 * invalid_request_error → invalid_request (400), or context_length_exceeded for a prompt too long;
 * authentication_error / permission_error → authentication; api_error → provider_unavailable; timeout_error → timeout;
 * billing_error → upstream_error (the gateway's account, so another provider may serve). The message goes to
 * metadata.raw.
 */
export function anthropicError(
  provider: UpstreamSource,
  status: number | undefined,
  body: { type?: string; message: string },
  headers: Record<string, string> = {},
): UpstreamError {
  const raw = body.message
  switch (body.type) {
    case 'rate_limit_error':
      return upstreamError(provider, 'rate_limit_exceeded', raw, { headers: retryHeaders(headers) })
    case 'overloaded_error':
      return upstreamError(provider, 'provider_overloaded', raw, { headers: retryHeaders(headers) })
    case 'invalid_request_error':
      return upstreamError(provider, CONTEXT_TOO_LONG.test(raw) ? 'context_length_exceeded' : 'invalid_request', raw)
    case 'not_found_error':
      return upstreamError(provider, 'invalid_request', raw)
    case 'authentication_error':
    case 'permission_error':
      return upstreamError(provider, 'authentication', raw)
    case 'api_error':
      return upstreamError(provider, 'provider_unavailable', raw)
    case 'timeout_error':
      return upstreamError(provider, 'timeout', raw)
    case 'billing_error':
      return upstreamError(provider, 'upstream_error', raw)
  }
  if (status === undefined) return upstreamError(provider, 'upstream_error', raw)
  if (status === 413) return upstreamError(provider, 'invalid_request', raw || 'the request is too large')
  return fromHttpStatus(provider, status, raw, headers)
}
