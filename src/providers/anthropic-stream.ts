import { parseServerSentEvents } from './sse'
import { anthropicError, REASONING_FORMAT, reasoningDetail, usageFrom, type AnthropicUsage, type Block } from './anthropic-translate'
import type { UpstreamChunk, UpstreamSource } from '../contracts'
import { upstreamError } from './upstream-error'

type Json = Record<string, unknown>

interface BlockState {
  block: Block
  /** The tool call's index among the answer's tool calls. */
  toolIndex?: number
  /** Some input_json_delta arrived for this tool_use block. */
  argumentsSent?: boolean
  thinking: string
  signature: string
  /** The `index` of the block's `reasoning_details` entry (thinking and redacted_thinking blocks, in order). */
  detail?: number
}

/**
 * Anthropic's event stream → OpenAI chunks.
 *
 * message_start (id, model, input usage) · content_block_start / _delta / _stop per block · message_delta (stop_reason,
 * cumulative usage) · message_stop; `ping` is skipped, unknown event types too (the API may add some). Text deltas
 * become `delta.content`; a tool_use block becomes `delta.tool_calls[{ index, id, type, function: { name, arguments: '' } }]`
 * then its input_json_delta pieces as arguments. message_delta gives the finish chunk (Anthropic's stop_reason),
 * message_stop the usage chunk (`choices: []`). An `error` event is thrown as the mapped GatewayError.
 *
 * Thinking is streamed as OpenRouter streams it (docs/reasoning.md): each thinking delta is one chunk holding the
 * piece twice, as `delta.reasoning` and as a `delta.reasoning_details` entry `{ type: 'reasoning.text', text, format,
 * index }` of the same text, so a client that reads either (or both, preferring the details, as
 * `@openrouter/ai-sdk-provider` does) shows it once; the block's signature follows once, at its end, as an entry with
 * empty text. Pieces of one block share its `index`: merged by index they give the block back exactly, signature
 * included. A blank line between two thinking blocks goes as a chunk of `delta.reasoning` only. A redacted_thinking
 * block is one `reasoning.encrypted` entry. With the reasoning excluded nothing is streamed, and each block ends with
 * one entry holding its (omitted, so empty) text and its signature.
 *
 * The chunk with `delta.role` waits for the first content block: an error event right after message_start then
 * fails the attempt before anything reached the client, so the gateway can still try another provider.
 */
export async function* anthropicChunks(
  body: AsyncIterable<Uint8Array>,
  provider: UpstreamSource,
  options: { excludeReasoning: boolean },
): AsyncIterable<UpstreamChunk> {
  const created = Math.floor(Date.now() / 1000)
  let id: string | undefined
  let model: string | undefined
  let usage: AnthropicUsage = {}
  let started = false
  let finished = false
  let tools = 0
  let details = 0
  let thoughtBefore = false
  const blocks = new Map<number, BlockState>()

  const chunk = (delta: Json, finishReason: string | null = null): UpstreamChunk => ({
    id,
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  })
  const start = function* (): Iterable<UpstreamChunk> {
    if (started) return
    started = true
    yield chunk({ role: 'assistant', content: '' })
  }

  for await (const event of parseServerSentEvents(body)) {
    let data: Json
    try {
      data = JSON.parse(event.data)
    } catch {
      throw upstreamError(provider, 'malformed_response', event.data.slice(0, 200))
    }
    const type = (data?.type as string | undefined) ?? event.event
    switch (type) {
      case 'ping':
        break
      case 'error': {
        const error = data.error as { type?: string; message?: string } | undefined
        throw anthropicError(provider, undefined, { type: error?.type, message: error?.message ?? event.data.slice(0, 500) })
      }
      case 'message_start': {
        const message = data.message as { id?: string; model?: string; usage?: AnthropicUsage } | undefined
        id = message?.id
        model = message?.model
        usage = { ...(message?.usage ?? {}) }
        break
      }
      case 'content_block_start': {
        yield* start()
        const block = data.content_block as Block
        const state: BlockState = { block, thinking: '', signature: '' }
        if (block.type === 'thinking' || block.type === 'redacted_thinking') state.detail = details++
        blocks.set(data.index as number, state)
        if (block.type === 'text' && block.text) yield chunk({ content: block.text })
        else if (block.type === 'thinking') {
          state.signature = (block.signature as string | undefined) ?? ''
          if (block.thinking) yield* thought(state, block.thinking as string)
        } else if (block.type === 'tool_use') {
          state.toolIndex = tools++
          yield chunk({ tool_calls: [{ index: state.toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] })
        }
        break
      }
      case 'content_block_delta': {
        const state = blocks.get(data.index as number)
        const delta = data.delta as { type: string; text?: string; thinking?: string; signature?: string; partial_json?: string }
        if (!state) throw upstreamError(provider, 'malformed_response', `content_block_delta for block ${String(data.index)} before its start`)
        if (delta.type === 'text_delta' && delta.text) yield chunk({ content: delta.text })
        else if (delta.type === 'thinking_delta' && delta.thinking) yield* thought(state, delta.thinking)
        else if (delta.type === 'signature_delta') state.signature = delta.signature ?? ''
        else if (delta.type === 'input_json_delta' && state.toolIndex !== undefined && delta.partial_json) {
          state.argumentsSent = true
          yield chunk({ tool_calls: [{ index: state.toolIndex, function: { arguments: delta.partial_json } }] })
        }
        break
      }
      case 'content_block_stop': {
        const state = blocks.get(data.index as number)
        if (!state) break
        if (state.toolIndex !== undefined && !state.argumentsSent) {
          yield chunk({ tool_calls: [{ index: state.toolIndex, function: { arguments: JSON.stringify(state.block.input ?? {}) } }] })
        }
        if (state.detail === undefined) break
        if (state.block.type === 'thinking' && !options.excludeReasoning) {
          // The pieces went out as they came: only the signature is left to send.
          if (state.signature)
            yield chunk({
              reasoning_details: [{ type: 'reasoning.text', text: '', signature: state.signature, format: REASONING_FORMAT, index: state.detail }],
            })
          break
        }
        const detail =
          state.block.type === 'thinking'
            ? reasoningDetail({ ...state.block, thinking: state.thinking, signature: state.signature }, state.detail)
            : reasoningDetail(state.block, state.detail)
        if (detail) yield chunk({ reasoning_details: [detail] })
        break
      }
      case 'message_delta': {
        yield* start()
        for (const [key, value] of Object.entries((data.usage as AnthropicUsage | undefined) ?? {}))
          if (value !== null && value !== undefined) usage[key] = value
        const delta = data.delta as { stop_reason?: string | null; stop_details?: { explanation?: string | null } | null } | undefined
        const stopReason = delta?.stop_reason ?? null
        const refusal = stopReason === 'refusal' && delta?.stop_details?.explanation ? { refusal: delta.stop_details.explanation } : {}
        if (stopReason) {
          finished = true
          yield chunk(refusal, stopReason)
        }
        break
      }
      case 'message_stop':
        yield* start()
        if (!finished) yield chunk({}, 'end_turn')
        yield { id, created, model, choices: [], usage: usageFrom(usage) }
        return
      default:
        break // an event type added after this was written
    }
  }
  throw upstreamError(provider, 'provider_unavailable', 'the event stream ended before message_stop')

  // A piece of thinking as `delta.reasoning` and the same text as its block's reasoning_details entry (left out when
  // the client excluded the reasoning); a blank line, in `delta.reasoning` alone, before each block after the first.
  function* thought(state: BlockState, text: string): Iterable<UpstreamChunk> {
    const first = state.thinking === ''
    state.thinking += text
    if (options.excludeReasoning) return
    if (first && thoughtBefore) yield chunk({ reasoning: '\n\n' })
    thoughtBefore = true
    yield chunk({ reasoning: text, reasoning_details: [{ type: 'reasoning.text', text, format: REASONING_FORMAT, index: state.detail }] })
  }
}
