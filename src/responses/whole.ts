import { newItemId } from './ids'
import { encryptedContentOf } from './reasoning'
import type { Json } from './json'

/** A reasoning output item from the thinking text and its signed blocks (docs/responses.md#reasoning). */
export function reasoningItem(id: string, text: string, details: Json[]): Json {
  const encrypted = encryptedContentOf(details)
  return { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [], ...(encrypted ? { encrypted_content: encrypted } : {}) }
}

/**
 * The output items of a whole chat answer's message (docs/responses.md#the-response): its reasoning, then its text
 * (and refusal) as one assistant message, then one function_call per tool call; their ids name `responseId`.
 */
export function outputOfMessage(message: Json, status: 'completed' | 'incomplete', responseId: string): Json[] {
  const output: Json[] = []
  const details: Json[] = Array.isArray(message.reasoning_details) ? message.reasoning_details : []
  if (message.reasoning || details.length) output.push(reasoningItem(newItemId('rs', responseId), message.reasoning ?? '', details))
  const content: Json[] = []
  if (typeof message.content === 'string' && message.content) content.push({ type: 'output_text', text: message.content, annotations: [] })
  if (typeof message.refusal === 'string' && message.refusal) content.push({ type: 'refusal', refusal: message.refusal })
  if (content.length) output.push({ id: newItemId('msg', responseId), type: 'message', role: 'assistant', status, content })
  for (const call of message.tool_calls ?? []) {
    output.push({
      id: newItemId('fc', responseId),
      type: 'function_call',
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      status: 'completed',
    })
  }
  return output
}
