import { createServer, type IncomingHttpHeaders } from 'node:http'
import { listenOnLoopback } from '../fakes/listen'

/**
 * A replay server on 127.0.0.1: each request is answered with the fixture registered for its route (`POST
 * /v1/chat/completions`, the path without the query), and recorded, so a test can assert what a provider sent.
 * Besides plain answers it can stall without a byte, cut the connection mid-stream, and send any status, headers
 * or non-JSON body a test asks for.
 */

/** One canned answer. */
export interface Reply {
  /** HTTP status. Default 200. */
  status?: number
  /** Response headers (lower case). `content-type` defaults to JSON, or to an event stream when `chunks` is given. */
  headers?: Record<string, string>
  /** A whole body: a string as it is, anything else as JSON. */
  body?: unknown
  /** An event stream: each string written on its own, `gapMs` apart. */
  chunks?: string[]
  /** Milliseconds between two chunks. Default 2. */
  gapMs?: number
  /** Send the head and this many chunks (or half the body), then destroy the connection. */
  cutAfter?: number
  /** Never answer (no head, no byte). */
  stall?: boolean
}

/** A request as the replay server received it. */
export interface RecordedRequest {
  method: string
  /** The path without the query. */
  path: string
  /** The query string parameters. */
  query: Record<string, string>
  headers: IncomingHttpHeaders
  /** The JSON body parsed, the raw text when it is not JSON, undefined when empty. */
  body: any
}

/** A running replay server. */
export interface Replay {
  /** `http://127.0.0.1:<port>`. */
  origin: string
  /** Every request received, in order. */
  requests: RecordedRequest[]
  /** Answers `METHOD /path` with `reply` (replaces an earlier one for the same route). */
  on(route: string, reply: Reply): void
  /** Forgets the routes and the recorded requests (between tests). */
  reset(): void
  /** Connections closed by the client before the answer ended (an abort, a timeout). */
  closedEarly: number
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts a replay server on a free port of 127.0.0.1. */
export async function startReplay(): Promise<Replay> {
  const routes = new Map<string, Reply>()
  const replay: Replay = {
    origin: '',
    requests: [],
    closedEarly: 0,
    on: (route, reply) => void routes.set(route, reply),
    reset: () => {
      routes.clear()
      replay.requests.length = 0
      replay.closedEarly = 0
    },
    close: async () => undefined,
  }
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    let body: unknown
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      body = text
    }
    const url = new URL(req.url ?? '/', 'http://replay')
    replay.requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body })
    res.on('close', () => {
      if (!res.writableFinished) replay.closedEarly++
    })

    const reply = routes.get(`${req.method} ${url.pathname}`)
    if (!reply) {
      res.writeHead(404, { 'content-type': 'text/plain' })
      return res.end(`replay: no fixture for ${req.method} ${url.pathname}`)
    }
    if (reply.stall) return
    const stream = reply.chunks !== undefined
    const payload = stream ? '' : typeof reply.body === 'string' ? reply.body : reply.body === undefined ? '' : JSON.stringify(reply.body)
    res.writeHead(reply.status ?? 200, { 'content-type': stream ? 'text/event-stream' : 'application/json', ...reply.headers })
    if (!stream) {
      if (reply.cutAfter === undefined) return res.end(payload)
      res.write(payload.slice(0, Math.floor(payload.length / 2)))
      await sleep(reply.gapMs ?? 2)
      return req.socket.destroy()
    }
    for (const [i, chunk] of reply.chunks!.entries()) {
      if (reply.cutAfter !== undefined && i >= reply.cutAfter) {
        await sleep(reply.gapMs ?? 2)
        return req.socket.destroy()
      }
      if (res.destroyed) return
      res.write(chunk)
      await sleep(reply.gapMs ?? 2)
    }
    res.end()
  })
  const { origin, close } = await listenOnLoopback(server)
  replay.origin = origin
  replay.close = close
  return replay
}
