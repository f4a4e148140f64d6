// A WebSocket-to-TCP bridge on 127.0.0.1, as Neon's WebSocket proxy is to its serverless driver: each WebSocket
// connection carries the PostgreSQL wire protocol in binary messages to one TCP connection, to the `address` its URL
// names (`/v1?address=host:port`, loopback only). With it, @neondatabase/serverless talks to the local PostgreSQL.
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll } from 'vitest'
import { WebSocketServer, type WebSocket } from 'ws'

/** A running bridge: its port, the connections it carried, and close(). */
export interface WebSocketBridge {
  port: number
  /** WebSocket connections accepted so far. */
  connections: number
  /** The `wsProxy` for Neon's driver: the bridge's address, with the database's host and port to reach. */
  wsProxy(host: string, port: number | string): string
  close(): Promise<void>
}

/** Starts a bridge on a free port of 127.0.0.1; it connects only to loopback addresses. */
export async function startWebSocketBridge(): Promise<WebSocketBridge> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  const pairs = new Set<{ ws: WebSocket; socket: Socket }>()
  const bridge: WebSocketBridge = {
    port: 0,
    connections: 0,
    wsProxy: (host, port) => `127.0.0.1:${bridge.port}/v1?address=${host}:${port}`,
    async close() {
      for (const { ws, socket } of pairs) {
        socket.destroy()
        ws.terminate()
      }
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  server.on('connection', (ws, request) => {
    bridge.connections++
    const address = new URL(request.url ?? '/', 'http://bridge').searchParams.get('address') ?? ''
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))]
    if (!/^(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?)$/.test(host) || !port) {
      ws.close(1008, 'the bridge reaches loopback addresses only')
      return
    }
    // Bytes the client sends before the TCP connection opened wait in the socket's buffer.
    const socket = connect({ host: host.replace(/^\[|\]$/g, ''), port })
    const pair = { ws, socket }
    pairs.add(pair)
    socket.setNoDelay(true)
    ws.on('message', (data: Buffer | Buffer[] | ArrayBuffer) => {
      socket.write(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer))
    })
    socket.on('data', (chunk) => ws.readyState === ws.OPEN && ws.send(chunk, { binary: true }))
    const end = () => {
      pairs.delete(pair)
      socket.destroy()
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close()
    }
    socket.on('error', end)
    socket.on('close', end)
    ws.on('close', end)
    ws.on('error', end)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  bridge.port = (server.address() as { port: number }).port
  return bridge
}

/** A bridge for the describe block that calls it: started before its tests, closed after them. */
export function useWebSocketBridge(): () => WebSocketBridge {
  let bridge: WebSocketBridge | undefined
  beforeAll(async () => {
    bridge = await startWebSocketBridge()
  })
  afterAll(() => bridge?.close())
  return () => bridge!
}
