import type { H3Event } from 'h3'
import { idHex } from '../crypto/id-bytes'

const VALID_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/

interface RequestIds {
  requestId?: string
  clientRequestId?: string | null
}

/**
 * The request's id (docs/errors.md#request-and-generation-ids): the gateway's own, `req_` and 24 hex digits, unique
 * whatever the client sent; stable within the request. Logs, usage records, spans and the request log key by it.
 */
export function requestIdOf(event: H3Event): string {
  const context = event.context as RequestIds
  return (context.requestId ??= `req_${idHex(12)}`)
}

/** The client's own `X-Request-Id` when it is 1 to 128 of `A-Z a-z 0-9 . _ : -`, else undefined: kept beside the gateway's id, and echoed. */
export function clientRequestIdOf(event: H3Event): string | undefined {
  const context = event.context as RequestIds
  if (context.clientRequestId === undefined) {
    const incoming = event.req.headers.get('x-request-id')
    context.clientRequestId = incoming && VALID_ID_RE.test(incoming) ? incoming : null
  }
  return context.clientRequestId ?? undefined
}

/** The id a response's `X-Request-Id` carries: the client's own when it sent a valid one (echoed), else the gateway's. */
export const echoedRequestIdOf = (event: H3Event): string => clientRequestIdOf(event) ?? requestIdOf(event)
