import { errorMessageOf } from './checks'
import { createSseParser, parseServerSentEvents, type ServerSentEvent } from './sse'
import type { AudioUsage, ChunkIterator, UpstreamChunk, UpstreamSpeech, UpstreamSource } from '../contracts'
import { upstreamError } from './upstream-error'

/** OpenAI's chat chunks from an event stream's bytes, up to `[DONE]` (the body is read to its end for keep-alive). */
export function openaiChunks(body: AsyncIterable<Uint8Array>, provider: UpstreamSource): AsyncIterable<UpstreamChunk> {
  return { [Symbol.asyncIterator]: () => openaiChunkIterator(body[Symbol.asyncIterator](), provider) }
}

// One plain iterator over the body with the SSE parser inside: a chunk whose event is already in hand is answered at
// once (one promise), not through an async generator's queue and a `for await` over the body (three per chunk).
// Otherwise as such a generator: one call at a time (later calls wait their turn), a failure ends it (the body
// returned when the failure is not the body's own), `return()` returns the body.
function openaiChunkIterator(source: ChunkIterator<Uint8Array>, provider: UpstreamSource): ChunkIterator<UpstreamChunk> {
  const parser = createSseParser()
  let events: ServerSentEvent[] = []
  let at = 0
  let chunks = 0
  // `[DONE]` came: the rest of the body is read and dropped, so that the connection goes back to the keep-alive pool.
  let done = false
  // The body ended (its last events are in hand), or the iterator ended (nothing more is read).
  let ended = false
  let finished = false
  const chunkOf = (data: string): UpstreamChunk => {
    let chunk: UpstreamChunk & { error?: unknown }
    try {
      chunk = JSON.parse(data)
    } catch {
      throw upstreamError(provider, 'malformed_response', data.slice(0, 200))
    }
    if (chunk?.error) throw upstreamError(provider, 'upstream_error', errorMessageOf(JSON.stringify(chunk)))
    if (!chunk || !Array.isArray(chunk.choices)) throw upstreamError(provider, 'malformed_response', data.slice(0, 200))
    return chunk
  }
  // The next chunk among the events in hand; undefined when they are used up. A bad chunk ends the iterator (and
  // returns the body still being read).
  const take = (): UpstreamChunk | undefined => {
    while (at < events.length) {
      const event = events[at++]
      if (done) continue
      if (event.data === '[DONE]') {
        done = true
        continue
      }
      try {
        const chunk = chunkOf(event.data)
        chunks++
        return chunk
      } catch (error) {
        finished = true
        if (!ended) void source.return?.()?.catch(() => undefined)
        throw error
      }
    }
    return undefined
  }
  const finish = (): IteratorResult<UpstreamChunk> => {
    finished = true
    if (!chunks) throw upstreamError(provider, 'malformed_response', 'the event stream ended without a chunk')
    return { value: undefined, done: true }
  }
  // The body's next bytes into the parser (its end: the last events in hand).
  const feed = (next: IteratorResult<Uint8Array>) => {
    at = 0
    if (next.done) {
      ended = true
      events = parser.end()
    } else events = parser.push(next.value)
  }
  // Reads the body until a chunk is complete, or it ends.
  let reading = false
  const read = async (): Promise<IteratorResult<UpstreamChunk>> => {
    reading = true
    try {
      for (;;) {
        const chunk = take()
        if (chunk !== undefined) return { value: chunk, done: false }
        if (ended) return finish()
        let next: IteratorResult<Uint8Array>
        try {
          next = await source.next()
        } catch (error) {
          finished = true // the body's own failure: nothing to return
          throw error
        }
        if (finished) return { value: undefined, done: true } // returned meanwhile
        feed(next)
      }
    } finally {
      reading = false
    }
  }
  const step = (): Promise<IteratorResult<UpstreamChunk>> => {
    if (finished) return Promise.resolve({ value: undefined, done: true })
    try {
      const chunk = take()
      if (chunk !== undefined) return Promise.resolve({ value: chunk, done: false })
      if (ended) return Promise.resolve(finish())
    } catch (error) {
      return Promise.reject(error)
    }
    return read()
  }
  // The call still waiting for the body, when one is: a call meanwhile waits its turn (as a generator's would).
  let waiting: Promise<unknown> | undefined
  const queue = (result: Promise<IteratorResult<UpstreamChunk>>) => {
    waiting = result
    const clear = () => {
      if (waiting === result) waiting = undefined
    }
    void result.then(clear, clear)
    return result
  }
  return {
    // A chunk (or the end) already in hand, at once: among the events parsed, else from body bytes the body has in
    // hand (a socket read often holds several chunks); undefined when the body must be waited for, or a call is.
    nextNow() {
      if (waiting || reading) return undefined
      if (finished) return { value: undefined, done: true }
      for (;;) {
        const chunk = take()
        if (chunk !== undefined) return { value: chunk, done: false }
        if (ended) return finish()
        let next: IteratorResult<Uint8Array> | undefined
        try {
          next = source.nextNow?.()
        } catch (error) {
          finished = true // the body's own failure: nothing to return
          throw error
        }
        if (next === undefined) return undefined
        feed(next)
      }
    },
    next() {
      if (waiting) return queue(waiting.then(step, step))
      const result = step()
      return reading ? queue(result) : result
    },
    return() {
      // After a call still waiting for the body (as a generator's return waits for its running step).
      const stop = async (): Promise<IteratorResult<UpstreamChunk>> => {
        if (!finished) {
          finished = true
          if (!ended) await source.return?.()
        }
        return { value: undefined, done: true }
      }
      return waiting ? waiting.then(stop, stop) : stop()
    },
  }
}

// OpenAI's speech events: `speech.audio.delta` with base64 `audio`, then `speech.audio.done` with `usage`.
/** A speech whose audio comes from OpenAI's speech events (base64 deltas, then usage). */
export function speechFromEvents(body: AsyncIterable<Uint8Array>, provider: UpstreamSource, id: string | undefined): UpstreamSpeech {
  const speech: UpstreamSpeech = { audio: audioOf(), ...(id ? { id } : {}) }
  async function* audioOf(): AsyncIterable<Uint8Array> {
    for await (const event of parseServerSentEvents(body)) {
      if (event.data === '[DONE]') return
      let payload: { type?: string; audio?: unknown; usage?: AudioUsage; token_usage?: AudioUsage; error?: unknown }
      try {
        payload = JSON.parse(event.data)
      } catch {
        throw upstreamError(provider, 'malformed_response', event.data.slice(0, 200))
      }
      if (payload?.error) throw upstreamError(provider, 'upstream_error', errorMessageOf(event.data))
      const type = payload?.type ?? event.event
      if (type === 'speech.audio.delta' && typeof payload.audio === 'string') {
        const bytes = Buffer.from(payload.audio, 'base64')
        yield new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      } else if (type === 'speech.audio.done') {
        const usage = payload.usage ?? payload.token_usage
        if (usage && typeof usage === 'object') speech.usage = usage
      }
    }
  }
  return speech
}
