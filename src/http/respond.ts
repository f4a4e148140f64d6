import { FastResponse } from 'srvx'
import { stringifyExact } from './exact-json'

// Responses built here already carry their request id: the route handler need not copy their headers to add it.
const carriesRequestId = new WeakSet<Response>()

// The headers of responses built here, as the plain object srvx's FastResponse (on Node) reads them from when it
// writes the response: headers added later (CORS, rate limits) go straight into it, without the Headers object that
// reading `response.headers` builds (and srvx then iterates) — about 4 µs a response. Only while nothing has read the
// response's headers or body (GatewayResponse drops it from here then); elsewhere FastResponse is the runtime's own
// Response, and headers are set on it as on any (docs/performance.md#where-the-time-goes).
const plainHeaders = new WeakMap<Response, Record<string, string>>()
const getterOf = (name: string) => Object.getOwnPropertyDescriptor(FastResponse.prototype, name)?.get
const materialise = getterOf('_response')
const readsPlainHeaders = FastResponse !== globalThis.Response && typeof materialise === 'function' && typeof getterOf('headers') === 'function'

/** srvx's FastResponse that stops taking headers into its plain object once its headers or body are read. */
class GatewayResponse extends FastResponse {
  override get headers(): Headers {
    plainHeaders.delete(this as unknown as Response)
    return super.headers
  }
  get _response(): unknown {
    plainHeaders.delete(this as unknown as Response)
    return materialise!.call(this)
  }
}

/**
 * Adds headers (lowercase names) to a response: into its plain headers while it has them, else on its Headers (a copy
 * of the response when they are immutable). Returns the response to answer with.
 */
export function addHeaders(response: Response, headers: Record<string, string>): Response {
  const plain = plainHeaders.get(response)
  if (plain) {
    Object.assign(plain, headers)
    return response
  }
  try {
    for (const name in headers) response.headers.set(name, headers[name])
    return response
  } catch {
    const copy = new Headers(response.headers)
    for (const name in headers) copy.set(name, headers[name])
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: copy })
  }
}

/** A response's header (lowercase name), read from its plain headers while it has them. */
export function headerOf(response: Response, name: string): string | null {
  const plain = plainHeaders.get(response)
  return plain ? (plain[name] ?? null) : response.headers.get(name)
}

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
  const plain: Record<string, string> = {}
  for (const name in headers) plain[name.toLowerCase()] = headers[name]
  plain['x-request-id'] = requestId
  const response = (readsPlainHeaders ? new GatewayResponse(body, { status, headers: plain }) : new FastResponse(body, { status, headers: plain })) as Response
  if (readsPlainHeaders) plainHeaders.set(response, plain)
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
  return addHeaders(response, { 'x-request-id': requestId })
}
