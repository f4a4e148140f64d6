import type { Logger } from '../logger'
import type { OtelSpan } from '../telemetry/otel'
import type { Tracing } from '../telemetry/tracing'

/** What the line of one request says (docs/operations.md#logs): never a secret, a key only by its hash's first 12 characters. */
export interface RequestLine {
  /** The gateway's own id of the request (unique): what the log keys by. */
  request_id: string
  /** The client's own X-Request-Id, when it sent one (two clients may send the same). */
  client_request_id?: string
  method: string
  path: string
  status?: number
  latency_ms?: number
  org_id?: string
  key?: string
  /** The user of a host session's request (docs/first-party.md). */
  user_id?: string
  /** Set on a call of the in-process client, which has no HTTP request (docs/first-party.md#the-in-process-client). */
  in_process?: true
  generation_id?: string
  model?: string
  provider?: string
  stream?: boolean
  prompt_tokens?: number
  completion_tokens?: number
  cost_eur?: string
  billed_status?: string
}

interface Pending {
  line: RequestLine
  /** The route's path template (`/keys/:hash`), for the metrics. */
  route: string
  /** The request's span, when tracing is on (docs/operations.md#traces). */
  span?: OtelSpan
  /** The GenAI operation its route serves (`chat`, `embeddings`, …), for its attempts' spans. */
  operation?: string
  startedAt: number
  /** The handler, and each stream that outlives it: the line is written when the last of them ends. */
  open: number
}

/**
 * One line per request (docs/operations.md#logs), at info level, once everything the request started has ended: the
 * handler, and a stream it answered until it is billed and closed. Billing adds the generation, model, provider,
 * tokens and cost; `ended` (the metrics) hears of each request too. Only requests in flight are kept; with the silent
 * logger and no metrics, nothing is.
 */
export function createRequestLog(
  logger: Logger,
  now: () => number,
  options: { log: boolean; ended?: (route: string, line: RequestLine, seconds: number) => void; tracing?: Tracing },
) {
  const { tracing } = options
  const enabled = options.log || options.ended !== undefined || tracing !== undefined
  const pending = new Map<string, Pending>()
  const write = (requestId: string, entry: Pending) => {
    if (pending.get(requestId) === entry) pending.delete(requestId)
    entry.line.latency_ms = Math.max(0, now() - entry.startedAt)
    options.ended?.(entry.route, entry.line, entry.line.latency_ms / 1000)
    if (options.log) logger.info('request', entry.line as unknown as Record<string, unknown>)
    if (entry.span && tracing) {
      const status = entry.line.status ?? 500
      entry.span.setAttribute('http.response.status_code', status)
      tracing.end(entry.span, status >= 500 ? { type: String(status), message: `answered ${status}` } : undefined)
    }
  }
  // One part of the request ended (its handler, or a stream): the line is written when nothing of it is left. Bound to
  // its entry, not its id (a client may send the same X-Request-Id twice), and counted once however often it is called.
  const release = (requestId: string, entry: Pending) => {
    let released = false
    return () => {
      if (released) return
      released = true
      if (--entry.open === 0) write(requestId, entry)
    }
  }
  return {
    /**
     * A request arrived at `route` (the handler starts), by the gateway's own `requestId` (never the client's, which two
     * clients may share: it is kept as `client_request_id`); `operation` names what it asks a model to do. Returns what
     * the handler calls when it ends (idempotent).
     */
    begin(requestId: string, method: string, path: string, route: string, operation?: string, clientRequestId?: string): () => void {
      if (!enabled) return () => {}
      const span = tracing?.request(`${method} ${route}`, {
        'http.request.method': method,
        'http.route': route,
        'url.path': path,
        'model_gateway.request_id': requestId,
        ...(clientRequestId ? { 'model_gateway.client_request_id': clientRequestId } : {}),
        ...(operation ? { 'gen_ai.operation.name': operation } : {}),
      })
      const line: RequestLine = clientRequestId
        ? { request_id: requestId, client_request_id: clientRequestId, method, path }
        : { request_id: requestId, method, path }
      const entry: Pending = { line, route, span, operation, startedAt: now(), open: 1 }
      pending.set(requestId, entry)
      return release(requestId, entry)
    },
    /** Adds what is known of the request (its status, caller, billing). */
    note(requestId: string | undefined, fields: Partial<RequestLine>): void {
      const entry = requestId === undefined ? undefined : pending.get(requestId)
      if (!entry) return
      Object.assign(entry.line, fields)
      if (entry.span) entry.span.setAttributes(spanAttributesOf(fields))
    },
    /** The request's span and operation, for its upstream attempts' spans. */
    traceOf(requestId: string): { span?: OtelSpan; operation?: string } | undefined {
      const entry = pending.get(requestId)
      return entry && { span: entry.span, operation: entry.operation }
    },
    /** A stream of the request outlives its handler: the line waits for it too, until the returned function (idempotent) is called. */
    hold(requestId: string): () => void {
      const entry = pending.get(requestId)
      if (!entry) return () => {}
      entry.open++
      return release(requestId, entry)
    },
  }
}

/** The request log of a gateway. */
export type RequestLog = ReturnType<typeof createRequestLog>

// The line's fields as span attributes: the GenAI conventions where they have a name, the gateway's own otherwise.
function spanAttributesOf(fields: Partial<RequestLine>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  if (fields.org_id !== undefined) out['model_gateway.org_id'] = fields.org_id
  if (fields.key !== undefined) out['model_gateway.key_hash_prefix'] = fields.key
  if (fields.generation_id !== undefined) out['gen_ai.response.id'] = fields.generation_id
  if (fields.model !== undefined) out['gen_ai.response.model'] = fields.model
  if (fields.provider !== undefined) out['model_gateway.provider'] = fields.provider
  if (fields.stream !== undefined) out['model_gateway.stream'] = fields.stream
  if (fields.prompt_tokens !== undefined) out['gen_ai.usage.input_tokens'] = fields.prompt_tokens
  if (fields.completion_tokens !== undefined) out['gen_ai.usage.output_tokens'] = fields.completion_tokens
  if (fields.cost_eur !== undefined) out['model_gateway.cost_eur'] = fields.cost_eur
  if (fields.billed_status !== undefined) out['model_gateway.billed_status'] = fields.billed_status
  return out
}
