import * as v from 'valibot'
import { invalidRequest } from '../errors'
import { describeIssue } from '../http/validate'
import { type ChatRequest, chatRequestSchema } from '../schemas/chat'
import type { InputItem, ResolvedItem, ResponsesRequest } from '../schemas/responses'
import { wantsLogprobs } from './output'
import { reasoningDetailsOf } from './reasoning'
import { type Json, objectsOf } from './json'
import { chatToolName } from './namespaces'

/** The request's `input` as items: a string is one user message (docs/responses.md#the-request). */
export const inputItemsOf = (input: ResponsesRequest['input']): InputItem[] =>
  typeof input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }] : input

/** A built-in tool OpenAI runs itself, which the gateway cannot: 400 naming it (docs/responses.md#the-request). */
const builtInTool = (type: string, param: string) =>
  invalidRequest(
    `${param}: "${type}" is a built-in tool of OpenAI's that this gateway cannot run; only function tools ({ type: "function" }, also grouped in a { type: "namespace" }) are served`,
    param,
  )

// A content part of a user, system or developer message → chat's part.
function inputPart(part: Json, param: string): Json {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text }
    case 'input_image':
      if (!part.image_url)
        throw invalidRequest(
          `${param}.file_id: files uploaded to OpenAI are not available here; send the image as image_url (a URL or a data: URL)`,
          `${param}.file_id`,
        )
      return { type: 'image_url', image_url: { url: part.image_url, ...(part.detail && part.detail !== 'original' ? { detail: part.detail } : {}) } }
    case 'input_file':
      if (!part.file_data)
        throw invalidRequest(`${param}: send the file's content as file_data (files uploaded to OpenAI, and file_url, are not available here)`, param)
      return { type: 'file', file: { file_data: part.file_data, ...(part.filename ? { filename: part.filename } : {}) } }
    default:
      throw invalidRequest(`${param}.type: "${part.type}" is not an input part of a user, system or developer message`, `${param}.type`)
  }
}

// The text of an assistant message's content (output_text parts joined; a refusal is its text).
const assistantText = (content: string | Json[]): string =>
  typeof content === 'string' ? content : content.map((part) => (part.type === 'refusal' ? part.refusal : (part.text ?? ''))).join('')

/**
 * Input items → chat messages (docs/responses.md#input-items): messages by role; function_call items join the assistant
 * message before them as its tool_calls; function_call_output items are tool messages; a reasoning item's signed
 * blocks (its encrypted_content) go with the next assistant message as its reasoning_details.
 */
export function messagesOf(items: ResolvedItem[], instructions: string | null | undefined): Json[] {
  const messages: Json[] = []
  if (instructions) messages.push({ role: 'system', content: instructions })
  let reasoning: Json[] = []
  // The assistant message function calls may join: the last message, when it is an assistant's.
  const openAssistant = (): Json => {
    const last = messages.at(-1)
    if (last?.role === 'assistant' && !reasoning.length) return last
    const message: Json = { role: 'assistant', content: null }
    if (reasoning.length) message.reasoning_details = reasoning
    reasoning = []
    messages.push(message)
    return message
  }
  items.forEach((item, i) => {
    const param = `input.${i}`
    switch (item.type) {
      case undefined:
      case 'message': {
        if (item.role === 'assistant') {
          const message = openAssistant()
          const text = assistantText(item.content)
          message.content = message.content === null ? text : `${message.content}${text}`
          return
        }
        const content = typeof item.content === 'string' ? item.content : item.content.map((part: Json, j: number) => inputPart(part, `${param}.content.${j}`))
        if (Array.isArray(content) && !content.length) throw invalidRequest(`${param}.content: must not be empty`, `${param}.content`)
        messages.push({ role: item.role, content })
        return
      }
      case 'function_call': {
        const message = openAssistant()
        message.tool_calls = [
          ...objectsOf(message.tool_calls),
          { id: item.call_id, type: 'function', function: { name: chatToolName(item.name, (item as Json).namespace), arguments: item.arguments } },
        ]
        return
      }
      case 'function_call_output': {
        const output = typeof item.output === 'string' ? item.output : item.output.map((part: Json, j: number) => inputPart(part, `${param}.output.${j}`))
        if (item.call_id === undefined) {
          // A named output answering no call (Codex's goal objective): a user message saying what it is.
          const label = `[${chatToolName(String(item.name), item.namespace)}]`
          const content = typeof output === 'string' ? `${label} ${output}` : [{ type: 'text', text: label }, ...output]
          messages.push({ role: 'user', content })
          return
        }
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: Array.isArray(output) && !output.length ? '' : output })
        return
      }
      case 'reasoning':
        reasoning = [...reasoning, ...reasoningDetailsOf(item.encrypted_content)]
        return
    }
  })
  return messages
}

// A function tool of the request → chat's, under `name` (its chat name, docs/responses.md#namespace-tools).
function chatFunctionTool(tool: Json, name: string): Json {
  const fn: Json = { name }
  if (tool.description != null) fn.description = tool.description
  if (tool.parameters != null) fn.parameters = tool.parameters
  if (tool.strict != null) fn.strict = tool.strict
  return { type: 'function', function: fn }
}

const CHAT_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

// A namespace tool's function tools → chat's, each named `<namespace>__<name>`; another type inside is a 400 naming it.
function namespaceTools(tool: Json, param: string): Json[] {
  if (typeof tool.name !== 'string' || !tool.name) throw invalidRequest(`${param}.name: a namespace tool needs a name`, `${param}.name`)
  if (!Array.isArray(tool.tools) || !tool.tools.length)
    throw invalidRequest(`${param}.tools: a namespace tool needs a non-empty list of function tools`, `${param}.tools`)
  return objectsOf(tool.tools).map((inner, j) => {
    const at = `${param}.tools.${j}`
    if (inner.type !== 'function') throw builtInTool(String(inner.type), `${at}.type`)
    const name = chatToolName(String(inner.name), tool.name)
    if (typeof inner.name !== 'string' || !CHAT_TOOL_NAME.test(name))
      throw invalidRequest(`${at}.name: the namespace and the name, joined by "__", must be 1–64 letters, digits, _ or -`, `${at}.name`)
    return chatFunctionTool(inner, name)
  })
}

/** The request's tools as chat's function tools (a namespace's tools among them); a built-in tool is a 400 naming it. */
function toolsOf(tools: ResponsesRequest['tools']): Json[] | undefined {
  return tools?.flatMap((tool: Json, i) => {
    if (tool.type === 'namespace') return namespaceTools(tool, `tools.${i}`)
    if (tool.type !== 'function') throw builtInTool(String(tool.type), `tools.${i}.type`)
    return [chatFunctionTool(tool, String(tool.name))]
  })
}

function toolChoiceOf(choice: ResponsesRequest['tool_choice']): Json | string | undefined {
  if (choice === undefined || typeof choice === 'string') return choice
  if (choice.type === 'function' && typeof choice.name === 'string')
    return { type: 'function', function: { name: chatToolName(choice.name, (choice as Json).namespace) } }
  throw builtInTool(choice.type, 'tool_choice.type')
}

function responseFormatOf(text: ResponsesRequest['text']): Json | undefined {
  const format = text?.format
  if (format?.type !== 'json_schema') return format
  const { type, ...schema } = format
  return { type, json_schema: schema }
}

/**
 * The chat request that serves a Responses request (docs/responses.md#the-request), validated by chat's own schema.
 * `conversation` is the stored conversation of `previous_response_id` (its input then its output items) and the
 * request's input, its item references resolved.
 */
export function toChatRequest(request: ResponsesRequest, conversation: ResolvedItem[]): ChatRequest {
  if (request.background) throw invalidRequest('background: background responses are not served by this gateway', 'background')
  // References to what a provider account keeps (a stored prompt template, a conversation): they would reach the
  // operator's own account, and the gateway keeps conversations itself (docs/responses.md#the-request).
  const loose = request as Record<string, unknown>
  if (loose.prompt != null)
    throw invalidRequest('prompt: stored prompt templates are not served by this gateway; send instructions and input yourself', 'prompt')
  if (loose.conversation != null)
    throw invalidRequest('conversation: conversations are kept by this gateway; continue one with previous_response_id', 'conversation')
  const chat: Json = {
    messages: messagesOf(conversation, request.instructions),
    stream: request.stream === true,
  }
  if (request.model !== undefined) chat.model = request.model
  if (request.models !== undefined) chat.models = request.models
  if (request.provider !== undefined) chat.provider = request.provider
  const tools = toolsOf(request.tools)
  if (tools?.length) chat.tools = tools
  const toolChoice = toolChoiceOf(request.tool_choice)
  if (toolChoice !== undefined && tools?.length) chat.tool_choice = toolChoice
  if (request.parallel_tool_calls != null && tools?.length) chat.parallel_tool_calls = request.parallel_tool_calls
  const responseFormat = responseFormatOf(request.text)
  if (responseFormat) chat.response_format = responseFormat
  if (request.reasoning) {
    const reasoning: Json = {}
    if (request.reasoning.effort != null) reasoning.effort = request.reasoning.effort
    if (request.reasoning.summary != null) reasoning.summary = request.reasoning.summary
    if (Object.keys(reasoning).length) chat.reasoning = reasoning
  }
  if (request.max_output_tokens != null) chat.max_tokens = request.max_output_tokens
  if (request.temperature != null) chat.temperature = request.temperature
  if (request.top_p != null) chat.top_p = request.top_p
  // Logprobs only when `include` asks for them; `top_logprobs` alone changes nothing (chat would refuse it without them).
  if (wantsLogprobs(request)) {
    chat.logprobs = true
    if (request.top_logprobs != null) chat.top_logprobs = request.top_logprobs
  }
  if (request.user !== undefined) chat.user = request.user
  // Priced by chat's rule: a tier other than auto/default only where the catalogue prices it (docs/money.md#priced-options).
  if (request.service_tier != null) chat.service_tier = request.service_tier
  if (request.metadata) chat.metadata = request.metadata
  const result = v.safeParse(chatRequestSchema, chat)
  if (result.success) return result.output
  const issue = result.issues[0]
  throw invalidRequest(`input: its chat translation is invalid at ${v.getDotPath(issue) ?? 'body'}: ${describeIssue(issue)}`, 'input')
}
