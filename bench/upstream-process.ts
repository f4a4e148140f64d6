// The fake OpenAI-compatible upstream of the benchmark, in its own process (started by bench/chat.ts).
// BENCH_UPSTREAM_COUNT fakes (1 by default), each on its own port: the gateway opens at most 256 connections per
// upstream origin (src/providers/http.ts), so the memory phase's 1,000 open streams need four.
// Prints one JSON line on stdout: { "url": "http://127.0.0.1:<port>/v1", "urls": "<url>,<url>,…" }.
// IPC: answers { type: 'stats' } with its CPU time and memory, { type: 'trim' } by emptying the request logs,
// { type: 'latency', ms } by making every chat answer wait that long before its first byte, and { type: 'slow', ms }
// by setting how long the `think` model stays silent after its first chunk (an open stream).
import { startFakeOpenAI } from '../test/fakes/openai'
import { answerStats } from './child-stats'

const count = Math.max(1, Number(process.env.BENCH_UPSTREAM_COUNT) || 1)
// Keep-alive connections stay open while the other targets' rounds run (Node's default closes them after 5 s idle).
const fakes = await Promise.all(Array.from({ length: count }, () => startFakeOpenAI({ keepAliveTimeoutMs: 120_000 })))

// Connections accepted: after the warm-up a keep-alive client opens none; a count near one per request means a
// client closes its connection after each answer.
answerStats(() => ({ requests: fakes.reduce((n, f) => n + f.requests.length, 0) }))
process.on('message', (message: { type?: string; id?: number; ms?: number }) => {
  if (message?.type === 'latency') {
    for (const fake of fakes) fake.latencyMs = message.ms ?? 0
    process.send?.({ type: 'latency', id: message.id, ms: message.ms ?? 0 })
  } else if (message?.type === 'slow') {
    for (const fake of fakes) fake.slowMs = message.ms ?? 0
    process.send?.({ type: 'slow', id: message.id, ms: message.ms ?? 0 })
  } else if (message?.type === 'trim') {
    // Each fake keeps every request (headers and parsed body) in `fake.requests`; a long run would grow it without bound.
    for (const fake of fakes) {
      fake.requests.length = 0
      fake.arrivals.length = 0
    }
    process.send?.({ type: 'trimmed', id: message.id })
  }
})
const stop = () => void Promise.all(fakes.map((f) => f.close())).finally(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.on('disconnect', stop)

process.stdout.write(`${JSON.stringify({ url: fakes[0].url, urls: fakes.map((f) => f.url).join(',') })}\n`)
