import type { Logger } from '../logger'

/** What the line of one request says (docs/operations.md#logs): never a secret, a key only by its hash's first 12 characters. */
export interface RequestLine {
  request_id: string
  method: string
  path: string
  status?: number
  latency_ms?: number
  org_id?: string
  key?: string
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
  options: { log: boolean; ended?: (route: string, line: RequestLine, seconds: number) => void },
) {
  const enabled = options.log || options.ended !== undefined
  const pending = new Map<string, Pending>()
  const write = (requestId: string, entry: Pending) => {
    pending.delete(requestId)
    entry.line.latency_ms = Math.max(0, now() - entry.startedAt)
    options.ended?.(entry.route, entry.line, entry.line.latency_ms / 1000)
    if (options.log) logger.info('request', entry.line as unknown as Record<string, unknown>)
  }
  return {
    /** A request arrived at `route` (the handler starts). */
    begin(requestId: string, method: string, path: string, route: string): void {
      if (enabled) pending.set(requestId, { line: { request_id: requestId, method, path }, route, startedAt: now(), open: 1 })
    },
    /** Adds what is known of the request (its status, caller, billing). */
    note(requestId: string | undefined, fields: Partial<RequestLine>): void {
      const entry = requestId === undefined ? undefined : pending.get(requestId)
      if (entry) Object.assign(entry.line, fields)
    },
    /** A stream of the request outlives its handler: the line waits for it too. */
    hold(requestId: string): void {
      const entry = pending.get(requestId)
      if (entry) entry.open++
    },
    /** The handler, or a held stream, ended: the line is written when nothing of the request is left. */
    end(requestId: string): void {
      const entry = pending.get(requestId)
      if (entry && --entry.open === 0) write(requestId, entry)
    },
  }
}

/** The request log of a gateway. */
export type RequestLog = ReturnType<typeof createRequestLog>
