import type { GatewayError } from '../errors'

/*
 * Errors in Anthropic's shape (docs/messages.md#errors): `{ type: 'error', error: { type, message }, request_id }`, with
 * Anthropic's error type for the status; the gateway's `param` and `metadata` are kept beside them.
 */

const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

// A provider's error (metadata.error_type, docs/errors.md#upstream-errors) says more than its status: an overloaded
// provider is a 502 of the gateway, and Anthropic's overloaded_error.
const BY_UPSTREAM: Record<string, string> = { provider_overloaded: 'overloaded_error', rate_limit_exceeded: 'rate_limit_error', timeout: 'timeout_error' }

/** Anthropic's error type for an HTTP status and the provider's error type, if any (4xx not listed: invalid_request_error; 5xx: api_error). */
export function anthropicErrorType(status: number, upstreamType?: unknown): string {
  if (typeof upstreamType === 'string' && BY_UPSTREAM[upstreamType]) return BY_UPSTREAM[upstreamType]
  return TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
}

/** The `error` object of Anthropic's error body and stream error event, with the gateway's param and metadata. */
export function anthropicError(status: number, message: string, extra: { param?: string; metadata?: Record<string, unknown> } = {}) {
  return {
    type: anthropicErrorType(status, extra.metadata?.error_type),
    message,
    ...(extra.param !== undefined ? { param: extra.param } : {}),
    ...(extra.metadata !== undefined ? { metadata: extra.metadata } : {}),
  }
}

/** A GatewayError as Anthropic's error body (the route's `errorBody`), with the request's id as Anthropic gives its own. */
export function anthropicErrorBody(error: GatewayError, requestId: string): unknown {
  return { type: 'error', error: anthropicError(error.status, error.message, error), request_id: requestId }
}
