import { chunkError } from './errors'
import type { Json } from './json'
import { gatewayMetadata, METADATA_KEY } from './metadata'
import type { ChatUsage } from './spec-version'
import { detailsText } from './chat-result'

/**
 * The gateway's chat chunks (docs/chat.md#streaming) as the AI SDK's stream parts: the response's metadata once,
 * reasoning, text and tool input each opened, streamed and closed, the tool calls whole when they end, an error
 * chunk as an `error` part, then `finish` with the usage and cost of the last chunk
 * (docs/first-party.md#the-ai-sdk-provider).
 */

/** A stream part both specifications share, and `finish`, whose fields each version writes its own way. */
export type StreamPart =
  | { type: 'stream-start'; warnings: Json[] }
  | { type: 'response-metadata'; id?: string; modelId?: string; timestamp?: Date }
  | { type: 'text-start' | 'text-end' | 'reasoning-start'; id: string }
  | { type: 'reasoning-end'; id: string; providerMetadata?: Record<string, Record<string, Json>> }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-start'; id: string; toolName: string }
  | { type: 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-end'; id: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }
  | { type: 'raw'; rawValue: unknown }
  | { type: 'error'; error: unknown }
  | { type: 'finish'; finishReason: Json; usage: Json; providerMetadata: Record<string, Record<string, Json>> }

/** How a version writes the end of a stream: its finish reason and usage. */
export interface StreamFinish {
  finishReason(raw: string | undefined): Json
  usage(usage: ChatUsage | undefined): Json
}

/** A tool call being streamed, by its index in the chunks. */
interface OpenToolCall {
  id: string
  name: string
  args: string
  started: boolean
}

/** What a stream of chunks has shown so far. */
export class ChatStreamState {
  private metadataSent = false
  private textOpen = false
  private reasoningOpen = false
  /** The id of the reasoning part open or last opened: one per stretch of reasoning (`reasoning-0`, `reasoning-1`, …). */
  private reasoningId = ''
  private reasonings = 0
  private reasoningDetails: Json[] = []
  /** How many of the details a `reasoning-end` has carried so far. */
  private detailsAttached = 0
  private readonly tools = new Map<number, OpenToolCall>()
  private finish: string | undefined
  private usage: Record<string, Json> | undefined
  private generationId: string | undefined
  private provider: unknown
  private toolCount = 0

  constructor(
    private readonly version: StreamFinish,
    private readonly url: string,
    private readonly requestBody: unknown,
    private readonly raw: boolean,
  ) {}

  /** The parts one chunk gives. */
  parts(chunk: Record<string, Json>): StreamPart[] {
    const parts: StreamPart[] = []
    if (this.raw) parts.push({ type: 'raw', rawValue: chunk })
    if (!this.metadataSent && typeof chunk.id === 'string') {
      this.metadataSent = true
      this.generationId = chunk.id
      parts.push({
        type: 'response-metadata',
        id: chunk.id,
        ...(typeof chunk.model === 'string' ? { modelId: chunk.model } : {}),
        ...(typeof chunk.created === 'number' ? { timestamp: new Date(chunk.created * 1000) } : {}),
      })
    }
    if (typeof chunk.provider === 'string') this.provider = chunk.provider
    if (chunk.usage) this.usage = chunk.usage
    if (chunk.error) {
      parts.push({ type: 'error', error: chunkError(chunk.error, this.url, this.requestBody) })
      this.finish = 'error'
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined
    if (!choice) return parts
    const delta = choice.delta ?? {}
    const details = Array.isArray(delta.reasoning_details) ? delta.reasoning_details : []
    this.reasoningDetails.push(...details)
    const reasoning = typeof delta.reasoning === 'string' && delta.reasoning ? delta.reasoning : delta.reasoning == null ? detailsText(details) : ''
    if (reasoning) {
      parts.push(...this.openReasoning())
      parts.push({ type: 'reasoning-delta', id: this.reasoningId, delta: reasoning })
    }
    const text = (typeof delta.content === 'string' ? delta.content : '') + (typeof delta.refusal === 'string' ? delta.refusal : '')
    if (text) {
      parts.push(...this.endReasoning())
      if (!this.textOpen) parts.push({ type: 'text-start', id: 'text-0' })
      this.textOpen = true
      parts.push({ type: 'text-delta', id: 'text-0', delta: text })
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) parts.push(...this.toolDelta(call))
    if (choice.finish_reason) this.finish = choice.finish_reason
    return parts
  }

  /**
   * The parts that end the stream: what is still open closed, the reasoning details no reasoning carried yet (a
   * provider's signatures that came without text) as a reasoning part of their own, the tool calls whole (unless the
   * stream failed: a call cut short is not one to run), then `finish`.
   */
  end(): StreamPart[] {
    const parts = this.endReasoning()
    if (this.reasoningDetails.length > this.detailsAttached) parts.push(...this.openReasoning(), ...this.endReasoning())
    if (this.textOpen) parts.push({ type: 'text-end', id: 'text-0' })
    this.textOpen = false
    for (const call of this.tools.values()) {
      if (!call.started) parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name })
      parts.push({ type: 'tool-input-end', id: call.id })
      if (this.finish !== 'error') parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.args || '{}' })
    }
    this.tools.clear()
    parts.push({
      type: 'finish',
      finishReason: this.version.finishReason(this.finish),
      usage: this.version.usage(this.usage as ChatUsage | undefined),
      providerMetadata: { [METADATA_KEY]: gatewayMetadata(this.generationId, this.provider, this.usage) },
    })
    return parts
  }

  /** Ends the stream on an error thrown while reading it: an `error` part, then the end, finished as an error. */
  failed(error: unknown): StreamPart[] {
    this.finish = 'error'
    return [{ type: 'error', error }, ...this.end()]
  }

  private openReasoning(): StreamPart[] {
    if (this.reasoningOpen) return []
    this.reasoningOpen = true
    this.reasoningId = `reasoning-${this.reasonings++}`
    return [{ type: 'reasoning-start', id: this.reasoningId }]
  }

  /** Closes the reasoning open, with the details that came since the last one closed. */
  private endReasoning(): StreamPart[] {
    if (!this.reasoningOpen) return []
    this.reasoningOpen = false
    const details = this.reasoningDetails.slice(this.detailsAttached)
    this.detailsAttached = this.reasoningDetails.length
    return [{ type: 'reasoning-end', id: this.reasoningId, ...(details.length ? { providerMetadata: { [METADATA_KEY]: { reasoningDetails: details } } } : {}) }]
  }

  /** One tool call delta: the call opened once its name is known, then its arguments streamed. */
  private toolDelta(delta: Record<string, Json>): StreamPart[] {
    const index = typeof delta.index === 'number' ? delta.index : this.tools.size
    let call = this.tools.get(index)
    if (!call) {
      call = { id: typeof delta.id === 'string' && delta.id ? delta.id : `call-${this.toolCount}`, name: '', args: '', started: false }
      this.toolCount++
      this.tools.set(index, call)
    }
    const parts: StreamPart[] = []
    if (typeof delta.function?.name === 'string' && delta.function.name) call.name ||= delta.function.name
    if (!call.started && call.name) {
      parts.push(...this.endReasoning())
      call.started = true
      parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name })
      if (call.args) parts.push({ type: 'tool-input-delta', id: call.id, delta: call.args })
    }
    const args = typeof delta.function?.arguments === 'string' ? delta.function.arguments : ''
    if (args) {
      call.args += args
      if (call.started) parts.push({ type: 'tool-input-delta', id: call.id, delta: args })
    }
    return parts
  }
}
