import type { H3Event } from 'h3'
import type { ChatCompletionChunk } from '../chat/result'
import type { ChatCompletionObject, ChatUsageObject } from '../chat/render'
import type { SessionUser } from '../stores/sessions'

/**
 * Who an in-process client acts as (docs/first-party.md#the-in-process-client): the host session of a request (its
 * h3 event, or its web Request: a key it sends wins), a host user (created on first use, as a session's), a gateway
 * user by id, or an API key.
 */
export type ClientPrincipal = H3Event | { event: H3Event } | { request: Request } | { user: SessionUser | string } | { userId: string } | { key: string }

/** Options of one in-process call. */
export interface InProcessCallOptions {
  /** Aborting it stops the upstream call; what was generated is billed (docs/money.md). */
  signal?: AbortSignal
  /**
   * Headers the call would have sent over HTTP: app attribution (`HTTP-Referer`, `X-Title`), `X-Request-Id`, Anthropic's
   * versions, and `X-Provider-API-Keys` (the caller's own provider keys for this call: docs/byok.md#keys-for-one-request).
   */
  headers?: Record<string, string>
}

/**
 * A streamed answer: an async iterable of the same objects the SSE carries (chat's chunks, or the events of the
 * Messages and Responses APIs). Leaving the loop (or `abort()`) stops the upstream call and bills what was generated.
 */
export interface InProcessStream<T> extends AsyncIterable<T> {
  /** The generation's id (as `X-Generation-Id` says over HTTP), when known before the first part. */
  readonly generationId?: string
  /** Stops the stream: the upstream call is stopped, and what was generated is billed. */
  abort(): void
}

/** A tool call's piece in a streamed delta (OpenAI's shape: the id and name come first, the arguments in pieces). */
export interface ChatToolCallDelta {
  index: number
  id?: string
  type?: 'function'
  function?: { name?: string; arguments?: string }
}

/** One choice of a streamed chunk, as chat's SSE carries it (docs/chat.md#streaming). */
export interface ChatChunkChoice {
  index: number
  delta: {
    role?: 'assistant'
    content?: string | null
    reasoning?: string | null
    refusal?: string | null
    tool_calls?: ChatToolCallDelta[]
    [field: string]: unknown
  }
  finish_reason: string | null
  native_finish_reason?: string | null
  [field: string]: unknown
}

/** A streamed chat chunk as the in-process client gives it: the object each `data:` event of chat's SSE carries. */
export type ChatStreamChunk = Omit<ChatCompletionChunk, 'choices' | 'usage'> & { choices: ChatChunkChoice[]; usage?: ChatUsageObject }

/** A chat completion request, as POST /chat/completions takes it (docs/chat.md). */
export type ChatCompletionRequest = { model?: string; models?: string[]; messages: unknown[]; stream?: boolean | null } & Record<string, unknown>

/** Chat completions, OpenAI-shaped: whole, or streamed with `stream: true`. */
export interface ChatCompletions {
  create(body: ChatCompletionRequest & { stream: true }, options?: InProcessCallOptions): Promise<InProcessStream<ChatStreamChunk>>
  create(body: ChatCompletionRequest & { stream?: false | null }, options?: InProcessCallOptions): Promise<ChatCompletionObject>
  create(body: ChatCompletionRequest, options?: InProcessCallOptions): Promise<ChatCompletionObject | InProcessStream<ChatCompletionChunk>>
}

/** An API served whole as a JSON object, or streamed as its events (`stream: true`). */
export interface StreamingApi {
  create(body: Record<string, unknown> & { stream: true }, options?: InProcessCallOptions): Promise<InProcessStream<Record<string, unknown>>>
  create(body: Record<string, unknown> & { stream?: false | null }, options?: InProcessCallOptions): Promise<Record<string, unknown>>
  create(body: Record<string, unknown>, options?: InProcessCallOptions): Promise<Record<string, unknown> | InProcessStream<Record<string, unknown>>>
}

/**
 * The gateway called from the host's own server code, without HTTP (docs/first-party.md#the-in-process-client): the
 * same validation, holds, routing, fallbacks, records, metrics, spans and logs as the HTTP routes; errors thrown as
 * the gateway's `GatewayError`.
 */
export interface GatewayClient {
  chat: { completions: ChatCompletions }
  embeddings: { create(body: Record<string, unknown>, options?: InProcessCallOptions): Promise<Record<string, unknown>> }
  /** OpenAI's Responses API (docs/responses.md). */
  responses: StreamingApi
  /** Anthropic's Messages API (docs/messages.md). */
  messages: StreamingApi
  /** The user, org and key the client acts as (`GET /me`'s identity). */
  identity(): Promise<{ user_id: string; org_id: string; email: string; via: 'key' | 'session' }>
}
