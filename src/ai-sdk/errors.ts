/**
 * The gateway's errors as the AI SDK's `APICallError` (docs/first-party.md#the-ai-sdk-provider), without importing
 * `@ai-sdk/provider` at run time: the AI SDK recognises its errors by the global symbols they carry
 * (`APICallError.isInstance`), so an error with those symbols and its fields is one to it, retried when retryable.
 */

const AI_SDK_ERROR = Symbol.for('vercel.ai.error')
const API_CALL_ERROR = Symbol.for('vercel.ai.error.AI_APICallError')

/** The fields of the AI SDK's APICallError that a gateway error fills. */
export interface GatewayCallErrorInit {
  message: string
  /** The gateway path the call went to, e.g. `/chat/completions` (an in-process call has no URL of its own). */
  url: string
  requestBodyValues: unknown
  statusCode?: number
  /** The gateway's error envelope, as JSON text. */
  responseBody?: string
  /** The gateway's error: `{ code, type, message, metadata }`. */
  data?: unknown
  cause?: unknown
}

/** A gateway error the AI SDK treats as its `APICallError` (`APICallError.isInstance(error)` is true). */
export class GatewayCallError extends Error {
  readonly [AI_SDK_ERROR] = true
  readonly [API_CALL_ERROR] = true
  readonly url: string
  readonly requestBodyValues: unknown
  readonly statusCode?: number
  readonly responseHeaders?: Record<string, string>
  readonly responseBody?: string
  /** Worth retrying: a timeout, a conflict, a rate limit or a server error (as the AI SDK decides for its own). */
  readonly isRetryable: boolean
  readonly data?: unknown

  constructor(init: GatewayCallErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.url = init.url
    this.requestBodyValues = init.requestBodyValues
    this.statusCode = init.statusCode
    this.responseBody = init.responseBody
    this.data = init.data
    const status = init.statusCode
    this.isRetryable = status !== undefined && (status === 408 || status === 409 || status === 429 || status >= 500)
  }

  override get name(): string {
    return 'AI_APICallError'
  }
}

/** An aborted call (the caller's signal): passed on as it is, so the AI SDK sees its own abort. */
const isAbort = (error: unknown): boolean => error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')

/**
 * A rejection of the client as the AI SDK expects it: the gateway's error (a `status`, a `message`, maybe
 * `metadata`, `type`, `param`) becomes a GatewayCallError; an abort and any other error pass unchanged.
 */
export function toCallError(error: unknown, url: string, requestBodyValues: unknown): unknown {
  if (isAbort(error) || !(error instanceof Error)) return error
  const status = (error as { status?: unknown }).status
  if (typeof status !== 'number') return error
  const { type, param, metadata } = error as { type?: unknown; param?: unknown; metadata?: unknown }
  const data = { code: status, type, message: error.message, ...(param === undefined ? {} : { param }), ...(metadata === undefined ? {} : { metadata }) }
  return new GatewayCallError({
    message: error.message,
    url,
    requestBodyValues,
    statusCode: status,
    responseBody: JSON.stringify({ error: data }),
    data,
    cause: error,
  })
}

/** An error chunk of a stream (`error: { code, message }`) as a GatewayCallError, for the stream's `error` part. */
export function chunkError(error: { code?: unknown; message?: unknown; metadata?: unknown }, url: string, requestBodyValues: unknown): GatewayCallError {
  const status = typeof error.code === 'number' ? error.code : undefined
  return new GatewayCallError({
    message: typeof error.message === 'string' ? error.message : 'The stream ended with an error',
    url,
    requestBodyValues,
    statusCode: status,
    responseBody: JSON.stringify({ error }),
    data: error,
  })
}

const NO_SUCH_MODEL_ERROR = Symbol.for('vercel.ai.error.AI_NoSuchModelError')

/** A kind of model the gateway's provider does not make (images, speech, …), as the AI SDK's `NoSuchModelError`. */
export class GatewayNoSuchModelError extends Error {
  readonly [AI_SDK_ERROR] = true
  readonly [NO_SUCH_MODEL_ERROR] = true

  constructor(
    readonly modelId: string,
    readonly modelType: 'languageModel' | 'embeddingModel' | 'imageModel' | 'transcriptionModel' | 'speechModel' | 'rerankingModel',
  ) {
    super(`No such ${modelType}: ${modelId} (the gateway's AI SDK provider makes language and embedding models)`)
  }

  override get name(): string {
    return 'AI_NoSuchModelError'
  }
}
