import type { BilledChat } from './billing'
import type { shapeChoice } from './shape'

/** A whole chat completion as docs/chat.md#the-answer shows it, but its usage (built from what was billed where it is written). */
export interface ChatCompletion {
  id: string
  provider: string
  object: 'chat.completion'
  created: number
  model: string
  service_tier?: unknown
  system_fingerprint: unknown
  choices: ReturnType<typeof shapeChoice>[]
}

/** What the pipeline gives for a whole chat answer: the completion under its generation id, and what it was billed. */
export interface ChatCompletionResult {
  generationId: string
  completion: ChatCompletion
  billed: BilledChat
}

/**
 * One part of chat's stream as the pipeline gives it (docs/chat.md#streaming): a chunk of the provider's answer, the
 * error chunk of a stream that failed after it began (`error`, `finish_reason: "error"`), or the usage chunk once it
 * was billed (`choices: []`, `usage`).
 */
export interface ChatCompletionChunk {
  id: string
  object: 'chat.completion.chunk'
  created: number
  provider?: string
  model?: string
  choices: Record<string, unknown>[]
  usage?: Record<string, unknown>
  error?: { code: number; message: string; metadata?: Record<string, unknown> }
  [field: string]: unknown
}

/**
 * How chat's typed stream parts reach a client: written as chat's SSE, or as another API's events (docs/native.md), or
 * handed over as they are to the in-process client (`T` the chunk itself: docs/first-party.md).
 */
export interface ChatStreamRenderer<T = Uint8Array> {
  /** What goes out for one part; undefined when nothing goes out for it now. */
  part(chunk: ChatCompletionChunk): T | undefined
  /** What goes out after the last part (it may wait: the Responses API stores the answer first). */
  end(): Promise<T | undefined> | T | undefined
  /** What ends a stream whose end could not be written (its billing failed); default nothing. */
  cut?(): Promise<T | undefined> | T | undefined
  /** What keeps a waiting client's connection alive; default an SSE comment. */
  keepAlive?(): T | undefined
}

/** How an API writes chat's results at the edge: a whole completion as its answer, a stream through a renderer. */
export interface ChatRendering {
  /** The response for a whole, billed completion. */
  whole(result: ChatCompletionResult): Promise<Response> | Response
  /** A renderer for one stream (it may keep state). */
  stream(): ChatStreamRenderer
}
