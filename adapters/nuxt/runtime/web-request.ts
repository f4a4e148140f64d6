// A request of the app's Nitro server (an h3 v1 event) as the web Request the gateway serves, built from the event
// itself rather than with h3's toWebRequest: the app's server runs h3 v1 while this package depends on h3 v2, so a
// bare `h3` import could find either (docs/adapters.md#nuxt). Same URL, method, headers and body as h3 v1's
// toWebRequest, plus a signal that aborts when the client goes away (the gateway then stops upstream).
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { PlatformEvent } from './platform'

/** The incoming message of a Nitro request, with what a server or Nitro's internal fetch may have put on it. */
export interface NitroIncomingMessage extends IncomingMessage {
  /** The URL before a router trimmed it. */
  originalUrl?: string
  /** A body read before (by a framework, or given to Nitro's internal fetch). */
  rawBody?: unknown
  body?: unknown
  /** Set on the requests of Nitro's internal fetch (`$fetch` in server code). */
  __unenv__?: unknown
}

/** The part of Nitro's request event (h3 v1's H3Event) that the route handler reads. */
export interface NitroEvent extends PlatformEvent {
  readonly method: string
  readonly path: string
  readonly headers: Headers
  readonly node: { req: NitroIncomingMessage; res?: ServerResponse }
  readonly web?: { request?: Request }
  /** A body stream that an earlier handler set (h3's own field). */
  readonly _requestBody?: BodyInit
}

/** The methods whose requests have a body, for h3 v1. */
const PAYLOAD_METHODS = ['PATCH', 'POST', 'PUT', 'DELETE']
/** Where h3 v1 keeps a body it has read. */
const RAW_BODY = Symbol.for('h3RawBody')

/** The event's request as a web Request (as h3 v1's toWebRequest makes it), whose signal aborts when the client goes away. */
export function toWebRequest(event: NitroEvent): Request {
  if (event.web?.request) return event.web.request
  const req = event.node.req
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted
  const protocol = req.headers['x-forwarded-proto'] === 'https' || encrypted ? 'https' : 'http'
  const url = new URL((req.originalUrl || event.path).replace(/^[/\\]+/g, '/'), `${protocol}://${req.headers.host || 'localhost'}`)
  const res = event.node.res
  let signal: AbortSignal | undefined
  if (res) {
    const controller = new AbortController()
    res.once('close', () => {
      if (!res.writableFinished) controller.abort()
    })
    signal = controller.signal
  }
  return new Request(url, { duplex: 'half', method: event.method, headers: event.headers, body: bodyOf(event), signal } as RequestInit)
}

/** The request's body as h3 v1 streams it: none for a method without one, a body read before, else the message itself. */
function bodyOf(event: NitroEvent): BodyInit | undefined {
  if (!PAYLOAD_METHODS.includes(event.method)) return undefined
  const stream = event.web?.request?.body || event._requestBody
  if (stream) return stream
  const req = event.node.req
  if (RAW_BODY in req || 'rawBody' in req || 'body' in req || '__unenv__' in req) {
    return new ReadableStream({
      async start(controller) {
        const raw = await readRawBody(req)
        if (raw) controller.enqueue(raw)
        controller.close()
      },
    })
  }
  return new ReadableStream({
    start(controller) {
      req.on('data', (chunk: Buffer) => controller.enqueue(chunk))
      req.on('end', () => controller.close())
      req.on('error', (error) => controller.error(error))
    },
  })
}

/** A body read before, as bytes (h3 v1's readRawBody): JSON for a plain object, the text of form fields; else the message read to its end when it has a length. */
async function readRawBody(req: NitroIncomingMessage): Promise<Buffer | undefined> {
  const raw = (req as unknown as Record<symbol, unknown>)[RAW_BODY] || req.rawBody || req.body
  if (raw) {
    const value: unknown = await raw
    if (Buffer.isBuffer(value)) return value
    if (typeof (value as ReadableStream).pipeTo === 'function') return Buffer.from(await new Response(value as ReadableStream).arrayBuffer())
    if (value && typeof (value as NodeJS.ReadableStream).pipe === 'function') return readStream(value as NodeJS.ReadableStream)
    if ((value as object).constructor === Object) return Buffer.from(JSON.stringify(value))
    if (value instanceof URLSearchParams) return Buffer.from(value.toString())
    if (value instanceof FormData) return Buffer.from(await new Response(value).arrayBuffer())
    return Buffer.from(value as string)
  }
  if (!Number.parseInt(req.headers['content-length'] || '', 10) && !/\bchunked\b/i.test(String(req.headers['transfer-encoding'] ?? ''))) return undefined
  // Kept where h3 keeps it, for a later reader of the same request.
  const read = readStream(req)
  ;(req as unknown as Record<symbol, unknown>)[RAW_BODY] = read
  return read
}

/** A Node stream's bytes, once it ended. */
function readStream(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    stream
      .on('error', reject)
      .on('data', (chunk: Buffer) => chunks.push(chunk))
      .on('end', () => resolve(Buffer.concat(chunks)))
  })
}
