import { gatewayResponse } from './respond'

/**
 * The same streamed response, calling `ended` once when its body is done: read to its end, failed, or cancelled by
 * the client. It passes each chunk on as it is read (nothing is buffered ahead of the client).
 */
export function onBodyEnd(response: Response, ended: () => void, requestId: string): Response {
  if (!response.body) {
    ended()
    return response
  }
  const reader = response.body.getReader()
  let done = false
  const end = () => {
    if (done) return
    done = true
    ended()
  }
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await reader.read()
          if (next.done) {
            end()
            controller.close()
          } else controller.enqueue(next.value)
        } catch (error) {
          end()
          controller.error(error)
        }
      },
      cancel(reason) {
        end()
        return reader.cancel(reason)
      },
    },
    { highWaterMark: 0 },
  )
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  return gatewayResponse(body, response.status, headers, requestId)
}
