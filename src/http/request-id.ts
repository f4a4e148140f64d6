import type { H3Event } from 'h3'
import { idBytes } from '../crypto/id-bytes'

const VALID_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's id: a valid incoming `X-Request-Id` is echoed, else a new `req_…` id; stable within the request. */
export function requestIdOf(event: H3Event): string {
  const context = event.context as { requestId?: string }
  if (context.requestId) return context.requestId
  const incoming = event.req.headers.get('x-request-id')
  return (context.requestId = incoming && VALID_ID_RE.test(incoming) ? incoming : `req_${idBytes(12).toString('hex')}`)
}
