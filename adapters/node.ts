import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler as h3ToNodeHandler } from 'h3/node'
import type { Gateway, GatewayClient } from '../src/index'

/** A Node request handler, `(req, res) => void`, serving the gateway inside an existing node:http server. */
export function toNodeHandler(gateway: Gateway): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = h3ToNodeHandler(gateway.app)
  return (req, res) => void handle(req, res)
}

/**
 * The in-process client of a Node (or Express) request's signed-in user (docs/first-party.md#express): the
 * `session` option says who, from the request's headers or, through `event.runtime.node.req`, from what the app's own
 * middleware put on `req` (`req.user`, `req.session`); a key the request sends wins. `clientFor(gateway, req)`.
 */
export function clientFor(gateway: Gateway, req: IncomingMessage, res?: ServerResponse): GatewayClient {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted
  const protocol = req.headers['x-forwarded-proto'] === 'https' || encrypted ? 'https' : 'http'
  const url = new URL((req as { originalUrl?: string }).originalUrl || req.url || '/', `${protocol}://${req.headers.host || 'localhost'}`)
  // As h3's Node requests carry it: the session function reads the app's own `req` there.
  const request = Object.assign(new Request(url, { headers }), { runtime: { name: 'node', node: { req, res } } })
  return gateway.client({ request })
}

/**
 * Limits of a node:http server against slow or greedy clients (docs/adapters.md#node-http). Node's
 * `requestTimeout` covers receiving the request only, so a long streamed answer is never cut by it.
 */
export interface ServerLimits {
  /** Time a client has to send a request's headers, in ms; past it: 408 and the connection is closed. Default 30000. */
  headersTimeout?: number
  /** Time a client has to send a whole request, body included, in ms (a 25 MiB upload fits); past it: 408. Default 300000. */
  requestTimeout?: number
  /** How long an idle kept-alive connection stays open between requests, in ms. Default 5000. */
  keepAliveTimeout?: number
  /** Open connections at most; further ones are closed at once. Default 1024. */
  maxConnections?: number
  /** Request headers read at most; further ones are ignored. Default 100. */
  maxHeadersCount?: number
  /** Largest request head (request line and headers) in bytes; past it: 431. Default 16384. */
  maxHeaderSize?: number
  /** How often the header and request timeouts are checked, in ms. Default 1000. */
  connectionsCheckingInterval?: number
}

/** The limits serve() and the playground apply unless told otherwise. */
export const DEFAULT_SERVER_LIMITS: Readonly<Required<ServerLimits>> = Object.freeze({
  headersTimeout: 30_000,
  requestTimeout: 300_000,
  keepAliveTimeout: 5_000,
  maxConnections: 1024,
  maxHeadersCount: 100,
  maxHeaderSize: 16 * 1024,
  connectionsCheckingInterval: 1_000,
})

/** A node:http server for `listener` with DEFAULT_SERVER_LIMITS, each overridable through `limits`. */
export function createLimitedServer(listener: RequestListener, limits: ServerLimits = {}): Server {
  const given = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined)) as ServerLimits
  const { headersTimeout, requestTimeout, keepAliveTimeout, maxConnections, maxHeadersCount, maxHeaderSize, connectionsCheckingInterval } = {
    ...DEFAULT_SERVER_LIMITS,
    ...given,
  }
  const server = createServer({ headersTimeout, requestTimeout, maxHeaderSize, connectionsCheckingInterval }, listener)
  server.keepAliveTimeout = keepAliveTimeout
  server.maxConnections = maxConnections
  server.maxHeadersCount = maxHeadersCount
  return server
}

/** A running gateway server. */
export interface GatewayServer {
  server: Server
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  url: string
  /**
   * Stops accepting connections (idle ones end), closes the gateway, which drains the requests in flight (up to its
   * `drainTimeoutMs`: docs/operations.md), then ends the connections still open. A second call awaits the same close.
   */
  close: () => Promise<void>
}

/** Options of serve(): where to listen, and the server's limits (DEFAULT_SERVER_LIMITS unless given). */
export interface ServeOptions extends ServerLimits {
  /** Port to listen on; 0 picks a free one. Default 3000. */
  port?: number
  /** Address to listen on. Default `127.0.0.1`. */
  hostname?: string
}

/** Serves the gateway on Node http (`port` 0 picks a free one) with limits against slow clients; resolves once listening. */
export async function serve(gateway: Gateway, options: ServeOptions = {}): Promise<GatewayServer> {
  const { port, hostname = '127.0.0.1', ...limits } = options
  const server = createLimitedServer(toNodeHandler(gateway), limits)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port ?? 3000, hostname, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const host = hostname.includes(':') ? `[${hostname}]` : hostname
  // Responses being written, so that those the drain let end are sent whole before the connections are cut.
  const writing = new Set<ServerResponse>()
  let allWritten: (() => void) | undefined
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    writing.add(res)
    res.once('close', () => {
      writing.delete(res)
      if (!writing.size) allWritten?.()
    })
  })
  // Resolves once no response is being written, or after FLUSH_MS; leaves no timer behind.
  const flushed = () =>
    new Promise<void>((resolve) => {
      if (!writing.size) return resolve()
      const timer = setTimeout(() => allWritten?.(), FLUSH_MS)
      allWritten = () => {
        allWritten = undefined
        clearTimeout(timer)
        resolve()
      }
    })
  let closing: Promise<void> | undefined
  return {
    server,
    url: `http://${host}:${address.port}`,
    close: () =>
      (closing ??= (async () => {
        // server.close() waits for every connection to end: a hung stream would hold it for ever, so it is not awaited
        // until the gateway drained (docs/operations.md) and what is left was cut.
        const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
        server.closeIdleConnections()
        try {
          await gateway.close()
          await flushed()
        } finally {
          server.closeAllConnections()
        }
        await closed
      })()),
  }
}

/** How long close() lets the responses the drain ended finish being written before it cuts their connections. */
const FLUSH_MS = 1_000
