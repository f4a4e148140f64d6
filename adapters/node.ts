import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler as h3ToNodeHandler } from 'h3/node'
import type { Gateway } from '../src/index'

/** A Node request handler, `(req, res) => void`, serving the gateway inside an existing node:http server. */
export function toNodeHandler(gateway: Gateway): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = h3ToNodeHandler(gateway.app)
  return (req, res) => void handle(req, res)
}

/** A running gateway server. */
export interface GatewayServer {
  server: Server
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  url: string
  /** Stops accepting connections, ends idle ones and closes the gateway. */
  close: () => Promise<void>
}

/** Serves the gateway on Node http (`port` 0 picks a free one); resolves once listening. */
export async function serve(gateway: Gateway, options: { port?: number; hostname?: string } = {}): Promise<GatewayServer> {
  const server = createServer(toNodeHandler(gateway))
  const hostname = options.hostname ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 3000, hostname, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const host = hostname.includes(':') ? `[${hostname}]` : hostname
  return {
    server,
    url: `http://${host}:${port}`,
    async close() {
      server.closeIdleConnections()
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
      await gateway.close()
    },
  }
}
