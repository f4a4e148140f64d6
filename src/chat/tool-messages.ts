import { invalidRequest } from '../errors'
import type { ChatRequest } from '../schemas/chat'

/*
 * A `tool` message is the result of a tool call, so it must answer one: its `tool_call_id` must be the id of a
 * `tool_calls` entry of an assistant message before it. Upstreams reject any other conversation (each in its own
 * words, after the request was held and sent); the gateway refuses it first, with a 400 naming the message.
 */

/** Throws 400 invalid_request for the first tool message whose tool_call_id is empty or answers no earlier assistant tool call. */
export function assertToolMessagesAnswered(messages: ChatRequest['messages']): void {
  const declared = new Set<string>()
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) declared.add(call.id)
      return
    }
    if (message.role !== 'tool') return
    const param = `messages.${index}.tool_call_id`
    const id: unknown = message.tool_call_id
    if (typeof id !== 'string' || id === '') throw invalidRequest(`${param}: a tool message must name the tool call it answers`, param)
    if (!declared.has(id)) throw invalidRequest(`${param}: ${JSON.stringify(id)} answers no tool call of an earlier assistant message`, param)
  })
}
