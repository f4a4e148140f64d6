import type { GatewayError } from '../errors'
import type { UpstreamUsage } from '../contracts'
import type { Attempt } from '../routing/plan'

/** What a stream's chunks tell its billing, noted by the dialect as they pass (docs/money.md). */
export interface StreamTally {
  /** The usage the provider reported (the last report counts). */
  reported?: UpstreamUsage
  /** The provider's id of the answer. */
  upstreamId: string | null
  /** The provider's own finish reason. */
  nativeFinishReason: string | null
  /** Characters of generated text so far (what an estimate bills). */
  generatedChars: number
}

/**
 * How one API's stream is read and written (docs/native.md#streaming): chat's chunks, or a provider's native events
 * passed on; `B` is what the stream's billing gives its end (the amounts its usage shows). One dialect per request: it
 * may keep state.
 */
export interface StreamDialect<C, B = unknown> {
  /** The provider opened the stream: the attempt that serves it. */
  opened(attempt: Attempt): void
  /** Notes what the chunk tells the billing. */
  account(chunk: C, tally: StreamTally): void
  /** The bytes that pass the chunk on; undefined when nothing goes out for it now (read on). */
  forward(chunk: C): Uint8Array | undefined
  /** The bytes that tell the client the stream failed after it began. */
  fail(error: GatewayError): Uint8Array | undefined
  /** The bytes that end the stream, once it is billed (`billed`) or its hold released (undefined). */
  finish(billed: B | undefined): Promise<Uint8Array | undefined> | Uint8Array | undefined
  /** The bytes that keep a waiting client's connection alive; default an SSE comment (`: service processing`). */
  keepAlive?(): Uint8Array | undefined
  /** The bytes that end a stream whose end could not be written (its billing or `finish` threw); default none. */
  cut?(): Promise<Uint8Array | undefined> | Uint8Array | undefined
}

/** A provider's stream once it sent its first chunk: the attempt that serves it and how to read on. */
export interface OpenedStream<C> {
  attempt: Attempt
  /** The attempts made until this one served (retries and fallbacks included). */
  tries: number
  iterator: AsyncIterator<C>
  first: IteratorResult<C>
  /** When the first chunk arrived (the gateway's clock). */
  firstAt: number
}
