import { FastResponse } from 'srvx'
import { stringifyExact } from './exact-json'

// Responses built here already carry their request id: the route handler need not copy their headers to add it.
const carriesRequestId = new WeakSet<Response>()

/**
 * A response with its request id. srvx's FastResponse (what h3 itself answers with): on Node it is written in one go
 * with a Content-Length, without building an undici Response and a web stream around the body; elsewhere, and when
 * read as a Response (gateway.fetch), it behaves as a standard Response.
 */
export function gatewayResponse(
  body: string | ReadableStream<Uint8Array> | null,
  status: number,
  headers: Record<string, string>,
  requestId: string,
): Response {
  const response = new FastResponse(body, { status, headers: Object.assign({}, headers, { 'x-request-id': requestId }) }) as Response
  carriesRequestId.add(response)
  return response
}

/** A JSON response with the request id. */
export function jsonResponse(value: unknown, status: number, requestId: string): Response {
  return gatewayResponse(stringifyExact(value), status, { 'content-type': 'application/json; charset=utf-8' }, requestId)
}

/** Adds the request id to a handler's own Response (copying it when its headers are immutable). */
export function withRequestId(response: Response, requestId: string): Response {
  if (carriesRequestId.has(response)) return response
  try {
    response.headers.set('x-request-id', requestId)
    return response
  } catch {
    const headers = new Headers(response.headers)
    headers.set('x-request-id', requestId)
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
  }
}
