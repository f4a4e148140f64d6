import type {
  LanguageModelV2Prompt,
  LanguageModelV2ToolResultOutput,
  LanguageModelV3FilePart,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from '@ai-sdk/provider'
import type { Json } from './json'
import { gatewayOptions } from './provider-options'

/**
 * The AI SDK's prompt (specification v2 or v3) as the messages of a chat body (docs/chat.md): system, user (text,
 * images, audio, files), assistant (text, reasoning with its details, tool calls) and tool results.
 */

/** One chat message as the gateway's POST /chat/completions takes it. */
export type ChatMessage = Record<string, Json>

/** A prompt of either specification. */
export type AnyPrompt = LanguageModelV3Prompt | LanguageModelV2Prompt

/** Bytes or base64 as base64. */
const base64Of = (data: Uint8Array | string): string => (typeof data === 'string' ? data : Buffer.from(data).toString('base64'))

/** File data as a URL: its own URL, or a data URL of its bytes. */
function urlOf(part: Pick<LanguageModelV3FilePart, 'data' | 'mediaType'>): string {
  if (part.data instanceof URL) return part.data.href
  if (typeof part.data === 'string' && /^(https?|data):/i.test(part.data)) return part.data
  const mediaType = part.mediaType === 'image/*' ? 'image/jpeg' : part.mediaType
  return `data:${mediaType};base64,${base64Of(part.data)}`
}

/** The audio formats chat's `input_audio` takes, by media type. */
const AUDIO_FORMATS: Record<string, string> = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3' }

/** A file part of a user message as a chat content part: an image, audio (its bytes) or a file. */
function filePart(part: Pick<LanguageModelV3FilePart, 'data' | 'mediaType' | 'filename'>): Record<string, Json> {
  if (part.mediaType.startsWith('image/')) return { type: 'image_url', image_url: { url: urlOf(part) } }
  const format = AUDIO_FORMATS[part.mediaType]
  if (format && !(part.data instanceof URL)) return { type: 'input_audio', input_audio: { data: base64Of(part.data), format } }
  return { type: 'file', file: { file_data: urlOf(part), ...(part.filename ? { filename: part.filename } : {}) } }
}

/** A tool's output as the text of a tool message. */
function toolOutputText(output: LanguageModelV3ToolResultOutput | LanguageModelV2ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value)
    case 'execution-denied':
      return output.reason ?? 'Tool execution denied.'
    case 'content':
      return output.value.map((item) => (item.type === 'text' ? item.text : JSON.stringify(item))).join('\n')
    default:
      return JSON.stringify(output)
  }
}

/** The cache_control a message or part's options ask for (`cacheControl` under the provider's keys, or Anthropic's). */
function cacheControlOf(providerOptions: Record<string, Record<string, Json> | undefined> | undefined): Record<string, Json> {
  const own = gatewayOptions(providerOptions)
  const cache = own.cacheControl ?? own.cache_control ?? providerOptions?.anthropic?.cacheControl
  return cache ? { cache_control: cache } : {}
}

/** The prompt as chat messages. */
export function chatMessages(prompt: AnyPrompt): ChatMessage[] {
  const messages: ChatMessage[] = []
  for (const message of prompt) {
    const cache = cacheControlOf(message.providerOptions)
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content, ...cache })
        break
      case 'user': {
        const parts = message.content
        if (parts.length === 1 && parts[0].type === 'text' && !parts[0].providerOptions) {
          messages.push({ role: 'user', content: parts[0].text, ...cache })
          break
        }
        const content = parts.map((part) =>
          part.type === 'text' ? { type: 'text', text: part.text, ...cacheControlOf(part.providerOptions) } : filePart(part),
        )
        messages.push({ role: 'user', content, ...cache })
        break
      }
      case 'assistant': {
        let text = ''
        let reasoning = ''
        const details: Json[] = []
        const toolCalls: Json[] = []
        for (const part of message.content) {
          if (part.type === 'text') text += part.text
          else if (part.type === 'reasoning') {
            reasoning += part.text
            const own = gatewayOptions(part.providerOptions)
            const partDetails = own.reasoningDetails ?? own.reasoning_details
            if (Array.isArray(partDetails)) details.push(...partDetails)
          } else if (part.type === 'tool-call' && !part.providerExecuted) {
            toolCalls.push({ id: part.toolCallId, type: 'function', function: { name: part.toolName, arguments: JSON.stringify(part.input ?? {}) } })
          }
        }
        messages.push({
          role: 'assistant',
          content: text || (toolCalls.length ? null : ''),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          ...(reasoning ? { reasoning } : {}),
          ...(details.length ? { reasoning_details: details } : {}),
          ...cache,
        })
        break
      }
      case 'tool':
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue
          messages.push({ role: 'tool', tool_call_id: part.toolCallId, content: toolOutputText(part.output), ...cache })
        }
        break
    }
  }
  return messages
}
