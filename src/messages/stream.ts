import { MessageEvents } from './events'
import { parseExact } from '../http/exact-json'
import { stringifyExact } from '../http/exact-json'

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
  const decoder = new TextDecoder()
  const events = new MessageEvents(stops)
  let buffer = ''

  // The events of every complete SSE block in the buffer.
  const translate = (final: boolean): string => {
    let text = ''
    let at = buffer.indexOf('\n\n')
    while (at !== -1 || (final && buffer)) {
      const block = at === -1 ? buffer : buffer.slice(0, at)
      buffer = at === -1 ? '' : buffer.slice(at + 2)
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) for (const event of events.keepAlive()) text += sseEvent(event)
        else if (line.startsWith('data: ')) {
          const data = line.slice(6)
          const out = data === '[DONE]' ? events.end() : events.chunk(parseExact(data))
          for (const event of out) text += sseEvent(event)
        }
      }
      at = buffer.indexOf('\n\n')
    }
    return text
  }

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) {
            buffer += decoder.decode()
            let text = translate(true)
            for (const event of events.end()) text += sseEvent(event)
            if (text) controller.enqueue(encoder.encode(text))
            return controller.close()
          }
          buffer += decoder.decode(value, { stream: true })
          const text = translate(false)
          if (text) return controller.enqueue(encoder.encode(text))
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  )
}
