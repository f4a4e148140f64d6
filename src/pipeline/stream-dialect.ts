import type { GatewayError } from '../errors'
import type { ChunkIterator, UpstreamUsage } from '../contracts'
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

/** What a dialect sends for one step: one piece (the bytes of an SSE event, or an in-process chunk), several, or nothing. */
export type StreamOutput<T> = T | readonly T[] | undefined

/**
 * How one API's stream is read and written (docs/native.md#streaming): chat's chunks, or a provider's native events
 * passed on; `B` is what the stream's billing gives its end (the amounts its usage shows); `T` what goes out (bytes
 * over HTTP, typed chunks to the in-process client: docs/first-party.md). One dialect per request: it may keep state.
 */
export interface StreamDialect<C, B = unknown, T = Uint8Array> {
  /** The provider opened the stream: the attempt that serves it. */
  opened(attempt: Attempt): void
  /** Notes what the chunk tells the billing. */
  account(chunk: C, tally: StreamTally): void
  /** What passes the chunk on; undefined when nothing goes out for it now (read on). */
  forward(chunk: C): T | undefined
  /** What tells the client the stream failed after it began. */
  fail(error: GatewayError): T | undefined
  /** What ends the stream, once it is billed (`billed`) or its hold released (undefined). */
  finish(billed: B | undefined): Promise<StreamOutput<T>> | StreamOutput<T>
  /** What keeps a waiting client's connection alive; default an SSE comment (`: service processing`), for bytes only. */
  keepAlive?(): T | undefined
  /** What ends a stream whose end could not be written (its billing or `finish` threw); default nothing. */
  cut?(): Promise<T | undefined> | T | undefined
}

/** A provider's stream once it sent its first chunk: the attempt that serves it and how to read on. */
export interface OpenedStream<C> {
  attempt: Attempt
  /** The attempts made until this one served (retries and fallbacks included). */
  tries: number
  iterator: ChunkIterator<C>
  first: IteratorResult<C>
  /** When the first chunk arrived (the gateway's clock). */
  firstAt: number
}
