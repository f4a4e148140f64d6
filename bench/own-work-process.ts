// The gateway's own work per chat call, with nothing else in the process: the in-process client
// (docs/first-party.md#the-in-process-client) calls the gateway, whose provider's transport replays the bytes the
// benchmark's fake upstream (test/fakes/openai.ts) answered to the same request, captured once over HTTP at start.
// No socket, no HTTP server or client, no timer-dependent batching: what runs per call is the gateway's code (auth,
// validation, routing, the hold, pricing, the charge, the record, shaping, metrics) and V8's, so that under callgrind
// with V8 on one thread the same code counts the same (bench/instructions.ts, target `own`; bench/README.md).
// Memory storage keeping BENCH_IN_MEMORY_RECORDS usage records (500). BENCH_DIST=1: the built package.
// Prints one JSON line on stdout when ready; then reads commands on stdin, one per line: `whole <calls> <at once>` or
// `stream <calls> <at once>`, and answers each with a line `done <cpu ms per call>`.
// Alone: BENCH_OWN_RUN=whole:5000,whole:20000 [BENCH_OWN_PROFILE=own.cpuprofile] npx tsx bench/own-work-process.ts
import { writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { startFakeOpenAI } from '../test/fakes/openai'
import { loadGateway } from './gateway-module'
import { withInspector } from './inspector'

const { createGateway, openaiCompatible } = await loadGateway('own-work-process')
type Transport = NonNullable<Parameters<typeof openaiCompatible>[0]['transport']>

/** What the fake upstream answered: status, headers and the body's chunks as they arrived. */
interface Answer {
  status: number
  headers: Record<string, string>
  chunks: Uint8Array[]
}

/** Asks the real fake upstream once, over HTTP, and keeps its answer's bytes. */
async function capture(url: string, body: object): Promise<Answer> {
  const res = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify(body),
  })
  const headers: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    headers[name] = value
  })
  const chunks: Uint8Array[] = []
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk)
  return { status: res.status, headers, chunks }
}

const messages = [{ role: 'user', content: 'hello benchmark' }]
const fake = await startFakeOpenAI()
const answers = {
  whole: await capture(fake.url, { model: 'bench', messages }),
  stream: await capture(fake.url, { model: 'bench', messages, stream: true, stream_options: { include_usage: true } }),
}
await fake.close()

/** Replays the captured answer for the request's kind (a body asking for a stream gets the stream's bytes). */
// BENCH_OWN_DELAY_MS: the replay answers after that long (a timer), as an upstream would: the process idles meanwhile.
const delayMs = Number(process.env.BENCH_OWN_DELAY_MS) || 0
const replay: Transport = async (_url, init) => {
  if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs))
  const answer = typeof init.body === 'string' && init.body.includes('"stream":true') ? answers.stream : answers.whole
  return {
    status: answer.status,
    headers: answer.headers,
    body: (async function* () {
      yield* answer.chunks
    })(),
    text: async () => Buffer.concat(answer.chunks).toString('utf8'),
  }
}

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const gateway = createGateway({
  logger: false,
  secret: 'bench-secret-bench-secret-bench-secret-0123',
  retention: { inMemoryRecords: Number(process.env.BENCH_IN_MEMORY_RECORDS) || 500 },
  providers: [
    openaiCompatible({
      slug: 'fake',
      name: 'Fake',
      apiKey: 'x',
      // BENCH_OWN_UPSTREAM=<url of a fake upstream's /v1>: the real transport (node:http) to it instead of the replay.
      ...(process.env.BENCH_OWN_UPSTREAM ? { baseURL: process.env.BENCH_OWN_UPSTREAM } : { baseURL: 'http://127.0.0.1:9/v1', transport: replay }),
      models: [{ id: 'fake/bench', upstreamId: 'bench', name: 'Fake bench', pricing }],
    }),
  ],
})
const user = await gateway.admin.createUser({ email: 'bench@example.com' })
await gateway.admin.addCredits(user.org_id, '1000000')
const { key } = await gateway.admin.issueKey({ userId: user.id })
const client = gateway.client({ key })

/** Runs `calls` chat calls of one kind, `atOnce` at a time; resolves with the CPU milliseconds per call. */
async function run(kind: 'whole' | 'stream', calls: number, atOnce: number): Promise<number> {
  const body = { model: 'fake/bench', messages, ...(kind === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}) }
  let next = 0
  const cpu = process.cpuUsage()
  await Promise.all(
    Array.from({ length: Math.min(atOnce, calls) }, async () => {
      while (next++ < calls) {
        const answer = await client.chat.completions.create(body)
        if (kind === 'stream') for await (const _chunk of answer as AsyncIterable<unknown>);
        else if (!(answer as { usage?: { cost?: unknown } }).usage?.cost) throw new Error('own-work: an answer without a cost (billing did not run)')
      }
    }),
  )
  const used = process.cpuUsage(cpu)
  return (used.user + used.system) / 1000 / calls
}

/** Runs `work` under V8's sampling profiler (100 µs) and writes the profile to `file`. */
const profiled = (file: string, work: () => Promise<number>): Promise<number> =>
  withInspector(async (post) => {
    await post('Profiler.enable')
    await post('Profiler.setSamplingInterval', { interval: 100 })
    await post('Profiler.start')
    const ms = await work()
    writeFileSync(file, JSON.stringify((await post('Profiler.stop')).profile))
    return ms
  })

/** Runs `work` under V8's sampling heap profiler, collected objects included (what the collector has to clean up). */
const allocations = (file: string, work: () => Promise<number>): Promise<number> =>
  withInspector(async (post) => {
    await post('HeapProfiler.enable')
    await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
    const ms = await work()
    writeFileSync(file, JSON.stringify((await post('HeapProfiler.stopSampling')).profile))
    return ms
  })

// BENCH_OWN_RUN=whole:5000,whole:20000 runs those parts in turn and prints each one's CPU per call; with
// BENCH_OWN_PROFILE=<file> the last part runs under the CPU profiler (the earlier ones warm up), with
// BENCH_OWN_HEAP_PROFILE=<file> under the sampling heap profiler (a .heapprofile: where the bytes are allocated).
const alone = process.env.BENCH_OWN_RUN
if (alone) {
  const parts = alone.split(',')
  for (const [i, part] of parts.entries()) {
    const [kind, calls] = part.split(':')
    const work = () => run(kind as 'whole' | 'stream', Number(calls) || 10_000, 8)
    const last = i === parts.length - 1
    const cpu = process.env.BENCH_OWN_PROFILE
    const heap = process.env.BENCH_OWN_HEAP_PROFILE
    const ms = last && cpu ? await profiled(cpu, work) : last && heap ? await allocations(heap, work) : await work()
    console.log(`${kind}: ${ms.toFixed(4)} ms CPU per call`)
  }
  process.exit(0)
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
for await (const line of createInterface({ input: process.stdin })) {
  const [kind, calls, atOnce] = line.trim().split(/\s+/)
  if (kind !== 'whole' && kind !== 'stream') continue
  const ms = await run(kind, Number(calls) || 1000, Number(atOnce) || 8)
  process.stdout.write(`done ${ms}\n`)
}
