import type { Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** Listens on a free port of 127.0.0.1; `close` also destroys open connections, so no socket outlives a fake. */
export async function listenOnLoopback(server: Server): Promise<{ origin: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>()
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
