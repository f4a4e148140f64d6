import { createServer, type Socket, connect } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of a storage server (Redis, PostgreSQL), for fault injection: it passes bytes both
 * ways, and on demand loses the reply to a command (the command reaches the server and runs; the connection is cut
 * when its reply comes back, as a network fault between the two would), cuts every connection, or stalls them.
 */
export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number
  /**
   * The next command whose bytes contain `marker` (or one of several) is passed on, and when the server's next bytes
   * come back on that connection they are dropped and the connection is cut. Resolves once that happened.
   */
  loseReplyTo(marker: string | string[]): Promise<void>
  /** Cuts every open connection now (the server sees its clients leave, the clients see a reset). */
  cutAll(): void
  /** While true, no byte passes either way (a stalled network); bytes wait and pass when it is false again. */
  stalled: boolean
  /** Connections accepted so far. */
  connections: number
  close(): Promise<void>
}

/** Starts a proxy to `target` (127.0.0.1 by default). */
export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  const waiting: (() => void)[] = []
  let trap: { markers: string[]; done: () => void } | undefined
  const proxy: TcpProxy = {
    port: 0,
    stalled: false,
    connections: 0,
    loseReplyTo: (marker) =>
      new Promise<void>((resolve) => {
        trap = { markers: Array.isArray(marker) ? marker : [marker], done: resolve }
      }),
    cutAll() {
      for (const socket of sockets) socket.destroy()
    },
    close: async () => {
      proxy.cutAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  // Passes a chunk now, or once the proxy is no longer stalled.
  const pass = (send: () => void) => {
    if (!proxy.stalled && !waiting.length) return send()
    waiting.push(send)
  }
  setInterval(() => {
    if (proxy.stalled) return
    for (const send of waiting.splice(0)) send()
  }, 5).unref()

  const server = createServer((client) => {
    proxy.connections++
    const upstream = connect({ host: target.host ?? '127.0.0.1', port: target.port })
    sockets.add(client)
    sockets.add(upstream)
    let losing: (() => void) | undefined
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('data', (chunk) => {
      if (trap?.markers.some((marker) => chunk.includes(marker))) {
        losing = trap.done
        trap = undefined
      }
      pass(() => upstream.write(chunk))
    })
    upstream.on('data', (chunk) => {
      if (losing) {
        const done = losing
        losing = undefined
        end()
        return done()
      }
      pass(() => client.write(chunk))
    })
    client.on('error', end)
    upstream.on('error', end)
    client.on('close', end)
    upstream.on('close', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  proxy.port = (server.address() as { port: number }).port
  return proxy
}
