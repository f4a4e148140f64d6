import { errorMessageOf } from './checks'
import { createSseParser, parseServerSentEvents } from './sse'
import type { AudioUsage, UpstreamChunk, UpstreamSpeech, UpstreamSource } from '../contracts'
import { upstreamError } from './upstream-error'

/** OpenAI's chat chunks from an event stream's bytes, up to `[DONE]` (the body is read to its end for keep-alive). */
// One generator over the body with the SSE parser inside (not a generator of events under a generator of chunks).
export async function* openaiChunks(body: AsyncIterable<Uint8Array>, provider: UpstreamSource): AsyncIterable<UpstreamChunk> {
  const parser = createSseParser()
  let chunks = 0
  let done = false
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
  for await (const bytes of body) {
    for (const event of parser.push(bytes)) {
      // After [DONE], read on to the end of the body, so that the connection goes back to the keep-alive pool.
      if (done) continue
      if (event.data === '[DONE]') {
        done = true
        continue
      }
      chunks++
      yield chunkOf(event.data)
    }
  }
  for (const event of parser.end()) {
    if (done || event.data === '[DONE]') break
    chunks++
    yield chunkOf(event.data)
  }
  if (!chunks) throw upstreamError(provider, 'malformed_response', 'the event stream ended without a chunk')
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
