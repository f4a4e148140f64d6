import type { ResponsesRequest } from '../schemas/responses'
import { newItemId } from './ids'
import { partLogprobsOf, wantsLogprobs } from './output'
import { encryptedContentOf } from './reasoning'
import { type Json, objectOf, objectsOf } from './json'
import { type NamespacedName, responsesCallName } from './namespaces'

/** A reasoning output item from the thinking text and its signed blocks (docs/responses.md#reasoning). */
export function reasoningItem(id: string, text: string, details: Json[]): Json {
  const encrypted = encryptedContentOf(details)
  return { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [], ...(encrypted ? { encrypted_content: encrypted } : {}) }
}

/**
 * The logprobs of a whole chat answer's choice for its output_text part: chat's `logprobs.content` (none: `[]`) when
 * the request's `include` asks for them, else undefined (the part then has no `logprobs`).
 */
export const choiceLogprobs = (choice: Json, request: ResponsesRequest): Json[] | undefined =>
  wantsLogprobs(request) ? objectsOf(objectOf(choice.logprobs).content) : undefined

/**
 * The output items of a whole chat answer's message (docs/responses.md#the-response): its reasoning, then its text
 * (and refusal) as one assistant message, then one function_call per tool call; their ids name `responseId`.
 * `logprobs` (chat's entries, see choiceLogprobs) become the output_text part's `logprobs` in OpenAI's shape; `names`
 * (namespacedNames) gives a namespaced tool's call its own name and `namespace`.
 */
export function outputOfMessage(
  message: Json,
  status: 'completed' | 'incomplete',
  responseId: string,
  logprobs?: Json[],
  names: Map<string, NamespacedName> = new Map(),
): Json[] {
  const output: Json[] = []
  const details = objectsOf(message.reasoning_details)
  const reasoning = typeof message.reasoning === 'string' ? message.reasoning : ''
  if (reasoning || details.length) output.push(reasoningItem(newItemId('rs', responseId), reasoning, details))
  const content: Json[] = []
  if (typeof message.content === 'string' && message.content) {
    content.push({ type: 'output_text', text: message.content, annotations: [], ...(logprobs ? { logprobs: partLogprobsOf(logprobs) } : {}) })
  }
  if (typeof message.refusal === 'string' && message.refusal) content.push({ type: 'refusal', refusal: message.refusal })
  if (content.length) output.push({ id: newItemId('msg', responseId), type: 'message', role: 'assistant', status, content })
  for (const call of objectsOf(message.tool_calls)) {
    const { name, arguments: args } = objectOf(call.function)
    output.push({
      id: newItemId('fc', responseId),
      type: 'function_call',
      call_id: call.id,
      ...responsesCallName(String(name), names),
      arguments: args,
      status: 'completed',
    })
  }
  return output
}
