import type { CallOptions } from './call-options'

/** A client's own API that a provider can be called in, unchanged (docs/native.md): OpenAI's Responses, Anthropic's Messages. */
export type NativeApi = 'responses' | 'messages'

/** One event of a native stream: its type (the `event:` name, else the data's `type`) and its data. */
export interface NativeEvent {
  type: string
  data: Record<string, unknown>
}

/**
 * Calls of a native API: the body is the client's, with the provider's model id; `headers` are the client's headers
 * of that API (Anthropic's `anthropic-version`, `anthropic-beta`), of which the provider passes on those it declares
 * (docs/native.md).
 */
export interface NativeCalls {
  /** A whole answer: the provider's JSON. Throws GatewayError on failure. */
  whole(body: Record<string, unknown>, options: CallOptions, headers?: Record<string, string>): Promise<Record<string, unknown>>
  /** A streamed answer: resolves once the provider accepted it, then yields its events (an error event is thrown as a GatewayError). */
  stream(body: Record<string, unknown>, options: CallOptions, headers?: Record<string, string>): Promise<AsyncIterable<NativeEvent>>
}
