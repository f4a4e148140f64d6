import { MessageEvents } from './events'
import { parseExact, stringifyExact } from '../http/exact-json'
import { createSseParser, type ServerSentEvent } from '../providers/sse'

/*
 * serveChat's event stream (docs/chat.md#streaming) → Anthropic's (docs/messages.md#streaming), one chat chunk at a
 * time at the client's pace: `event: <type>\ndata: <json>\n\n`. Cancelling it cancels the chat stream, which stops
 * the provider and bills what was generated, as for a chat client that leaves.
 */

const encoder = new TextEncoder()

/** One event in Anthropic's SSE format. */
export const sseEvent = (event: Record<string, unknown>): string => `event: ${event.type as string}\ndata: ${stringifyExact(event)}\n\n`

/** Translates a chat SSE body into Anthropic's event stream; after an error event the chat stream is read to its end (so it is billed as it ended). */
export function toMessageEvents(body: ReadableStream<Uint8Array>, stops: string[] | undefined): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  const parser = createSseParser({ comments: true })
  const events = new MessageEvents(stops)

  // Anthropic's events for chat's: a keep-alive comment is a ping, [DONE] the end.
  const translate = (chat: ServerSentEvent[]): string => {
    let text = ''
    for (const { data, comment } of chat) {
      const out = comment !== undefined ? events.keepAlive() : data === '[DONE]' ? events.end() : events.chunk(parseExact(data))
      for (const event of out) text += sseEvent(event)
    }
    return text
  }

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) {
            let text = translate(parser.end())
            for (const event of events.end()) text += sseEvent(event)
            if (text) controller.enqueue(encoder.encode(text))
            return controller.close()
          }
          const text = translate(parser.push(value))
          if (text) return controller.enqueue(encoder.encode(text))
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  )
}
