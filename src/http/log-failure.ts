import type { GatewayError } from '../errors'
import type { Logger } from '../logger'
import { isShuttingDown } from './in-flight'

/**
 * Logs a request's unexpected failure (a 5xx, not the shutdown's refusal) with its stack, under `what` (the route, or
 * the in-process call), as docs/errors.md#unexpected-failures-500 describes; expected errors (4xx) are the client's and not logged.
 */
export function logFailure(logger: Logger, what: string, error: GatewayError, thrown: unknown, ids: { requestId: string; clientRequestId?: string }): void {
  if (error.status < 500 || isShuttingDown(error)) return
  const cause = error.cause ?? thrown
  logger.error(`${what} failed`, {
    request_id: ids.requestId,
    ...(ids.clientRequestId ? { client_request_id: ids.clientRequestId } : {}),
    status: error.status,
    error: cause instanceof Error ? (cause.stack ?? cause.message) : String(cause),
  })
}
