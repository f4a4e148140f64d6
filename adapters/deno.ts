import type { Gateway } from '../src/index'

/** What Deno.serve returns (only what the adapter uses; typed here so that building needs no Deno types). */
export interface DenoServer {
  addr: { hostname: string; port: number }
  /** Resolves once the server stopped and every response ended. */
  finished: Promise<void>
  /** Stops listening and resolves once the responses still being written ended. */
  shutdown(): Promise<void>
}

/** Options of `serve`: where to listen (`port` 0 picks a free one). */
export interface DenoServeOptions {
  port?: number
  hostname?: string
}

/** How long close() lets the responses the drain ended finish being written before it stops waiting for them. */
const FLUSH_MS = 1_000

declare const Deno: {
  version: { deno: string }
  serve(
    options: { port?: number; hostname?: string; onListen?: (addr: { hostname: string; port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): DenoServer
}

/** The gateway as a `Deno.serve`-ready handler: `Deno.serve({ port: 3000 }, toDenoHandler(gateway))`. */
export function toDenoHandler(gateway: Gateway): (request: Request) => Promise<Response> {
  return (request) => gateway.fetch(request)
}

/**
 * Serves the gateway with Deno.serve (docs/edge.md#deno). Its close() stops listening, closes the gateway, which
 * drains the requests in flight (docs/operations.md#shutting-down), then waits a moment for their last bytes.
 */
export function serve(gateway: Gateway, options: DenoServeOptions = {}): { server: DenoServer; url: string; close: () => Promise<void> } {
  const server = Deno.serve({ port: options.port ?? 3000, hostname: options.hostname ?? '127.0.0.1', onListen: () => {} }, toDenoHandler(gateway))
  let closing: Promise<void> | undefined
  return {
    server,
    url: `http://${server.addr.hostname}:${server.addr.port}`,
    close: () =>
      (closing ??= (async () => {
        const stopped = server.shutdown()
        let timer: ReturnType<typeof setTimeout> | undefined
        try {
          await gateway.close()
          await Promise.race([stopped, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))])
        } finally {
          clearTimeout(timer)
        }
      })()),
  }
}
