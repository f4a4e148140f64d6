import type { ChatStreamRenderer } from '../chat/result'
import { stringifyExact } from '../http/exact-json'
import { newItemId } from './ids'
import { eventLogprobsOf, outcomeOf, partLogprobsOf, type ResponseFrame, responseObject, shownOutput, usageOf, wantsLogprobs } from './output'
import { reasoningItem } from './whole'
import { type Json, objectOf, objectsOf } from './json'
import { namespacedNames, responsesCallName } from './namespaces'

const encoder = new TextEncoder()

/** How a translated stream ended: the final Response object and the full output items (what is stored). */
export interface StreamEnd {
  response: Json
  output: Json[]
}

// A content part of a streamed message: its text (or refusal) and, for text, its logprobs in the part's shape.
interface Part {
  kind: 'output_text' | 'refusal'
  index: number
  text: string
  logprobs: Json[]
}

// The output item being streamed: reasoning, a message (its parts, the last one open), or a function call.
interface OpenItem {
  kind: 'reasoning' | 'message' | 'function_call'
  index: number
  id: string
  text: string
  details: Json[]
  call?: { call_id: string; name: string; namespace?: string }
  parts: Part[]
  part?: Part
}

/** The `error` of a failed Response object from chat's error chunk (docs/chat.md#errors-before-and-after-the-first-byte). */
export const responseErrorOf = (error: Json): Json => ({
  code: error.code === 429 ? 'rate_limit_exceeded' : 'server_error',
  message: String(error.message ?? 'The response failed'),
  ...(error.metadata ? { metadata: error.metadata } : {}),
})

/**
 * Writes chat's typed stream parts (chat chunks, the usage chunk, then the end; docs/chat.md#streaming) as the
 * Responses API's events, numbered by `sequence_number` (docs/responses.md#streaming): response.created and
 * response.in_progress, then per output item its added / delta / done events, then response.completed,
 * response.incomplete or response.failed. `finish` runs (storing the response) before that last event. Keep-alives are
 * chat's SSE comments; the client's pace holds chat's stream back.
 */
export function responseEventsRenderer(frame: ResponseFrame, finish: (end: StreamEnd) => Promise<void>): ChatStreamRenderer {
  let sequence = 0
  let started = false
  let ended = false
  let open: OpenItem | undefined
  const output: Json[] = []
  const calls = new Map<number, OpenItem>()
  let finishReason: string | null = null
  let usage: Json | undefined
  let failure: Json | undefined
  let pending: Uint8Array[] = []
  const logprobs = wantsLogprobs(frame.request)
  const names = namespacedNames(frame.request.tools)

  const event = (type: string, fields: Json) =>
    pending.push(encoder.encode(`event: ${type}\ndata: ${stringifyExact({ type, ...fields, sequence_number: sequence++ })}\n\n`))
  const snapshot = (status: string) => responseObject(frame, { status, output: [], usage: null })

  const start = (chunk: Json) => {
    if (started) return
    started = true
    if (typeof chunk.model === 'string') frame.model = chunk.model
    if (typeof chunk.provider === 'string') frame.provider = chunk.provider
    event('response.created', { response: snapshot('in_progress') })
    event('response.in_progress', { response: snapshot('in_progress') })
  }

  // A message's part as content_part.done, output_item.done and the Response object show it.
  const partOf = (part: Part): Json =>
    part.kind === 'refusal'
      ? { type: 'refusal', refusal: part.text }
      : { type: 'output_text', text: part.text, annotations: [], ...(logprobs ? { logprobs: part.logprobs } : {}) }

  // Ends the message's open part: response.output_text.done or response.refusal.done, then response.content_part.done.
  const closePart = (item: OpenItem) => {
    const part = item.part
    if (!part) return
    item.part = undefined
    const at = { item_id: item.id, output_index: item.index, content_index: part.index }
    if (part.kind === 'refusal') event('response.refusal.done', { ...at, refusal: part.text })
    else event('response.output_text.done', { ...at, text: part.text, logprobs: eventLogprobsOf(part.logprobs) })
    event('response.content_part.done', { ...at, part: partOf(part) })
  }

  // The message's part of that kind: the open one, or a new one at the next content_index (the open one ends first).
  const openPart = (item: OpenItem, kind: Part['kind']): Part => {
    if (item.part?.kind === kind) return item.part
    closePart(item)
    const part: Part = { kind, index: item.parts.length, text: '', logprobs: [] }
    item.parts.push(part)
    item.part = part
    event('response.content_part.added', {
      item_id: item.id,
      output_index: item.index,
      content_index: part.index,
      part: kind === 'refusal' ? { type: 'refusal', refusal: '' } : { type: 'output_text', text: '', annotations: [], ...(logprobs ? { logprobs: [] } : {}) },
    })
    return part
  }

  // Ends the item being streamed with its done events; `status` is the message's (completed, or incomplete).
  const close = (status: 'completed' | 'incomplete') => {
    const item = open
    if (!item) return
    open = undefined
    const at = { item_id: item.id, output_index: item.index }
    let done: Json
    if (item.kind === 'reasoning') {
      if (item.text) {
        event('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text })
        event('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: item.text } })
      }
      done = reasoningItem(item.id, item.text, item.details)
    } else if (item.kind === 'message') {
      closePart(item)
      done = { id: item.id, type: 'message', role: 'assistant', status, content: item.parts.map(partOf) }
    } else {
      event('response.function_call_arguments.done', { ...at, name: item.call!.name, arguments: item.text })
      done = { id: item.id, type: 'function_call', ...item.call, arguments: item.text, status: 'completed' }
    }
    output[item.index] = done
    event('response.output_item.done', { output_index: item.index, item: shownOutput([done], frame.request)[0] })
  }

  // Opens a new output item (closing the one before), announcing it with response.output_item.added.
  const begin = (kind: OpenItem['kind'], call?: OpenItem['call']): OpenItem => {
    close('completed')
    const prefix = kind === 'reasoning' ? 'rs' : kind === 'message' ? 'msg' : 'fc'
    const item: OpenItem = { kind, index: output.length, id: newItemId(prefix, frame.id), text: '', details: [], call, parts: [] }
    output.push({})
    open = item
    const added =
      kind === 'reasoning'
        ? { id: item.id, type: 'reasoning', summary: [] }
        : kind === 'message'
          ? { id: item.id, type: 'message', role: 'assistant', status: 'in_progress', content: [] }
          : { id: item.id, type: 'function_call', ...call, arguments: '', status: 'in_progress' }
    event('response.output_item.added', { output_index: item.index, item: added })
    return item
  }

  // One chunk's delta; `entries` are its choice's logprobs (chat's `logprobs.content`), kept when `include` asks for them.
  const onDelta = (delta: Json, entries: unknown) => {
    const details = Array.isArray(delta.reasoning_details) ? (delta.reasoning_details as Json[]) : []
    const thought = typeof delta.reasoning === 'string' ? delta.reasoning : ''
    if (thought || details.length) {
      const item = open?.kind === 'reasoning' ? open : begin('reasoning')
      item.details.push(...details)
      if (thought) {
        const at = { item_id: item.id, output_index: item.index, summary_index: 0 }
        if (!item.text) event('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } })
        item.text += thought
        event('response.reasoning_summary_text.delta', { ...at, delta: thought })
      }
    }
    if (typeof delta.content === 'string' && delta.content) {
      const item = open?.kind === 'message' ? open : begin('message')
      const part = openPart(item, 'output_text')
      const pieces = logprobs ? partLogprobsOf(entries) : []
      part.text += delta.content
      part.logprobs.push(...pieces)
      event('response.output_text.delta', {
        item_id: item.id,
        output_index: item.index,
        content_index: part.index,
        delta: delta.content,
        logprobs: eventLogprobsOf(pieces),
      })
    }
    if (typeof delta.refusal === 'string' && delta.refusal) {
      const item = open?.kind === 'message' ? open : begin('message')
      const part = openPart(item, 'refusal')
      part.text += delta.refusal
      event('response.refusal.delta', { item_id: item.id, output_index: item.index, content_index: part.index, delta: delta.refusal })
    }
    for (const piece of Array.isArray(delta.tool_calls) ? (delta.tool_calls as Json[]) : []) {
      const index = typeof piece.index === 'number' ? piece.index : 0
      let item = calls.get(index)
      if (!item) {
        item = begin('function_call', { call_id: String(piece.id ?? ''), ...responsesCallName(String(objectOf(piece.function).name ?? ''), names) })
        calls.set(index, item)
      }
      const args = objectOf(piece.function).arguments
      if (typeof args === 'string' && args) {
        item.text += args
        // A call's arguments after another item began (interleaved calls) are kept without events.
        if (open === item) event('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: args })
        else output[item.index] = { ...output[item.index], arguments: item.text }
      }
    }
  }

  const onChunk = (chunk: Json) => {
    start(chunk)
    if (chunk.error) failure = objectOf(chunk.error)
    if (chunk.usage) usage = objectOf(chunk.usage)
    for (const choice of objectsOf(chunk.choices)) {
      if ((choice.index ?? 0) !== 0) continue
      if (choice.delta) onDelta(objectOf(choice.delta), objectOf(choice.logprobs).content)
      if (choice.finish_reason) finishReason = String(choice.finish_reason)
    }
  }

  const end = async (cut: boolean) => {
    ended = true
    if (cut && !failure) failure = { code: 502, message: 'The stream ended before the response was complete' }
    start({})
    const outcome = failure ? { status: 'failed' as const, incomplete_details: null } : outcomeOf(finishReason)
    close(outcome.status === 'completed' ? 'completed' : 'incomplete')
    const response = responseObject(frame, {
      ...outcome,
      output: shownOutput(output, frame.request),
      usage: usageOf(usage),
      error: failure ? responseErrorOf(failure) : null,
    })
    await finish({ response, output })
    event(`response.${outcome.status}`, { response })
  }

  // The events written since the last write, as the bytes of one write.
  const flush = (): Uint8Array | undefined => {
    if (!pending.length) return undefined
    const bytes = pending.length === 1 ? pending[0] : Buffer.concat(pending)
    pending = []
    return bytes
  }

  return {
    part(chunk) {
      if (ended) return undefined
      onChunk(chunk)
      return flush()
    },
    async end() {
      if (!ended) await end(false)
      return flush()
    },
    async cut() {
      if (!ended) await end(true)
      return flush()
    },
  }
}
