import { GatewayError, type ErrorStatus } from '../errors'

/** OpenRouter's names for why an upstream call failed (decisions.md §1). */
export type UpstreamErrorType =
  | 'rate_limit_exceeded' | 'provider_overloaded' | 'provider_unavailable' | 'context_length_exceeded'
  | 'authentication' | 'timeout' | 'invalid_request' | 'malformed_response' | 'content_filter' | 'upstream_error'

const RETRYABLE = new Set<UpstreamErrorType>(['rate_limit_exceeded', 'provider_overloaded', 'provider_unavailable', 'timeout', 'malformed_response', 'upstream_error'])

/** A failed upstream call as a GatewayError: status for the client, and provider_name, error_type, raw in metadata. */
export function upstreamError(provider: string, type: UpstreamErrorType, raw: string, options: { status?: ErrorStatus; headers?: Record<string, string>; cause?: unknown } = {}): GatewayError {
  const status: ErrorStatus = options.status ?? (type === 'timeout' ? 408 : type === 'rate_limit_exceeded' ? 429 : type === 'invalid_request' || type === 'context_length_exceeded' ? 400 : 502)
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
  return new GatewayError(status, raw && type === 'invalid_request' ? `${message}: ${raw}` : message, {
    metadata: { provider_name: provider, error_type: type, raw: raw.slice(0, 2000) },
    headers: options.headers,
    cause: options.cause,
  })
}

/** Parses an upstream's JSON answer; a malformed_response error carrying the start of the text when it is not JSON. */
export function parseUpstreamJson<T>(provider: string, text: string): T {
  try {
    return JSON.parse(text) as T
  } catch {
    throw upstreamError(provider, 'malformed_response', text.slice(0, 200))
  }
}

/** True when another provider may well succeed where this error came from (decisions.md §8). */
export function isRetryable(error: unknown): boolean {
  const type = (error as GatewayError)?.metadata?.error_type
  return typeof type === 'string' && RETRYABLE.has(type as UpstreamErrorType)
}

/** Maps an upstream HTTP error status and its body's message to an UpstreamError. */
export function fromHttpStatus(provider: string, status: number, raw: string, headers: Record<string, string> = {}): GatewayError {
  if (status === 429) return upstreamError(provider, 'rate_limit_exceeded', raw, { headers: headers['retry-after'] ? { 'retry-after': headers['retry-after'] } : undefined })
  if (status === 401 || status === 403) return upstreamError(provider, 'authentication', raw)
  if (status === 408 || status === 504) return upstreamError(provider, 'timeout', raw)
  if (status === 413 || /context.length|maximum context|too many tokens|context window/i.test(raw)) {
    if (status < 500) return upstreamError(provider, 'context_length_exceeded', raw)
  }
  if (status === 503 || status === 529) return upstreamError(provider, 'provider_overloaded', raw)
  if (status >= 500) return upstreamError(provider, 'provider_unavailable', raw)
  if (status === 404) return upstreamError(provider, 'invalid_request', raw || 'model or route not found upstream')
  return upstreamError(provider, 'invalid_request', raw)
}
