// The fake OpenAI-compatible upstream of the benchmark, in its own process (started by bench/chat.ts).
// Prints one JSON line on stdout: { "url": "http://127.0.0.1:<port>/v1" }.
// IPC: answers { type: 'stats' } with its CPU time and memory, { type: 'trim' } by emptying the request log, and
// { type: 'latency', ms } by making every chat answer wait that long before its first byte.
import { startFakeOpenAI } from '../test/fakes/openai'
import { answerStats } from './child-stats'

// Keep-alive connections stay open while the other target's round runs (Node's default closes them after 5 s idle).
const fake = await startFakeOpenAI({ keepAliveTimeoutMs: 120_000 })

// Connections accepted: after the warm-up a keep-alive client opens none; a count near one per request means a
// client closes its connection after each answer.
answerStats(() => ({ requests: fake.requests.length }))
process.on('message', (message: { type?: string; id?: number }) => {
  if (message?.type === 'latency') {
    fake.latencyMs = (message as { ms?: number }).ms ?? 0
    process.send?.({ type: 'latency', id: message.id, ms: fake.latencyMs })
  } else if (message?.type === 'trim') {
    // The fake keeps every request (headers and parsed body) in `fake.requests`; a long run would grow it without bound.
    fake.requests.length = 0
    process.send?.({ type: 'trimmed', id: message.id })
  }
})
const stop = () => void fake.close().finally(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.on('disconnect', stop)

process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`)
