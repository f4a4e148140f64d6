import { anthropicError } from './errors'
import { stopOf, type StopOf } from './stop-reason'
import { messagesUsage } from './usage'

/*
 * Chat chunks (docs/chat.md#streaming) → Anthropic's stream events (docs/messages.md#streaming): message_start (at the
 * first chunk), then for each content block content_block_start, its deltas (text_delta, thinking_delta,
 * signature_delta, input_json_delta) and content_block_stop; message_delta (stop_reason, usage) when the usage chunk
 * arrives, then message_stop. Keep-alives become `ping`; an error chunk becomes an `error` event and ends the events.
 */

type Json = Record<string, unknown>
type Open = { kind: 'text' | 'thinking' | 'tool'; index: number; key: number }
type ToolDelta = { index?: number; id?: string; function?: { name?: string; arguments?: string } }
type Detail = { type?: string; text?: string; summary?: string; signature?: string; data?: string; index?: number }

/** One chat stream's translation: feed it chunks, keep-alives and the end; it answers the events to send. */
export class MessageEvents {
  private started = false
  private ended = false
  private blocks = 0
  private open?: Open
  private readonly tools = new Map<number, { block: number; id: string }>()
  private sawDetails = false
  private stop?: StopOf
  private refusal: string | null = null
  private out: Json[] = []

  constructor(
    private readonly stops: string[] | undefined,
    /** The answer's `model` for the gateway id of the model that served (src/messages/model-id.ts). */
    private readonly modelName: (served: string) => string = (served) => served,
  ) {}

  /** True once message_stop or an error event was sent: nothing more goes out. */
  get done(): boolean {
    return this.ended
  }

  /** A keep-alive comment of the chat stream → a ping. */
  keepAlive(): Json[] {
    return this.ended ? [] : [{ type: 'ping' }]
  }

  /** One chat chunk → its events. */
  chunk(chunk: Json): Json[] {
    if (this.ended) return []
    this.out = []
    const error = chunk.error as { code?: number; message?: string; metadata?: Record<string, unknown> } | undefined
    if (error) {
      this.ended = true
      return [{ type: 'error', error: anthropicError(error.code ?? 500, error.message ?? 'The stream failed', { metadata: error.metadata }) }]
    }
    if (!this.started) this.begin(chunk)
    const choice = ((chunk.choices as Json[] | undefined) ?? []).find((c) => (c.index ?? 0) === 0)
    if (choice) this.choice(choice)
    if (chunk.usage && !(chunk.choices as unknown[] | undefined)?.length) this.finish(chunk.usage as Json)
    return this.out
  }

  /** The chat stream ended ([DONE], or the body ended): closes the message if the usage chunk never came. */
  end(): Json[] {
    if (this.ended || !this.started) return []
    this.out = []
    this.finish(undefined)
    return this.out
  }

  private begin(chunk: Json) {
    this.started = true
    const message = {
      id: chunk.id,
      type: 'message',
      role: 'assistant',
      model: typeof chunk.model === 'string' ? this.modelName(chunk.model) : chunk.model,
      ...(chunk.provider ? { provider: chunk.provider } : {}),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      // The counts are known at the end only: message_delta carries them all (docs/messages.md#streaming).
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    }
    this.out.push({ type: 'message_start', message }, { type: 'ping' })
  }

  private choice(choice: Json) {
    const delta = (choice.delta ?? {}) as Json
    const details = Array.isArray(delta.reasoning_details) ? (delta.reasoning_details as Detail[]) : []
    if (details.length) this.sawDetails = true
    for (const detail of details) this.detail(detail)
    // Reasoning as text alone: a provider without details, never the separator between details' blocks.
    if (!details.length && !this.sawDetails && typeof delta.reasoning === 'string' && delta.reasoning) this.thinking(-1, delta.reasoning, undefined)
    if (typeof delta.content === 'string' && delta.content) this.text(delta.content)
    for (const call of (delta.tool_calls as ToolDelta[] | undefined) ?? []) this.tool(call)
    if (typeof delta.refusal === 'string' && delta.refusal) this.refusal = (this.refusal ?? '') + delta.refusal
    if (choice.finish_reason) this.stop = stopOf(choice.finish_reason as string, choice.native_finish_reason, choice.stop_reason, this.stops)
  }

  private detail(detail: Detail) {
    const key = detail.index ?? 0
    if (detail.type === 'reasoning.text') this.thinking(key, detail.text ?? '', detail.signature)
    else if (detail.type === 'reasoning.summary') this.thinking(key, detail.summary ?? '', undefined)
    else if (detail.type === 'reasoning.encrypted' && typeof detail.data === 'string') {
      this.openBlock('thinking', -2, { type: 'redacted_thinking', data: detail.data })
      this.close()
    }
  }

  private thinking(key: number, text: string, signature: string | undefined) {
    if (this.open?.kind !== 'thinking' || this.open.key !== key) this.openBlock('thinking', key, { type: 'thinking', thinking: '', signature: '' })
    const index = this.open!.index
    if (text) this.out.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: text } })
    if (signature) this.out.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } })
  }

  private text(text: string) {
    if (this.open?.kind !== 'text') this.openBlock('text', 0, { type: 'text', text: '' })
    this.out.push({ type: 'content_block_delta', index: this.open!.index, delta: { type: 'text_delta', text } })
  }

  private tool(call: ToolDelta) {
    const key = call.index ?? 0
    const known = this.tools.get(key)
    if (!known || (call.id && call.id !== known.id)) {
      const id = call.id ?? `toolu_${key}`
      this.openBlock('tool', key, { type: 'tool_use', id, name: call.function?.name ?? '', input: {}, caller: { type: 'direct' } })
      this.tools.set(key, { block: this.open!.index, id })
    }
    const pieces = call.function?.arguments
    if (pieces) this.out.push({ type: 'content_block_delta', index: this.tools.get(key)!.block, delta: { type: 'input_json_delta', partial_json: pieces } })
  }

  private openBlock(kind: Open['kind'], key: number, block: Json) {
    this.close()
    this.open = { kind, index: this.blocks++, key }
    this.out.push({ type: 'content_block_start', index: this.open.index, content_block: block })
  }

  private close() {
    if (!this.open) return
    this.out.push({ type: 'content_block_stop', index: this.open.index })
    this.open = undefined
  }

  private finish(usage: Json | undefined) {
    this.close()
    const stop = this.stop ?? stopOf('stop', undefined, undefined, this.stops)
    const details = stop.stop_reason === 'refusal' ? { type: 'refusal', category: null, explanation: this.refusal } : null
    this.out.push({ type: 'message_delta', delta: { ...stop, stop_details: details }, usage: messagesUsage(usage) }, { type: 'message_stop' })
    this.ended = true
  }
}
