/** One Server-Sent Event. */
export interface ServerSentEvent {
  event?: string
  data: string
}

/** Parses a byte stream of Server-Sent Events (any line ending, multi-line data, comments skipped). */
export async function* parseServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncIterable<ServerSentEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  let event: string | undefined
  let data: string[] = []
  const flush = function* () {
    if (data.length) yield { event, data: data.join('\n') }
    event = undefined
    data = []
  }
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true })
    let newline: number
    while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
      if (newline === buffer.length - 1 && buffer[newline] === '\r') break // a \r\n may be split across chunks
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + (buffer[newline] === '\r' && buffer[newline + 1] === '\n' ? 2 : 1))
      if (line === '') yield* flush()
      else if (line.startsWith(':')) continue
      else {
        const colon = line.indexOf(':')
        const field = colon === -1 ? line : line.slice(0, colon)
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (field === 'data') data.push(value)
        else if (field === 'event') event = value
      }
    }
  }
  buffer += decoder.decode()
  if (buffer.trim()) {
    for (const line of buffer.split(/\r\n|\r|\n/)) if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
  }
  yield* flush()
}
