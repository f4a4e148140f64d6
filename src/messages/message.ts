import { mergeReasoningDetails, type ReasoningDetail } from '../providers/anthropic-translate'
import { stopOf } from './stop-reason'
import { messagesUsage } from './usage'

/*
 * A whole chat completion (docs/chat.md#the-answer) → Anthropic's message (docs/messages.md#the-answer): thinking
 * blocks first (from `reasoning_details`, signatures kept; else the `reasoning` text), then the text, then tool_use.
 */

type Json = Record<string, unknown>
type Block = Json & { type: string }

/** Thinking blocks of a chat message: its reasoning_details joined by index, else its reasoning text unsigned. */
export function thinkingBlocks(message: Json): Block[] {
  const details = Array.isArray(message.reasoning_details) ? mergeReasoningDetails(message.reasoning_details as ReasoningDetail[]) : []
  const blocks: Block[] = []
  for (const detail of details) {
    if (detail.type === 'reasoning.text') blocks.push({ type: 'thinking', thinking: detail.text ?? '', signature: detail.signature ?? '' })
    else if (detail.type === 'reasoning.encrypted' && typeof detail.data === 'string') blocks.push({ type: 'redacted_thinking', data: detail.data })
  }
  if (!blocks.length && typeof message.reasoning === 'string' && message.reasoning)
    blocks.push({ type: 'thinking', thinking: message.reasoning, signature: '' })
  return blocks
}

/** A tool call's arguments as an object (arguments that are not a JSON object are kept under `arguments`). */
export function toolInput(text: string): Json {
  try {
    const value = text.trim() ? JSON.parse(text) : {}
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Json
  } catch {
    // not JSON: kept as text below
  }
  return { arguments: text }
}

/** The chat completion's first choice as Anthropic's message; its id is the generation id. */
export function toMessage(completion: Json, stops: string[] | undefined): Json {
  const choice = ((completion.choices as Json[] | undefined) ?? [])[0] ?? {}
  const message = (choice.message ?? {}) as Json
  const content: Block[] = thinkingBlocks(message)
  if (typeof message.content === 'string' && message.content) content.push({ type: 'text', text: message.content })
  for (const call of (message.tool_calls as { id: string; function: { name: string; arguments: string } }[] | undefined) ?? [])
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments), caller: { type: 'direct' } })
  const stop = stopOf(choice.finish_reason as string | null, choice.native_finish_reason, choice.stop_reason, stops)
  const refusal = typeof message.refusal === 'string' && message.refusal ? message.refusal : null
  return {
    id: completion.id,
    type: 'message',
    role: 'assistant',
    model: completion.model,
    provider: completion.provider,
    content,
    ...stop,
    stop_details: stop.stop_reason === 'refusal' ? { type: 'refusal', category: null, explanation: refusal } : null,
    usage: messagesUsage(completion.usage as Json | undefined),
  }
}
