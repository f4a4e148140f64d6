/** One Server-Sent Event. */
export interface ServerSentEvent {
  event?: string
  data: string
  /** A comment line's text (after the colon), when the parser reports comments; `data` is then empty. */
  comment?: string
}

/** An incremental Server-Sent Events parser: bytes in, the events they complete out. */
export interface SseParser {
  /** Takes the next bytes of the stream; returns the events they complete (any line ending, comments skipped). */
  push(bytes: Uint8Array): ServerSentEvent[]
  /** The stream ended: returns a last event not closed by a blank line, if any. */
  end(): ServerSentEvent[]
}

/**
 * Creates an incremental parser of a Server-Sent Events byte stream (multi-line data, UTF-8 split across chunks);
 * with `comments`, comment lines (keep-alives) come out too, as events with `comment` set.
 */
export function createSseParser(options: { comments?: boolean } = {}): SseParser {
  const decoder = new TextDecoder()
  let buffer = ''
  let event: string | undefined
  let data: string[] = []
  let ready: ServerSentEvent[] = []
  const takeLine = (line: string) => {
    if (line === '') {
      if (data.length) ready.push({ event, data: data.length === 1 ? data[0] : data.join('\n') })
      event = undefined
      data = []
      return
    }
    if (line.charCodeAt(0) === 58 /* : */) {
      if (options.comments) ready.push({ data: '', comment: line.slice(1) })
      return
    }
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? '' : line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1)
    if (field === 'data') data.push(value)
    else if (field === 'event') event = value
  }
  const take = () => {
    const events = ready
    ready = []
    return events
  }
  return {
    push(bytes) {
      buffer += decoder.decode(bytes, { stream: true })
      // Walk the lines with a cursor (slicing the rest of the buffer once per line would copy it again and again).
      let start = 0
      let lf = buffer.indexOf('\n')
      let cr = buffer.indexOf('\r')
      for (;;) {
        if (lf !== -1 && lf < start) lf = buffer.indexOf('\n', start)
        if (cr !== -1 && cr < start) cr = buffer.indexOf('\r', start)
        const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr)
        if (end === -1) break
        if (end === cr && end === buffer.length - 1) break // a \r\n may be split across chunks
        takeLine(buffer.slice(start, end))
        start = end + (end === cr && lf === end + 1 ? 2 : 1)
      }
      if (start) buffer = buffer.slice(start)
      return take()
    },
    end() {
      buffer += decoder.decode()
      if (buffer.trim()) {
        for (const line of buffer.split(/\r\n|\r|\n/)) if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      }
      buffer = ''
      if (data.length) ready.push({ event, data: data.join('\n') })
      data = []
      return take()
    },
  }
}

/** Parses a byte stream of Server-Sent Events (any line ending, multi-line data, comments skipped). */
export async function* parseServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncIterable<ServerSentEvent> {
  const parser = createSseParser()
  for await (const chunk of body) yield* parser.push(chunk)
  yield* parser.end()
}
