import type { Gateway } from '../src/index'

/** What Bun.serve returns (only what the adapter uses). */
interface BunServer {
  port: number
  hostname: string
  stop(closeActiveConnections?: boolean): void
}

declare const Bun: { version: string; serve(options: { port?: number; hostname?: string; fetch: (request: Request) => Response | Promise<Response> }): BunServer }

/** The gateway as a `Bun.serve`-ready fetch handler: `Bun.serve({ fetch: toBunFetch(gateway) })`. */
export function toBunFetch(gateway: Gateway): (request: Request) => Promise<Response> {
  return (request) => gateway.fetch(request)
}

/** Serves the gateway with Bun.serve (`port` 0 picks a free one). */
export function serve(gateway: Gateway, options: { port?: number; hostname?: string } = {}): { server: BunServer; url: string; close: () => Promise<void> } {
  const server = Bun.serve({ port: options.port ?? 3000, hostname: options.hostname ?? '127.0.0.1', fetch: toBunFetch(gateway) })
  return {
    server,
    url: `http://${server.hostname}:${server.port}`,
    async close() {
      server.stop(true)
      await gateway.close()
    },
  }
}
