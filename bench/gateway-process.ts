// The gateway of the benchmark, in its own process (started by bench/chat.ts): memory storage (the default),
// key auth and billing on, one OpenAI-compatible provider pointing at the fake upstream (BENCH_UPSTREAM_URL).
// Prints one JSON line on stdout: { "url": "http://127.0.0.1:<port>", "key": "sk-…" }.
// IPC: answers { type: 'stats' } with its CPU time and memory.
import { existsSync } from 'node:fs'
import { answerStats } from './child-stats'

// BENCH_DIST=1: the built package (dist/, as users run it) instead of the TypeScript sources through tsx.
const fromDist = Boolean(process.env.BENCH_DIST)
const distIndex = new URL('../dist/index.mjs', import.meta.url)
if (fromDist && !existsSync(distIndex)) {
  console.error('gateway-process: BENCH_DIST is set but dist/ is missing: run npm run build first')
  process.exit(2)
}
const { createGateway, openaiCompatible } = (await import(fromDist ? distIndex.href : '../src/index')) as typeof import('../src/index')
const { serve } = (await import(
  fromDist ? new URL('../dist/adapters/node.mjs', import.meta.url).href : '../adapters/node'
)) as typeof import('../adapters/node')

// Connections the gateway accepted (from the load generator) and opened (to the upstream), CPU and memory.
answerStats()

const upstreamUrl = process.env.BENCH_UPSTREAM_URL
if (!upstreamUrl) {
  console.error('gateway-process: set BENCH_UPSTREAM_URL to the fake upstream (…/v1)')
  process.exit(2)
}

const gateway = createGateway({
  logger: false,
  secret: 'bench-secret-bench-secret-bench-secret-0123',
  providers: [
    openaiCompatible({
      slug: 'fake',
      name: 'Fake',
      baseURL: upstreamUrl,
      apiKey: 'x',
      models: [{ id: 'fake/bench', upstreamId: 'bench', name: 'Fake bench', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }],
    }),
  ],
})
const user = await gateway.admin.createUser({ email: 'bench@example.com' })
await gateway.admin.addCredits(user.org_id, '1000000')
const { key } = await gateway.admin.issueKey({ userId: user.id })
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
server.server.keepAliveTimeout = 120_000 // as the upstream's: idle between rounds is not a reason to reconnect

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  server.server.closeAllConnections()
  // exit() after close so that --cpu-prof writes its profile.
  void server
    .close()
    .catch(() => undefined)
    .finally(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.on('disconnect', stop)

process.stdout.write(`${JSON.stringify({ url: server.url, key })}\n`)
