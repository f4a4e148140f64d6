import type { GatewayError } from '../errors'
import { parseServerSentEvents } from './sse'
import type { NativeEvent, UpstreamSource } from '../contracts'
import { upstreamError } from './upstream-error'

/**
 * A native API's events from an event stream's bytes (docs/native.md#streaming): each event's data parsed, its type
 * the `event:` name or else the data's `type`; an event the provider's `errorOf` names a failure is thrown as that
 * GatewayError. An event that is not JSON is a malformed_response; a stream with no event at all too.
 */
export async function* nativeEvents(
  body: AsyncIterable<Uint8Array>,
  provider: UpstreamSource,
  errorOf: (event: NativeEvent) => GatewayError | undefined,
): AsyncIterable<NativeEvent> {
  let count = 0
  for await (const sse of parseServerSentEvents(body)) {
    let data: Record<string, unknown>
    try {
      data = JSON.parse(sse.data)
    } catch {
      throw upstreamError(provider, 'malformed_response', sse.data.slice(0, 200))
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw upstreamError(provider, 'malformed_response', sse.data.slice(0, 200))
    const event: NativeEvent = { type: sse.event ?? (typeof data.type === 'string' ? data.type : 'message'), data }
    const failure = errorOf(event)
    if (failure) throw failure
    count++
    yield event
  }
  if (!count) throw upstreamError(provider, 'malformed_response', 'the event stream ended without an event')
}
