import { parseServerSentEvents } from '../providers/sse'
import type { InProcessStream } from './types'

/**
 * A stream's body as the in-process client hands it over (docs/first-party.md#the-in-process-client): read at the
 * caller's pace; leaving the loop, or `abort()`, cancels the body, which stops the upstream call and bills what was
 * generated, as a client leaving an HTTP stream does.
 */
export function inProcessStream<T>(body: ReadableStream<T>, abort: AbortController, detach: () => void, generationId?: string): InProcessStream<T> {
  let taken = false
  return {
    generationId,
    abort: () => abort.abort(),
    async *[Symbol.asyncIterator]() {
      if (taken) throw new TypeError('model-gateway: an in-process stream can be read once')
      taken = true
      const reader = body.getReader()
      // The caller's abort stops a read waiting on the provider too.
      const cancel = () => void reader.cancel(abort.signal.reason).catch(() => undefined)
      abort.signal.addEventListener('abort', cancel, { once: true })
      let done = false
      try {
        for (;;) {
          const next = await reader.read()
          if (next.done) {
            done = true
            return
          }
          yield next.value
        }
      } finally {
        abort.signal.removeEventListener('abort', cancel)
        if (!done) await reader.cancel().catch(() => undefined)
        reader.releaseLock()
        detach()
      }
    },
  }
}

/** The events of an SSE answer (Messages', Responses') as objects: each event's JSON data, typed by its `type`. */
export function eventsOf(response: Response, abort: AbortController, detach: () => void, generationId?: string): InProcessStream<Record<string, unknown>> {
  const iterator = parseServerSentEvents(response.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
  const events = new ReadableStream<Record<string, unknown>>(
    {
      // One event per pull: the caller's pace holds the body (and the provider) back.
      async pull(controller) {
        for (;;) {
          const next = await iterator.next()
          if (next.done) return controller.close()
          if (!next.value.data || next.value.data === '[DONE]') continue
          return controller.enqueue(JSON.parse(next.value.data) as Record<string, unknown>)
        }
      },
      cancel: async () => void (await iterator.return?.()),
    },
    { highWaterMark: 0 },
  )
  return inProcessStream(events, abort, detach, generationId)
}
