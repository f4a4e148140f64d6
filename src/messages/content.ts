import { invalidRequest } from '../errors'
import { REASONING_FORMAT } from '../providers/anthropic-translate'
import { type MessagesRequest, SERVER_BLOCK_TYPES } from '../schemas/messages'

/*
 * Anthropic's messages → the gateway's chat messages (docs/messages.md#how-a-request-maps): a user turn's tool_result
 * blocks become `tool` messages (before the rest of the turn), an assistant turn's thinking blocks become
 * `reasoning_details` (signatures kept), its tool_use blocks `tool_calls`; cache_control stays on its part.
 */

type Json = Record<string, unknown>
type Block = Json & { type: string }
type Message = MessagesRequest['messages'][number]
const SERVER = new Set<string>(SERVER_BLOCK_TYPES)

const cacheOf = (block: Json): Json => (block.cache_control ? { cache_control: block.cache_control } : {})

// A block only a server tool makes: the gateway runs no server tool, so it cannot be sent on.
const serverBlock = (block: Block, param: string) =>
  invalidRequest(`${param}: ${block.type} blocks come from Anthropic's server tools, which this gateway does not run`, param)

/** A text, image or document block → a chat content part. */
function userPart(block: Block, param: string): Json {
  if (block.type === 'text') return { type: 'text', text: block.text, ...cacheOf(block) }
  if (block.type === 'image') {
    const source = block.source as { type: string; media_type?: string; data?: string; url?: string }
    if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` }, ...cacheOf(block) }
    if (source.type === 'url') return { type: 'image_url', image_url: { url: source.url }, ...cacheOf(block) }
    throw invalidRequest(`${param}.source: images must be sent inline (base64) or by URL; a file_id means nothing to this gateway`, `${param}.source`)
  }
  if (block.type === 'document') {
    const source = block.source as { type: string; data?: string }
    const title = typeof block.title === 'string' ? { filename: block.title } : {}
    if (source.type === 'base64') return { type: 'file', file: { file_data: `data:application/pdf;base64,${source.data}`, ...title }, ...cacheOf(block) }
    if (source.type === 'text') return { type: 'text', text: source.data, ...cacheOf(block) }
    throw invalidRequest(`${param}.source: documents must be sent inline (a base64 PDF or plain text), not as ${source.type}`, `${param}.source`)
  }
  if (SERVER.has(block.type)) throw serverBlock(block, param)
  throw invalidRequest(`${param}: ${block.type} blocks may appear only in assistant messages`, param)
}

/** A tool_result block → a `tool` message (is_error marks the text with "Error: ", as chat has no such flag). */
function toolMessage(block: Block, param: string): Json {
  const marker = block.is_error ? 'Error: ' : ''
  const result = block.content as string | Block[] | undefined
  let content: string | Json[]
  if (result === undefined || typeof result === 'string') content = `${marker}${result ?? ''}`
  else {
    content = result.map((part, j) => userPart(part, `${param}.content.${j}`))
    if (marker) content.unshift({ type: 'text', text: marker.trim() })
    if (!content.length) content = ''
  }
  return { role: 'tool', tool_call_id: block.tool_use_id, content, ...cacheOf(block) }
}

/** A user turn → its tool messages, then a user message with the rest (when there is any). */
function userMessages(content: string | Block[], param: string): Json[] {
  if (typeof content === 'string') return [{ role: 'user', content }]
  const tools: Json[] = []
  const parts: Json[] = []
  for (const [j, block] of content.entries()) {
    const where = `${param}.content.${j}`
    if (block.type === 'tool_result') tools.push(toolMessage(block, where))
    else parts.push(userPart(block, where))
  }
  return parts.length ? [...tools, { role: 'user', content: parts }] : tools
}

/** An assistant turn → one assistant message: text, thinking blocks as reasoning_details, tool_use blocks as tool_calls. */
function assistantMessage(content: string | Block[], param: string): Json {
  if (typeof content === 'string') return { role: 'assistant', content }
  const texts: Json[] = []
  const details: Json[] = []
  const calls: Json[] = []
  for (const [j, block] of content.entries()) {
    const where = `${param}.content.${j}`
    if (block.type === 'text') texts.push({ type: 'text', text: block.text, ...cacheOf(block) })
    else if (block.type === 'thinking')
      details.push({ type: 'reasoning.text', text: block.thinking, signature: block.signature, format: REASONING_FORMAT, index: details.length })
    else if (block.type === 'redacted_thinking')
      details.push({ type: 'reasoning.encrypted', data: block.data, format: REASONING_FORMAT, index: details.length })
    else if (block.type === 'tool_use')
      calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) }, ...cacheOf(block) })
    else if (SERVER.has(block.type)) throw serverBlock(block, where)
    else throw invalidRequest(`${where}: ${block.type} blocks may appear only in user messages`, where)
  }
  const plain = texts.every((t) => !t.cache_control)
  const message: Json = { role: 'assistant', content: !texts.length ? null : plain ? texts.map((t) => t.text).join('') : texts }
  if (calls.length) message.tool_calls = calls.map(({ cache_control: _cache, ...call }) => call)
  if (calls.some((c) => c.cache_control)) message.cache_control = calls.find((c) => c.cache_control)?.cache_control
  if (details.length) message.reasoning_details = details
  return message
}

/** System text (a string or text blocks) → a system message, or nothing for an empty prompt. */
export function systemMessage(system: string | Block[] | undefined): Json[] {
  if (system === undefined || system === '' || (Array.isArray(system) && !system.length)) return []
  if (typeof system === 'string') return [{ role: 'system', content: system }]
  return [{ role: 'system', content: system.map((b) => ({ type: 'text', text: b.text, ...cacheOf(b) })) }]
}

/** The request's system prompt and turns → chat messages, in order. */
export function chatMessages(system: MessagesRequest['system'], messages: Message[]): Json[] {
  const out = systemMessage(system as string | Block[] | undefined)
  for (const [i, message] of messages.entries()) {
    const param = `messages.${i}`
    const content = message.content as string | Block[]
    if (message.role === 'system') out.push(...systemMessage(content))
    else if (message.role === 'user') out.push(...userMessages(content, param))
    else out.push(assistantMessage(content, param))
  }
  return out
}
