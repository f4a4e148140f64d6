// How the benchmark's plain hops (the bare proxy, the h3 floor) run: listen on 127.0.0.1, keep idle connections as
// long as the upstream does, stop on SIGTERM, SIGINT or the IPC channel closing, and print their one JSON line.
import type { RequestListener } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Serves `listener` as a benchmark hop and prints { url, key: 'none' } once it listens. */
export async function servePlainHop(listener: RequestListener): Promise<void> {
  const server = createServer(listener)
  server.keepAliveTimeout = 120_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const stop = () => {
    server.closeAllConnections()
    server.close(() => process.exit(0))
    setTimeout(() => process.exit(0), 2000).unref()
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  process.on('disconnect', stop)
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key: 'none' })}\n`)
}
