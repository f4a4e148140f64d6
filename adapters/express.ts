import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { GatewayError, type Gateway } from '../src/index'
import { toNodeHandler } from './node'

/** An Express request (only what the adapter reads). */
type ExpressRequest = IncomingMessage & { body?: unknown; originalUrl?: string; protocol?: string; ip?: string }

type Next = (error?: unknown) => void
type Handler = (req: ExpressRequest, res: ServerResponse, next: Next) => void
type ErrorHandler = (error: unknown, req: ExpressRequest, res: ServerResponse, next: Next) => void

/**
 * Express middleware serving the gateway (Express 5 and 4), mounted at any path: `app.use(toExpressHandler(gateway))`
 * or `app.use('/ai', …)` (the gateway then sees paths below the mount, e.g. `/api/v1/me`). Body parsers mounted
 * before it (express.json(), express.raw(), express.text()) are fine: their parsed body is handed on, and their
 * failures (invalid JSON, too large) are answered in the gateway's error envelope too.
 */
export function toExpressHandler(gateway: Gateway): [Handler, ErrorHandler] {
  const handle = toNodeHandler(gateway)
  const serve: Handler = (req, res, next) => {
    // Untouched stream: the fast path, straight through the Node adapter.
    if (!bodyWasConsumed(req)) return handle(req, res)
    serveParsed(gateway, req, res).catch(next)
  }
  const answerParserError: ErrorHandler = (error, req, res, next) => {
    const type = (error as { type?: string })?.type
    if (type !== 'entity.parse.failed' && type !== 'entity.too.large' && type !== 'encoding.unsupported') return next(error)
    const failure = type === 'entity.too.large'
      ? new GatewayError(413, 'Request body is too large')
      : new GatewayError(type === 'encoding.unsupported' ? 415 : 400, type === 'encoding.unsupported' ? 'Unsupported content encoding' : 'Request body is not valid JSON')
    res.writeHead(failure.status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(failure.toJSON()))
  }
  return [serve, answerParserError]
}

function bodyWasConsumed(req: ExpressRequest): boolean {
  return req.body !== undefined && (req.readableEnded || req.complete) && req.method !== 'GET' && req.method !== 'HEAD'
}

// A body parser already read the stream: rebuild a web Request from what it parsed, answer, and pipe the reply.
async function serveParsed(gateway: Gateway, req: ExpressRequest, res: ServerResponse): Promise<void> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  const body: BodyInit = req.body instanceof Uint8Array ? new Uint8Array(req.body) : typeof req.body === 'string' ? req.body : JSON.stringify(req.body)
  const abort = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) abort.abort()
  })
  const url = `${req.protocol ?? 'http'}://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`
  const response = await gateway.fetch(new Request(url, { method: req.method, headers, body, signal: abort.signal }))
  res.statusCode = response.status
  for (const [name, value] of response.headers) {
    if (name === 'set-cookie') res.appendHeader(name, value)
    else res.setHeader(name, value)
  }
  if (!response.body) return void res.end()
  Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res)
}
