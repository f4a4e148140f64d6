import type { Gateway } from '../src/index'

/** What Bun.serve returns (only what the adapter uses). */
interface BunServer {
  port: number
  hostname: string
  /** Stops listening; resolves once the connections still open ended (they are cut at once with `true`). */
  stop(closeActiveConnections?: boolean): Promise<void> | void
}

/** How long close() lets the responses the drain ended finish being written before it cuts their connections. */
const FLUSH_MS = 1_000

declare const Bun: {
  version: string
  serve(options: { port?: number; hostname?: string; fetch: (request: Request) => Response | Promise<Response> }): BunServer
}

/** The gateway as a `Bun.serve`-ready fetch handler: `Bun.serve({ fetch: toBunFetch(gateway) })`. */
export function toBunFetch(gateway: Gateway): (request: Request) => Promise<Response> {
  return (request) => gateway.fetch(request)
}

/**
 * Serves the gateway with Bun.serve (`port` 0 picks a free one). Its close() stops listening, closes the gateway, which
 * drains the requests in flight (docs/operations.md), then cuts the connections still open.
 */
export function serve(gateway: Gateway, options: { port?: number; hostname?: string } = {}): { server: BunServer; url: string; close: () => Promise<void> } {
  const server = Bun.serve({ port: options.port ?? 3000, hostname: options.hostname ?? '127.0.0.1', fetch: toBunFetch(gateway) })
  let closing: Promise<void> | undefined
  return {
    server,
    url: `http://${server.hostname}:${server.port}`,
    close: () =>
      (closing ??= (async () => {
        const stopped = Promise.resolve(server.stop(false))
        let timer: ReturnType<typeof setTimeout> | undefined
        try {
          await gateway.close()
          await Promise.race([stopped, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))])
        } finally {
          clearTimeout(timer)
          await server.stop(true)
        }
      })()),
  }
}
