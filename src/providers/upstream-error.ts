import { GatewayError, type ErrorStatus } from '../errors'

/** OpenRouter's names for why an upstream call failed (docs/errors.md#upstream-errors). */
export type UpstreamErrorType =
  | 'rate_limit_exceeded'
  | 'provider_overloaded'
  | 'provider_unavailable'
  | 'context_length_exceeded'
  | 'authentication'
  | 'timeout'
  | 'invalid_request'
  | 'malformed_response'
  | 'content_filter'
  | 'upstream_error'

const RETRYABLE = new Set<UpstreamErrorType>([
  'rate_limit_exceeded',
  'provider_overloaded',
  'provider_unavailable',
  'timeout',
  'malformed_response',
  'upstream_error',
])

// Errors of a connection that failed or closed early (kept apart from a provider's 5xx: they are retried on the same provider).
const connectionErrors = new WeakSet<GatewayError>()

/** A failed upstream call as a GatewayError: status for the client, and provider_name, error_type, raw in metadata. */
export function upstreamError(
  provider: string,
  type: UpstreamErrorType,
  raw: string,
  options: { status?: ErrorStatus; headers?: Record<string, string>; cause?: unknown; connection?: boolean } = {},
): GatewayError {
  const status: ErrorStatus =
    options.status ??
    (type === 'timeout' ? 408 : type === 'rate_limit_exceeded' ? 429 : type === 'invalid_request' || type === 'context_length_exceeded' ? 400 : 502)
  const message = {
    rate_limit_exceeded: `${provider} is rate limiting requests`,
    provider_overloaded: `${provider} is overloaded`,
    provider_unavailable: `${provider} is unavailable`,
    context_length_exceeded: `The request is longer than the model's context (${provider})`,
    authentication: `${provider} rejected the gateway's credentials`,
    timeout: `${provider} did not answer in time`,
    invalid_request: `${provider} rejected the request`,
    malformed_response: `${provider} answered something that is not a valid completion`,
    content_filter: `${provider} refused the request on content grounds`,
    upstream_error: `${provider} failed`,
  }[type]
  const error = new GatewayError(status, raw && type === 'invalid_request' ? `${message}: ${raw}` : message, {
    metadata: { provider_name: provider, error_type: type, raw: raw.slice(0, 2000) },
    headers: options.headers,
    cause: options.cause,
  })
  if (options.connection) connectionErrors.add(error)
  return error
}

/** Parses an upstream's JSON answer; a malformed_response error carrying the start of the text when it is not JSON. */
export function parseUpstreamJson<T>(provider: string, text: string): T {
  try {
    return JSON.parse(text) as T
  } catch {
    throw upstreamError(provider, 'malformed_response', text.slice(0, 200))
  }
}

/** True when another provider may well succeed where this error came from (docs/routing.md#what-counts-as-a-provider-failure). */
export function isRetryable(error: unknown): boolean {
  const type = (error as GatewayError)?.metadata?.error_type
  return typeof type === 'string' && RETRYABLE.has(type as UpstreamErrorType)
}

/**
 * True when the same provider is worth asking again after a pause (docs/routing.md): a 429, a 503 or 529 (overloaded),
 * or a connection that failed or closed before the answer was complete.
 */
export function isRetryableOnSameProvider(error: unknown): boolean {
  const type = (error as GatewayError)?.metadata?.error_type
  return type === 'rate_limit_exceeded' || type === 'provider_overloaded' || connectionErrors.has(error as GatewayError)
}

/** The wait an upstream asked for (`Retry-After` in seconds or as a date, or `retry-after-ms`), in ms; null when none. */
export function retryAfterMs(error: unknown, now: number = Date.now()): number | null {
  const headers = (error as GatewayError)?.headers ?? {}
  const ms = Number(headers['retry-after-ms'])
  if (headers['retry-after-ms'] && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers['retry-after']
  if (!value) return null
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

/** The upstream's wait hints (`retry-after`, `retry-after-ms`), to keep on its error; undefined when it gave none. */
export function retryHeaders(headers: Record<string, string>): Record<string, string> | undefined {
  const kept: Record<string, string> = {}
  if (headers['retry-after']) kept['retry-after'] = headers['retry-after']
  if (headers['retry-after-ms']) kept['retry-after-ms'] = headers['retry-after-ms']
  return Object.keys(kept).length ? kept : undefined
}

/** Maps an upstream HTTP error status and its body's message to an UpstreamError. */
export function fromHttpStatus(provider: string, status: number, raw: string, headers: Record<string, string> = {}): GatewayError {
  if (status === 429) return upstreamError(provider, 'rate_limit_exceeded', raw, { headers: retryHeaders(headers) })
  if (status === 401 || status === 403) return upstreamError(provider, 'authentication', raw)
  if (status === 408 || status === 504) return upstreamError(provider, 'timeout', raw)
  if (status === 413 || /context.length|maximum context|too many tokens|context window/i.test(raw)) {
    if (status < 500) return upstreamError(provider, 'context_length_exceeded', raw)
  }
  if (status === 503 || status === 529) return upstreamError(provider, 'provider_overloaded', raw, { headers: retryHeaders(headers) })
  if (status >= 500) return upstreamError(provider, 'provider_unavailable', raw)
  if (status === 404) return upstreamError(provider, 'invalid_request', raw || 'model or route not found upstream')
  return upstreamError(provider, 'invalid_request', raw)
}
