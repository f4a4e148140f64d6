// The benchmark's "h3" target, the framework floor (BENCH_TARGETS=…,h3): the shape the gateway is built in, with no
// gateway code at all. One h3 v2 POST route behind h3/node's handler (srvx, as the gateway's Node adapter serves it)
// reads the body from Node's own IncomingMessage, JSON-parses it, swaps the model, forwards it over a keep-alive
// node:http Agent (the bare proxy's) and answers with srvx's FastResponse: the whole answer as a string, a stream as a
// web ReadableStream over the upstream's bytes (one chunk per pull). No auth, validation, routing, billing or
// records: what is left between the bare proxy and this is the framework; what the gateway costs above it is its own
// work (bench/README.md#the-framework-floor). Same stdout line and IPC as the other hops.
import { Agent, type IncomingMessage, request } from 'node:http'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { FastResponse } from 'srvx'
import { answerStats } from './child-stats'
import { servePlainHop } from './plain-hop'

answerStats()

const upstreamUrl = process.env.BENCH_UPSTREAM_URL
if (!upstreamUrl) {
  console.error('h3-floor-process: set BENCH_UPSTREAM_URL to the fake upstream (…/v1)')
  process.exit(2)
}
const upstream = new URL(`${upstreamUrl.replace(/\/+$/, '')}/chat/completions`)
const agent = new Agent({ keepAlive: true, maxSockets: 256 })

/** The request body, read from Node's own request. */
const bodyOf = (req: NodeJS.ReadableStream) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk) => chunks.push(chunk as Buffer))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })

/** Posts `payload` upstream over the keep-alive agent; resolves with the answer's headers and its byte stream. */
const forward = (payload: string) =>
  new Promise<IncomingMessage>((resolve, reject) => {
    const out = request(
      upstream,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      resolve,
    )
    out.on('error', reject)
    out.end(payload)
  })

const app = new H3()
app.post('/api/v1/chat/completions', async (event) => {
  const body = JSON.parse(await bodyOf(event.runtime!.node!.req as IncomingMessage)) as { model?: unknown; stream?: unknown }
  body.model = String(body.model).replace(/^fake\//, '')
  const answer = await forward(JSON.stringify(body))
  const headers = { 'content-type': answer.headers['content-type'] ?? 'application/json' }
  if (body.stream !== true) return new FastResponse(await bodyOf(answer), { status: answer.statusCode ?? 502, headers })
  const chunks = answer[Symbol.asyncIterator]()
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      },
      cancel: () => {
        answer.destroy()
      },
    },
    { highWaterMark: 0 },
  )
  return new FastResponse(stream, { status: answer.statusCode ?? 502, headers })
})
const handle = toNodeHandler(app)
await servePlainHop((req, res) => void handle(req, res))
