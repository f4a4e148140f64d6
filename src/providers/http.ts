import type { IncomingMessage } from 'node:http'
import { requireNodeBuiltin } from '../runtime/node-builtin'
import { collectBytes } from '../http/collect'
import { upstreamError } from './upstream-error'
import type { ChunkIterator, UpstreamSource } from '../contracts'

// The hot path's transport (the runner, src/providers/runner.ts, calls it through transport.ts): node:http with
// keep-alive pools, several times cheaper in CPU than fetch per call here (docs/providers.md#transport).
// Node's modules are read when this module is loaded (transport.ts loads it where Node is, and falls back to fetch if
// this throws), so that the edge entry's graph has no `node:` import (docs/edge.md#what-the-edge-entry-leaves-out).
const http = requireNodeBuiltin('node:http', 'the node:http transport')
const https = requireNodeBuiltin('node:https', 'the node:http transport')
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 }),
}

/** An upstream answer: status, lower-case headers, and the body to read once. */
export interface UpstreamResponse {
  status: number
  headers: Record<string, string>
  /** The body as it arrives. */
  body: AsyncIterable<Uint8Array>
  /** The whole body as text. */
  text(): Promise<string>
}

/** One upstream request. */
export interface UpstreamRequest {
  method: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string | Uint8Array
  signal: AbortSignal
  /** No byte for this long fails the call with a timeout (while connecting, waiting and streaming). */
  timeoutMs: number
  /** The provider (slug and name), for errors. */
  provider: UpstreamSource
}

// Where an upstream URL points, as node:http's request options: parsed once per URL (a provider calls a few), not per
// request. Bounded: emptied when it holds too many (URLs that carry a per-request part would otherwise grow it).
interface Target {
  protocol: string
  hostname: string
  port: string
  path: string
  auth?: string
}
const targets = new Map<string, Target>()
const MAX_TARGETS = 1024
function targetOf(url: string): Target {
  let target = targets.get(url)
  if (target) return target
  const parsed = new URL(url)
  target = {
    protocol: parsed.protocol,
    // An IPv6 literal without its brackets, as node:http takes it.
    hostname: parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname,
    port: parsed.port,
    path: `${parsed.pathname}${parsed.search}`,
    ...(parsed.username || parsed.password ? { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` } : {}),
  }
  if (targets.size >= MAX_TARGETS) targets.clear()
  targets.set(url, target)
  return target
}

/** Sends a request upstream; resolves with the response head, rejects with a GatewayError (timeout, unreachable, aborted). */
export function upstreamFetch(url: string, init: UpstreamRequest): Promise<UpstreamResponse> {
  let target: Target
  try {
    target = targetOf(url)
  } catch (error) {
    return Promise.reject(error)
  }
  const send = target.protocol === 'https:' ? https.request : http.request
  const agent = agents[target.protocol as 'http:' | 'https:']
  if (!agent) return Promise.reject(new TypeError(`unsupported upstream protocol ${target.protocol}`))
  return new Promise((resolve, reject) => {
    if (init.signal.aborted) return reject(abortedError(init))
    const req = send(Object.assign({ method: init.method, headers: init.headers, agent }, target))
    // Why the gateway stopped the call (its abort or timeout), so that a body cut by it fails with that reason, not as
    // a connection the provider dropped (which would count against its health and be retried).
    let stopped: Error | undefined
    const stop = (reason: Error) => req.destroy((stopped ??= reason))
    const endedEarly = (cause?: unknown) => stopped ?? (cause ? toUpstreamError(cause, init) : cutShort(init))
    const onAbort = () => stop(abortedError(init))
    init.signal.addEventListener('abort', onAbort, { once: true })
    req.setTimeout(init.timeoutMs, () => stop(upstreamError(init.provider, 'timeout', `no answer within ${init.timeoutMs} ms`)))
    req.on('error', (error) => {
      init.signal.removeEventListener('abort', onAbort)
      reject(toUpstreamError(error, init))
    })
    req.on('response', (res: IncomingMessage) => {
      res.on('close', () => init.signal.removeEventListener('abort', onAbort))
      const headers: Record<string, string> = {}
      const received = res.headers
      for (const name in received) {
        const value = received[name]
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
      }
      resolve({
        status: res.statusCode ?? 502,
        headers,
        body: readBody(res, init, endedEarly),
        text: () => readText(res, endedEarly),
      })
    })
    req.end(init.body)
  })
}

const cutShort = (init: UpstreamRequest) =>
  upstreamError(init.provider, 'provider_unavailable', 'the connection closed before the answer was complete', { connection: true })

// The body as it arrives, from 'data' events through one plain iterator (cheaper per chunk than Node's async
// iterator wrapped in a generator). Chunks not yet taken pause the response (backpressure); failures come after
// the chunks that arrived before them; leaving early (`return`) destroys an unfinished response.
function readBody(res: IncomingMessage, init: UpstreamRequest, endedEarly: (cause?: unknown) => Error): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator](): ChunkIterator<Uint8Array> {
      const queue: Buffer[] = []
      let ended = false
      let failure: Error | undefined
      let waiting: { resolve: (result: IteratorResult<Uint8Array>) => void; reject: (error: Error) => void } | undefined
      const wake = () => {
        const waiter = waiting
        if (!waiter) return
        if (queue.length) waiter.resolve({ value: queue.shift()!, done: false })
        else if (failure) waiter.reject(failure)
        else if (ended) waiter.resolve({ value: undefined, done: true })
        else return
        waiting = undefined
      }
      const cleanup = () => {
        res.off('data', onData)
        res.off('end', onEnd)
        res.off('error', onError)
        res.off('close', onClose)
      }
      const onData = (chunk: Buffer) => {
        queue.push(chunk)
        if (queue.length >= 16) res.pause()
        wake()
      }
      const onEnd = () => {
        cleanup()
        if (res.complete) ended = true
        else failure = endedEarly()
        wake()
      }
      const onError = (error: Error) => {
        cleanup()
        failure = endedEarly(error)
        wake()
      }
      const onClose = () => {
        cleanup()
        failure = endedEarly(res.errored ?? undefined)
        wake()
      }
      // The oldest chunk in hand; a paused response resumes once few are left.
      const take = (): Buffer => {
        const value = queue.shift()!
        if (queue.length < 4 && res.isPaused() && !ended) res.resume()
        return value
      }
      res.on('data', onData)
      res.on('end', onEnd)
      res.on('error', onError)
      res.on('close', onClose)
      return {
        // A chunk already in hand (or the end, or the failure), at once; undefined when one must be waited for.
        nextNow() {
          if (waiting) return undefined
          if (queue.length) return { value: take(), done: false }
          if (failure) throw failure
          return ended ? { value: undefined, done: true } : undefined
        },
        next() {
          if (queue.length) return Promise.resolve({ value: take(), done: false })
          if (failure) return Promise.reject(failure)
          if (ended) return Promise.resolve({ value: undefined, done: true })
          if (res.isPaused()) res.resume()
          return new Promise((resolve, reject) => (waiting = { resolve, reject }))
        },
        return() {
          cleanup()
          queue.length = 0
          if (!ended && !failure) {
            failure = cutShort(init)
            res.destroy()
          }
          ended = true
          return Promise.resolve({ value: undefined, done: true })
        },
      }
    },
  }
}

// The whole body as text (an async iterator per whole answer costs more than the parse).
async function readText(res: IncomingMessage, endedEarly: (cause?: unknown) => Error): Promise<string> {
  const bytes = await collectBytes(res, { failed: endedEarly })
  if (!res.complete) throw endedEarly()
  return bytes ? bytes.toString('utf8') : ''
}

function abortedError(init: UpstreamRequest) {
  const reason = init.signal.reason
  return reason instanceof Error && reason.name === 'GatewayError' ? reason : Object.assign(new Error('aborted'), { name: 'AbortError' })
}

function toUpstreamError(error: unknown, init: UpstreamRequest): Error {
  if (error instanceof Error && (error.name === 'GatewayError' || error.name === 'AbortError')) return error
  const code = (error as NodeJS.ErrnoException)?.code ?? ''
  const raw = `${code || 'error'}: ${(error as Error)?.message ?? String(error)}`
  if (code === 'ETIMEDOUT') return upstreamError(init.provider, 'timeout', raw, { cause: error })
  return upstreamError(init.provider, 'provider_unavailable', raw, { cause: error, connection: true })
}
