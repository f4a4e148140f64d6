import type { LanguageModelV2CallOptions, LanguageModelV3CallOptions } from '@ai-sdk/provider'
import { type Json, withoutUndefined } from './json'
import { chatMessages } from './prompt'
import { bodyFields, gatewayOptions } from './provider-options'
import type { Unsupported } from './spec-version'

/**
 * The AI SDK's call options (specification v2 or v3) as the body of the gateway's POST /chat/completions
 * (docs/chat.md): the prompt as messages, the sampling settings, the tools and tool choice, the response format, and
 * the provider options passed through (docs/first-party.md#the-ai-sdk-provider).
 */

/** Call options of either specification. */
export type AnyCallOptions = LanguageModelV3CallOptions | LanguageModelV2CallOptions

/** A chat body and what of the call it could not carry. */
export interface ChatRequest {
  body: Record<string, Json>
  unsupported: Unsupported[]
}

/** The tools as chat's function tools; a provider's own tool (web search, …) is not the gateway's and is left out. */
function chatTools(tools: AnyCallOptions['tools'], unsupported: Unsupported[]): Json[] | undefined {
  if (!tools?.length) return undefined
  const out: Json[] = []
  for (const tool of tools) {
    if (tool.type !== 'function') {
      unsupported.push({ feature: `tool ${tool.name}`, details: `provider tools (${tool.id}) are not served by the gateway` })
      continue
    }
    const strict = 'strict' in tool && tool.strict !== undefined ? { strict: tool.strict } : {}
    out.push({
      type: 'function',
      function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.inputSchema, ...strict },
    })
  }
  return out.length ? out : undefined
}

/** The tool choice as chat's tool_choice. */
function chatToolChoice(choice: AnyCallOptions['toolChoice']): Json {
  if (!choice) return undefined
  return choice.type === 'tool' ? { type: 'function', function: { name: choice.toolName } } : choice.type
}

/** The response format as chat's: a JSON schema (strict unless `strictJsonSchema: false`), or JSON without one. */
function chatResponseFormat(format: AnyCallOptions['responseFormat'], strict: boolean): Json {
  if (format?.type !== 'json') return undefined
  if (!format.schema) return { type: 'json_object' }
  return {
    type: 'json_schema',
    json_schema: { name: format.name ?? 'response', ...(format.description ? { description: format.description } : {}), schema: format.schema, strict },
  }
}

/** The chat body of a call to `modelId`, whole or streamed. */
export function chatRequest(modelId: string, options: AnyCallOptions, stream: boolean): ChatRequest {
  const unsupported: Unsupported[] = []
  const own = gatewayOptions(options.providerOptions)
  const body = withoutUndefined({
    model: modelId,
    messages: chatMessages(options.prompt),
    max_tokens: options.maxOutputTokens,
    temperature: options.temperature,
    top_p: options.topP,
    top_k: options.topK,
    stop: options.stopSequences?.length ? options.stopSequences : undefined,
    seed: options.seed,
    frequency_penalty: options.frequencyPenalty,
    presence_penalty: options.presencePenalty,
    response_format: chatResponseFormat(options.responseFormat, own.strictJsonSchema !== false),
    tools: chatTools(options.tools, unsupported),
    tool_choice: chatToolChoice(options.toolChoice),
    ...bodyFields(own),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  })
  if (!body.tools) delete body.tool_choice
  return { body, unsupported }
}

/** The call's headers without the unset ones, for the client. */
export function callHeaders(headers: Record<string, string | undefined> | undefined): Record<string, string> | undefined {
  if (!headers) return undefined
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = value
  return Object.keys(out).length ? out : undefined
}
