import { gatewayResponse } from './http/respond'
/** The stable machine-readable error slugs of docs/errors.md#statuses, keyed by HTTP status. */
export const errorTypes = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
  501: 'not_implemented',
  502: 'upstream_error',
  503: 'no_provider_available',
} as const

/** A status the gateway answers errors with. */
export type ErrorStatus = keyof typeof errorTypes
/** A slug of the error envelope's `type` field. */
export type ErrorType = (typeof errorTypes)[ErrorStatus]

/** The JSON body of every error response. */
export interface ErrorEnvelope {
  error: {
    code: number
    type: ErrorType
    message: string
    param?: string
    metadata?: Record<string, unknown>
  }
}

/** Extra details of a GatewayError. */
export interface GatewayErrorDetails {
  /** The offending input (a body field path, query or path parameter). */
  param?: string
  /** Safe extra facts for the client (never a secret). */
  metadata?: Record<string, unknown>
  /** Response headers to send with the error (Allow, Retry-After, …). */
  headers?: Record<string, string>
  /** The underlying cause, kept for logs only. */
  cause?: unknown
}

/** The one error type of the gateway: thrown anywhere, answered as the envelope of docs/errors.md#the-envelope. */
export class GatewayError extends Error {
  readonly status: ErrorStatus
  readonly type: ErrorType
  readonly param?: string
  readonly metadata?: Record<string, unknown>
  readonly headers?: Record<string, string>

  constructor(status: ErrorStatus, message: string, details: GatewayErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.status = status
    this.type = errorTypes[status]
    this.param = details.param
    this.metadata = details.metadata
    this.headers = details.headers
  }

  override get name(): string {
    return 'GatewayError'
  }

  /** The error as its JSON envelope. */
  toJSON(): ErrorEnvelope {
    const error: ErrorEnvelope['error'] = { code: this.status, type: this.type, message: this.message }
    if (this.param !== undefined) error.param = this.param
    if (this.metadata !== undefined) error.metadata = this.metadata
    return { error }
  }
}

/** 400 invalid_request, optionally naming the offending input. */
export const invalidRequest = (message: string, param?: string): GatewayError => new GatewayError(400, message, { param })

/** 401 unauthorized. */
export const unauthorized = (message: string): GatewayError => new GatewayError(401, message)

/** 404 not_found. */
export const notFound = (message = 'Not found'): GatewayError => new GatewayError(404, message)

/** 501 not_implemented, for a route whose capability is not built yet. */
export const notImplemented = (what: string): GatewayError => new GatewayError(501, `${what} is not implemented in this version of model-gateway`)

/** True for a GatewayError (also across bundled copies of the class). */
export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError || (value instanceof Error && value.name === 'GatewayError' && 'status' in value && 'type' in value)
}

/** Turns anything thrown into a GatewayError; unknown errors become a 500 that reveals nothing. */
export function toGatewayError(value: unknown, requestId: string): GatewayError {
  if (isGatewayError(value)) return value
  const status = (value as { status?: unknown })?.status
  // h3 raises its own HTTPError for a few framework-level failures (malformed URL, …).
  if (value instanceof Error && value.name === 'HTTPError' && typeof status === 'number' && status in errorTypes && status < 500) {
    return new GatewayError(status as ErrorStatus, value.message, { cause: value })
  }
  return new GatewayError(500, `Internal error (request ${requestId})`, { metadata: { request_id: requestId }, cause: value })
}

/** The body of an error in an API's own shape (Anthropic's, OpenAI's Responses), for routes that speak one (docs/errors.md). */
export type ErrorBodyShape = (error: GatewayError, requestId: string) => unknown

/** Builds the JSON error response for a GatewayError: the envelope, or the route's own shape. */
export function errorResponse(error: GatewayError, requestId: string, shape?: ErrorBodyShape): Response {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(error.headers ?? {})) headers[name.toLowerCase()] = value
  headers['content-type'] = 'application/json; charset=utf-8'
  headers['cache-control'] = 'no-store'
  return gatewayResponse(JSON.stringify(shape ? shape(error, requestId) : error.toJSON()), error.status, headers, requestId)
}
