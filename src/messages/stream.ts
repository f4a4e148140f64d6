import type { ChatStreamRenderer } from '../chat/result'
import { stringifyExact } from '../http/exact-json'
import { MessageEvents } from './events'

/*
 * Chat's typed stream parts (docs/chat.md#streaming) → Anthropic's event stream (docs/messages.md#streaming), one chat
 * chunk at a time at the client's pace: `event: <type>\ndata: <json>\n\n`. A keep-alive is a `ping`; after an error
 * event nothing more goes out (the chat stream still ends, billed as it ended).
 */

const encoder = new TextEncoder()

/** One event in Anthropic's SSE format. */
export const sseEvent = (event: Record<string, unknown>): string => `event: ${event.type as string}\ndata: ${stringifyExact(event)}\n\n`

// Anthropic's events as the bytes of one write; undefined when there are none.
const written = (events: Record<string, unknown>[]): Uint8Array | undefined => {
  if (!events.length) return undefined
  let text = ''
  for (const event of events) text += sseEvent(event)
  return encoder.encode(text)
}

/**
 * Writes one chat stream as Anthropic's events (docs/messages.md#streaming); `stops` are the request's stop sequences,
 * `modelName` the answer's `model` for the gateway id of the model that served.
 */
export function messageEventsRenderer(stops: string[] | undefined, modelName: (served: string) => string = (served) => served): ChatStreamRenderer {
  const events = new MessageEvents(stops, modelName)
  return {
    part: (chunk) => written(events.chunk(chunk)),
    end: () => written(events.end()),
    cut: () => written(events.end()),
    keepAlive: () => written(events.keepAlive()),
  }
}
