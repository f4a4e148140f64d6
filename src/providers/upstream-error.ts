import type { UpstreamErrorKind, UpstreamSource } from '../contracts'
import { GatewayError, isGatewayError, type ErrorStatus } from '../errors'

/** What an UpstreamError is made of where the provider's answer or failed connection is read. */
export interface UpstreamErrorInit {
  kind: UpstreamErrorKind
  provider: UpstreamSource
  /** The provider's own words (`metadata.raw`, cut to 2,000 characters); left out of the metadata when undefined. */
  raw?: string
  /** The message, when not the kind's own. */
  message?: string
  /** The status answered, when not the kind's own (docs/errors.md#upstream-errors). */
  status?: ErrorStatus
  /** The upstream's wait hints passed on to the client (`retry-after`, `retry-after-ms`). */
  headers?: Record<string, string>
  /** The wait the provider asked for, in ms; default: read from `headers`. */
  retryAfterMs?: number | null
  /** A connection that failed or closed before the answer was complete (retried on the same provider). */
  connection?: boolean
  /** The underlying cause, kept for logs only. */
  cause?: unknown
}

// Kinds where another provider may well succeed (docs/routing.md#what-counts-as-a-provider-failure).
const RETRYABLE: ReadonlySet<UpstreamErrorKind> = new Set([
  'rate_limit_exceeded',
  'provider_overloaded',
  'provider_unavailable',
  'timeout',
  'malformed_response',
  'upstream_error',
])

// Kinds worth asking the same provider again after a pause: a 429, a 503 or 529 (overloaded).
const SAME_PROVIDER: ReadonlySet<UpstreamErrorKind> = new Set(['rate_limit_exceeded', 'provider_overloaded'])

// The status each kind is answered with (docs/errors.md#upstream-errors).
const statusOf = (kind: UpstreamErrorKind): ErrorStatus =>
  kind === 'timeout'
    ? 408
    : kind === 'rate_limit_exceeded'
      ? 429
      : kind === 'invalid_request' || kind === 'context_length_exceeded' || kind === 'content_filter'
        ? 400
        : 502

const messageOf = (kind: UpstreamErrorKind, provider: string): string =>
  ({
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
  })[kind]

/**
 * A failed upstream call (in the spirit of the AI SDK's `APICallError`): the GatewayError the client sees (status,
 * `metadata.provider_name`, `error_type`, `raw`), and the facts routing reads, set where the error is made: whether
 * another provider may serve (`retryable`), whether the same one is worth asking again after a pause
 * (`retryOnSameProvider`), and the wait it asked for (`retryAfterMs`) (docs/routing.md#retries).
 */
export class UpstreamError extends GatewayError {
  readonly kind: UpstreamErrorKind
  readonly provider: UpstreamSource
  /** True when another provider may well succeed where this one failed. */
  readonly retryable: boolean
  /** True when the same provider is worth asking again after a pause: 429, 503, 529, or a connection that failed. */
  readonly retryOnSameProvider: boolean
  /** The wait the provider asked for (`Retry-After` in seconds or as a date, or `retry-after-ms`), in ms; null when none. */
  readonly retryAfterMs: number | null
  /** True for a connection that failed or closed before the answer was complete. */
  readonly connection: boolean
  /** The provider's own words, as `metadata.raw` shows them. */
  readonly raw: string | undefined

  constructor(init: UpstreamErrorInit) {
    const { kind, provider, raw } = init
    const message = init.message ?? (raw && kind === 'invalid_request' ? `${messageOf(kind, provider.name)}: ${raw}` : messageOf(kind, provider.name))
    const metadata: Record<string, unknown> = { provider_name: provider.name, error_type: kind }
    if (raw !== undefined) metadata.raw = raw.slice(0, 2000)
    super(init.status ?? statusOf(kind), message, { metadata, headers: init.headers, cause: init.cause })
    this.kind = kind
    this.provider = { slug: provider.slug, name: provider.name }
    this.raw = raw
    this.connection = init.connection ?? false
    this.retryable = RETRYABLE.has(kind)
    this.retryOnSameProvider = SAME_PROVIDER.has(kind) || this.connection
    this.retryAfterMs = init.retryAfterMs !== undefined ? init.retryAfterMs : retryAfterMsOf(init.headers ?? {})
  }

  /** The same error with its message and `raw` passed through `scrub` (a secret blanked out); the cause is dropped. */
  scrubbed(scrub: (text: string) => string): UpstreamError {
    return new UpstreamError({
      kind: this.kind,
      provider: this.provider,
      raw: this.raw === undefined ? undefined : scrub(this.raw),
      message: scrub(this.message),
      status: this.status,
      headers: this.headers,
      retryAfterMs: this.retryAfterMs,
      connection: this.connection,
    })
  }
}

const KINDS: ReadonlySet<string> = new Set<UpstreamErrorKind>([...RETRYABLE, 'context_length_exceeded', 'authentication', 'invalid_request', 'content_filter'])

/**
 * The UpstreamError a GatewayError describes: itself, or (a host's own provider written before UpstreamError, which
 * threw a GatewayError naming its kind in `metadata.error_type`) one read from that kind; undefined for any other
 * error. Routing reads the result's fields; the client is answered the error as it was thrown.
 */
export function upstreamErrorOf(error: GatewayError, provider: UpstreamSource): UpstreamError | undefined {
  if (isUpstreamError(error)) return error
  const kind = error.metadata?.error_type
  if (typeof kind !== 'string' || !KINDS.has(kind)) return undefined
  const raw = error.metadata?.raw
  return new UpstreamError({
    kind: kind as UpstreamErrorKind,
    provider,
    message: error.message,
    status: error.status,
    headers: error.headers,
    raw: typeof raw === 'string' ? raw : undefined,
    connection: error.metadata?.connection === true,
  })
}

/** True for an UpstreamError (also across bundled copies of the class). */
export function isUpstreamError(value: unknown): value is UpstreamError {
  return value instanceof UpstreamError || (isGatewayError(value) && 'kind' in value && 'retryable' in value && 'retryOnSameProvider' in value)
}

/** The usual UpstreamError: the kind's status and message, the provider's words in `raw`. */
export function upstreamError(
  provider: UpstreamSource,
  kind: UpstreamErrorKind,
  raw: string,
  options: Omit<UpstreamErrorInit, 'kind' | 'provider' | 'raw'> = {},
): UpstreamError {
  return new UpstreamError({ ...options, kind, provider, raw })
}

/** Parses an upstream's JSON answer; a malformed_response error carrying the start of the text when it is not JSON. */
export function parseUpstreamJson<T>(provider: UpstreamSource, text: string): T {
  try {
    return JSON.parse(text) as T
  } catch {
    throw upstreamError(provider, 'malformed_response', text.slice(0, 200))
  }
}

/** The wait an upstream's headers ask for (`retry-after-ms`, else `Retry-After` in seconds or as a date), in ms; null when none. */
export function retryAfterMsOf(headers: Record<string, string>, now: number = Date.now()): number | null {
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

/** Maps an upstream HTTP error status and its body's message to an UpstreamError (docs/errors.md#upstream-errors). */
export function fromHttpStatus(provider: UpstreamSource, status: number, raw: string, headers: Record<string, string> = {}): UpstreamError {
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
