// A baseline for the benchmark: the least a Node proxy can do in the gateway's place (BENCH_GATEWAY=baseline).
// node:http in, one keep-alive Agent out: read the body, JSON.parse it, swap the model, forward it, pipe the answer
// back. No auth, no billing, no validation, no routing. Same stdout line and IPC as bench/gateway-process.ts.
import { Agent, request } from 'node:http'
import { answerStats } from './child-stats'
import { servePlainHop } from './plain-hop'

answerStats()

const upstreamUrl = process.env.BENCH_UPSTREAM_URL
if (!upstreamUrl) {
  console.error('baseline-proxy-process: set BENCH_UPSTREAM_URL to the fake upstream (…/v1)')
  process.exit(2)
}
const upstream = new URL(`${upstreamUrl.replace(/\/+$/, '')}/chat/completions`)
const agent = new Agent({ keepAlive: true, maxSockets: 256 })

await servePlainHop((req, res) => {
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
