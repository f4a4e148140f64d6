// The benchmark's "h3" target (BENCH_TARGETS=…,h3): the shape the gateway is built in, with nothing of the gateway.
// An h3 app behind h3/node's handler (srvx, as the gateway's Node adapter serves it), one POST route that reads the
// body from Node's IncomingMessage and JSON-parses it (the gateway's readJsonBody), swaps the model, forwards it
// through the gateway's upstream client (src/providers/http.ts) and answers with srvx's FastResponse: the whole
// answer as a string, a stream as a web ReadableStream over the upstream's bytes (one chunk per pull, as the gateway
// pipes them). No auth, validation, routing, billing or records: what is left between the bare proxy and the gateway
// is the framework floor; what is above it is the gateway's own work. Same stdout line and IPC as the other hops.
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { FastResponse } from 'srvx'
import { readJsonBody } from '../src/http/body'
import { upstreamFetch } from '../src/providers/http'
import { answerStats } from './child-stats'
import { servePlainHop } from './plain-hop'

answerStats()

const upstreamUrl = process.env.BENCH_UPSTREAM_URL
if (!upstreamUrl) {
  console.error('h3-floor-process: set BENCH_UPSTREAM_URL to the fake upstream (…/v1)')
  process.exit(2)
}
const upstream = `${upstreamUrl.replace(/\/+$/, '')}/chat/completions`

const app = new H3()
app.post('/api/v1/chat/completions', async (event) => {
  const body = (await readJsonBody(event, 1024 * 1024)) as { model?: unknown; stream?: unknown }
  body.model = String(body.model).replace(/^fake\//, '')
  const abort = new AbortController()
  const answer = await upstreamFetch(upstream, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: abort.signal,
    timeoutMs: 30_000,
    provider: { slug: 'fake', name: 'fake' },
  })
  const headers = { 'content-type': answer.headers['content-type'] ?? 'application/json' }
  if (body.stream !== true) return new FastResponse(await answer.text(), { status: answer.status, headers })
  const chunks = answer.body[Symbol.asyncIterator]()
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      },
      cancel: () => abort.abort(),
    },
    { highWaterMark: 0 },
  )
  return new FastResponse(stream, { status: answer.status, headers })
})
const handle = toNodeHandler(app)
await servePlainHop((req, res) => void handle(req, res))
