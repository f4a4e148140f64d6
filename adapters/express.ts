import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { GatewayError, errorTypes, type ErrorStatus, type Gateway } from '../src/index'
import { toNodeHandler } from './node'

export { clientFor } from './node'

/** An Express request (only what the adapter reads). `rawBody`: the bytes a parser's `verify` hook may keep. */
type ExpressRequest = IncomingMessage & { body?: unknown; rawBody?: unknown; originalUrl?: string; protocol?: string }

type Next = (error?: unknown) => void
type Handler = (req: ExpressRequest, res: ServerResponse, next: Next) => void
type ErrorHandler = (error: unknown, req: ExpressRequest, res: ServerResponse, next: Next) => void

/** What body-parser (behind express.json(), express.raw(), express.text(), …) passes to `next` when it refuses a body. */
interface BodyParserError {
  type: string
  status: number
  message: string
  /** entity.too.large: the parser's limit and the body's length, in bytes. */
  limit?: number
  length?: number
}

/**
 * The largest request body the gateway accepts on any route, in bytes: the largest of its `bodyLimits` (by default
 * 25 MiB, the transcription limit; chat 10 MiB, the other routes 1 MiB: docs/limits.md). For apps that must keep a
 * body parser in front of the gateway: `app.use(express.json({ limit: bodyLimitOf(gateway) }))`. The parser then
 * lets every body the gateway would take through, and the gateway still applies each route's own limit to what it
 * hands on (413 in the envelope). Mounting the gateway before the parser needs no such setting (README "Express").
 */
export function bodyLimitOf(gateway: Gateway): number {
  const { default: other, chat, transcription, countTokens } = gateway.context.options.bodyLimits
  return Math.max(other, chat, transcription, countTokens)
}

/**
 * Express middleware serving the gateway (Express 5 and 4), mounted at any path: `app.use('/ai', toExpressHandler(gateway))`
 * (the gateway then sees paths below the mount, e.g. `/api/v1/me`). Mounted before the app's body parsers, the
 * gateway reads each body itself with its own limits (chat 10 MiB, transcription 25 MiB, 1 MiB elsewhere:
 * docs/limits.md). Mounted after one (express.json(), express.raw(), express.text()), it serves the body the parser
 * handed on, so the parser's limit applies first: express.json()'s default of 100 kB refuses most long chats, hence
 * `express.json({ limit: bodyLimitOf(gateway) })`. A parser's refusals (invalid JSON 400, too large 413, unsupported
 * encoding or charset 415, …) are answered like every other error of the gateway: the error envelope, X-Request-Id
 * and the CORS headers. The parser has read and dropped the body by then, so it cannot be served any more.
 */
export function toExpressHandler(gateway: Gateway): [Handler, ErrorHandler] {
  const handle = toNodeHandler(gateway)
  let warned = false
  const serve: Handler = (req, res, next) => {
    // Untouched stream: the fast path, straight through the Node adapter.
    if (!bodyWasConsumed(req)) return handle(req, res)
    serveParsed(gateway, req, res).catch(next)
  }
  const answerParserError: ErrorHandler = (error, req, res, next) => {
    if (!isBodyParserError(error)) return next(error)
    const largest = bodyLimitOf(gateway)
    if (error.type === 'entity.too.large' && typeof error.limit === 'number' && error.limit < largest && !warned) {
      warned = true
      gateway.context.logger.warn(
        `a body parser in front of the gateway refused a body at its limit of ${error.limit} bytes, below the gateway's own limits ` +
          `(up to ${largest} bytes): mount toExpressHandler(gateway) before express.json(), or use express.json({ limit: bodyLimitOf(gateway) }) (README "Express")`,
        { limit: error.limit, length: error.length },
      )
    }
    send(gateway.answerError(toGatewayFailure(error), new Request(urlOf(req), { method: req.method, headers: headersOf(req) })), res).catch(next)
  }
  return [serve, answerParserError]
}

// body-parser's errors (Express 4's body-parser 1.x and Express 5's 2.x alike) carry a string `type` and an HTTP status.
function isBodyParserError(error: unknown): error is BodyParserError {
  const { type, status } = (error ?? {}) as Partial<BodyParserError>
  return typeof type === 'string' && typeof status === 'number' && status >= 400 && status < 600
}

// The gateway's wording for the refusals it makes itself (src/http/body.ts); body-parser's own message otherwise.
function toGatewayFailure(error: BodyParserError): GatewayError {
  const status: ErrorStatus = error.status in errorTypes ? (error.status as ErrorStatus) : error.status < 500 ? 400 : 500
  if (status >= 500) return new GatewayError(500, 'Internal error', { cause: error })
  if (error.type === 'entity.too.large')
    return new GatewayError(413, typeof error.limit === 'number' ? `Request body is larger than ${error.limit} bytes` : 'Request body is too large', {
      cause: error,
    })
  if (error.type === 'entity.parse.failed') return new GatewayError(400, 'Request body is not valid JSON', { cause: error })
  if (error.type === 'encoding.unsupported') return new GatewayError(415, 'Unsupported content encoding', { cause: error })
  if (error.type === 'request.aborted') return new GatewayError(400, 'The request body ended before it was complete', { cause: error })
  return new GatewayError(status, error.message, { cause: error })
}

// A body parser read the stream (it cannot be read again). Express 4's body-parser sets `req.body = {}` even when it
// leaves a body alone (multipart uploads), so the stream's state decides, not `req.body`.
function bodyWasConsumed(req: ExpressRequest): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false
  return req.readableEnded || req.readableDidRead
}

function headersOf(req: ExpressRequest): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  return headers
}

const urlOf = (req: ExpressRequest) => `${req.protocol ?? 'http'}://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`

// The body as the parser left it: the raw bytes when a `verify` hook kept them (exact), else what it parsed.
function bodyOf(req: ExpressRequest): BodyInit | undefined {
  if (Buffer.isBuffer(req.rawBody)) return new Uint8Array(req.rawBody)
  const { body } = req
  if (body === undefined) return undefined
  if (body instanceof Uint8Array) return new Uint8Array(body)
  return typeof body === 'string' ? body : JSON.stringify(body)
}

// A body parser already read the stream: rebuild a web Request from what it parsed, answer, and pipe the reply.
async function serveParsed(gateway: Gateway, req: ExpressRequest, res: ServerResponse): Promise<void> {
  const abort = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) abort.abort()
  })
  // The Node request and response go along, as on the fast path: the session function may read the app's `req.user`.
  const request = Object.assign(new Request(urlOf(req), { method: req.method, headers: headersOf(req), body: bodyOf(req), signal: abort.signal }), {
    runtime: { name: 'node', node: { req, res } },
  })
  await send(await gateway.fetch(request), res)
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status
  for (const [name, value] of response.headers) {
    if (name === 'set-cookie') res.appendHeader(name, value)
    else res.setHeader(name, value)
  }
  if (!response.body) return void res.end()
  Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res)
}
