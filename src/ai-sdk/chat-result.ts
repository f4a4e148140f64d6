import type { Json } from './json'
import { METADATA_KEY } from './metadata'

/**
 * A whole chat completion (docs/chat.md) as the AI SDK's content parts, in order: the reasoning (with its details,
 * which a later turn sends back), the text, then the tool calls.
 */

/** A content part both specifications share (text, reasoning, tool call). */
export type ResultContent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; providerMetadata?: Record<string, Record<string, Json>> }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }

/** The text of a message's reasoning details (when it has no `reasoning` text). */
export function detailsText(details: unknown): string {
  if (!Array.isArray(details)) return ''
  return details.map((detail) => (typeof detail?.text === 'string' ? detail.text : typeof detail?.summary === 'string' ? detail.summary : '')).join('')
}

/** The content parts of a completion's first choice's message. */
export function resultContent(message: Record<string, Json> | undefined): ResultContent[] {
  if (!message) return []
  const content: ResultContent[] = []
  const details = Array.isArray(message.reasoning_details) && message.reasoning_details.length ? message.reasoning_details : undefined
  const reasoning = typeof message.reasoning === 'string' && message.reasoning ? message.reasoning : detailsText(details)
  if (reasoning || details) {
    content.push({ type: 'reasoning', text: reasoning, ...(details ? { providerMetadata: { [METADATA_KEY]: { reasoningDetails: details } } } : {}) })
  }
  const text = typeof message.content === 'string' ? message.content : ''
  const refusal = typeof message.refusal === 'string' ? message.refusal : ''
  if (text || refusal) content.push({ type: 'text', text: [text, refusal].filter(Boolean).join(' ') })
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (call?.type !== 'function' && call?.function === undefined) continue
    content.push({ type: 'tool-call', toolCallId: String(call.id), toolName: String(call.function?.name), input: call.function?.arguments || '{}' })
  }
  return content
}
