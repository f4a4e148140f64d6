// A baseline for the benchmark: the least a Node proxy can do in the gateway's place (BENCH_GATEWAY=baseline).
// node:http in, one keep-alive Agent out: read the body, JSON.parse it, swap the model, forward it, pipe the answer
// back. No auth, no billing, no validation, no routing. Same stdout line and IPC as bench/gateway-process.ts.
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { answerStats } from './child-stats'

answerStats()

const upstreamUrl = process.env.BENCH_UPSTREAM_URL
if (!upstreamUrl) {
  console.error('baseline-proxy-process: set BENCH_UPSTREAM_URL to the fake upstream (…/v1)')
  process.exit(2)
}
const upstream = new URL(`${upstreamUrl.replace(/\/+$/, '')}/chat/completions`)
const agent = new Agent({ keepAlive: true, maxSockets: 256 })

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    body.model = String(body.model).replace(/^fake\//, '')
    const payload = JSON.stringify(body)
    const out = request(
      upstream,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/json' })
        answer.pipe(res)
      },
    )
    out.on('error', () => res.writeHead(502).end())
    out.end(payload)
  })
})
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
