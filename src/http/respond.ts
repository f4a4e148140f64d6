/** A JSON response with the request id. */
export function jsonResponse(value: unknown, status: number, requestId: string): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId },
  })
}

/** Adds the request id to a handler's own Response (copying it when its headers are immutable). */
export function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set('x-request-id', requestId)
    return response
  } catch {
    const headers = new Headers(response.headers)
    headers.set('x-request-id', requestId)
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
  }
}
