// The gateway of the benchmark, in its own process (started by bench/chat.ts): key auth and billing on, one
// OpenAI-compatible provider per fake upstream (BENCH_UPSTREAM_URLS, comma-separated, or BENCH_UPSTREAM_URL), with
// the models fake/bench (the benchmark's) and fake/think (an open stream: the role chunk, then silence; the memory
// phase); with more than one upstream the providers are fake, fake1, fake2, ….
// BENCH_STORAGE: memory (the default) or redis (REDIS_URL, keys under BENCH_REDIS_BASE, cleared when the process
// stops; the Redis commands of each request can then be counted, see bench/redis-commands.ts).
// Prints one JSON line on stdout: { "url": "http://127.0.0.1:<port>", "key": "sk-…" }.
// IPC: { type: 'stats' } / { type: 'gc' } (bench/child-stats.ts), { type: 'profile-start', intervalUs } and
// { type: 'profile-stop', file } (a CPU profile through node:inspector, written to `file`),
// { type: 'redis-count-start' } and { type: 'redis-count-stop' } (answers the counts).
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'
import type { Storage } from 'unstorage'
import { answerStats } from './child-stats'
import { fromDist, loadGateway } from './gateway-module'
import { countRedisCommands } from './redis-commands'

// BENCH_DIST=1: the built package (dist/, as users run it) instead of the TypeScript sources through tsx.
const { createGateway, openaiCompatible } = await loadGateway('gateway-process')
const { serve } = (await import(
  fromDist ? new URL('../dist/adapters/node.mjs', import.meta.url).href : '../adapters/node'
)) as typeof import('../adapters/node')

const upstreamUrls = (process.env.BENCH_UPSTREAM_URLS || process.env.BENCH_UPSTREAM_URL || '').split(',').filter(Boolean)
if (!upstreamUrls.length) {
  console.error('gateway-process: set BENCH_UPSTREAM_URL to the fake upstream (…/v1)')
  process.exit(2)
}

const storageKind = process.env.BENCH_STORAGE || 'memory'
let storage: Storage | undefined
let redisClient: Parameters<typeof countRedisCommands>[0] | undefined
if (storageKind === 'redis') {
  const { createStorage } = await import('unstorage')
  const { default: redisDriver } = await import('unstorage/drivers/redis')
  const driver = redisDriver({ url: process.env.REDIS_URL || 'redis://127.0.0.1:6379', base: process.env.BENCH_REDIS_BASE || `mg-bench-${process.pid}` })
  storage = createStorage({ driver })
  redisClient = driver.getInstance!() as unknown as Parameters<typeof countRedisCommands>[0]
} else if (storageKind !== 'memory') {
  console.error(`gateway-process: BENCH_STORAGE must be memory or redis, got ${storageKind}`)
  process.exit(2)
}

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const gateway = createGateway({
  logger: false,
  // BENCH_INSTRUMENTATION=off: without the Prometheus metrics and the (no-op) spans, to see what they cost.
  ...(process.env.BENCH_INSTRUMENTATION === 'off' ? { metrics: false as const, tracing: false as const } : {}),
  secret: 'bench-secret-bench-secret-bench-secret-0123',
  // BENCH_IN_MEMORY_RECORDS: how many usage records the default storage keeps (bench/instructions.ts: a small number, a
  // heap in a steady state within the warm-up); the gateway's default otherwise.
  ...(process.env.BENCH_IN_MEMORY_RECORDS ? { retention: { inMemoryRecords: Number(process.env.BENCH_IN_MEMORY_RECORDS) } } : {}),
  ...(storage ? { storage } : {}),
  providers: upstreamUrls.map((baseURL, i) => {
    const slug = i === 0 ? 'fake' : `fake${i}`
    return openaiCompatible({
      slug,
      name: `Fake ${i}`,
      baseURL,
      apiKey: 'x',
      models: [
        { id: `${slug}/bench`, upstreamId: 'bench', name: 'Fake bench', pricing },
        { id: `${slug}/think`, upstreamId: 'think', name: 'Fake open stream', pricing },
      ],
    })
  }),
})
const user = await gateway.admin.createUser({ email: 'bench@example.com' })
await gateway.admin.addCredits(user.org_id, '1000000')
const { key } = await gateway.admin.issueKey({ userId: user.id })
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1', maxConnections: 4096 })
server.server.keepAliveTimeout = 120_000 // as the upstream's: idle between rounds is not a reason to reconnect

// Connections the gateway accepted (from the load generator) and opened (to the upstream), CPU and memory.
answerStats()

const counter = redisClient ? countRedisCommands(redisClient, server.server) : undefined
let session: Session | undefined
const post = (method: string, params: object = {}) =>
  new Promise<any>((resolve, reject) => session!.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
// The in-process client's calls (docs/first-party.md#the-in-process-client): the same chat as the load generator's
// HTTP requests, `concurrency` at a time, this process's CPU per call measured over `requests` of them.
async function inProcessRound(requests: number, concurrency: number, stream: boolean) {
  const client = gateway.client({ key })
  const body = {
    model: 'fake/bench',
    messages: [{ role: 'user', content: 'hello benchmark' }],
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }
  const one = async () => {
    const answer = await client.chat.completions.create(body)
    if (stream) for await (const _chunk of answer as AsyncIterable<unknown>);
  }
  const run = async (count: number) => {
    let next = 0
    await Promise.all(
      Array.from({ length: Math.min(concurrency, count) }, async () => {
        while (next++ < count) await one()
      }),
    )
  }
  await run(Math.min(200, requests)) // warm-up
  const cpu = process.cpuUsage()
  const started = performance.now()
  await run(requests)
  const used = process.cpuUsage(cpu)
  const wallMs = performance.now() - started
  return { requests, cpu_ms_per_call: (used.user + used.system) / 1000 / requests, calls_per_s: (requests / wallMs) * 1000 }
}

process.on(
  'message',
  async (message: { type?: string; id?: number; intervalUs?: number; file?: string; requests?: number; concurrency?: number; stream?: boolean }) => {
    try {
      if (message?.type === 'in-process') {
        process.send?.({
          type: 'in-process',
          id: message.id,
          ...(await inProcessRound(message.requests ?? 3000, message.concurrency ?? 32, message.stream === true)),
        })
      } else if (message?.type === 'redis-count-start') {
        counter?.start()
        process.send?.({ type: 'redis-count', id: message.id, counting: Boolean(counter) })
      } else if (message?.type === 'redis-count-stop') {
        process.send?.({ type: 'redis-count', id: message.id, counts: counter?.stop() ?? null })
      } else if (message?.type === 'profile-start') {
        session = new Session()
        session.connect()
        await post('Profiler.enable')
        await post('Profiler.setSamplingInterval', { interval: message.intervalUs ?? 500 })
        await post('Profiler.start')
        process.send?.({ type: 'profile', id: message.id })
      } else if (message?.type === 'profile-stop') {
        const { profile } = await post('Profiler.stop')
        session?.disconnect()
        session = undefined
        writeFileSync(message.file!, JSON.stringify(profile))
        process.send?.({ type: 'profile', id: message.id, file: message.file })
      }
    } catch (error) {
      process.send?.({ type: 'error', id: message?.id, error: String(error) })
    }
  },
)

// Unlinks every key under the Redis gateway's base, 5,000 at a time.
async function clearRedisBase() {
  const base = process.env.BENCH_REDIS_BASE || `mg-bench-${process.pid}`
  const client = redisClient as unknown as
    | { scanStream(options: { match: string; count: number }): AsyncIterable<string[]>; unlink(...keys: string[]): Promise<number> }
    | undefined
  if (!client) return
  for await (const keys of client.scanStream({ match: `${base}:*`, count: 5000 })) if (keys.length) await client.unlink(...keys)
}

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  server.server.closeAllConnections()
  setTimeout(() => process.exit(0), 150_000).unref() // clearing a long run's Redis records takes a while (3 million keys after 10 minutes: about a minute)
  void server
    .close()
    .catch(() => undefined)
    // The benchmark's records in Redis (usage records, keys, balances) go with it: scanned and unlinked in batches (a
    // memory phase leaves a million keys, which one KEYS and DEL, unstorage's clear(), does not remove in time).
    .then(() => clearRedisBase())
    .then(() => storage?.dispose())
    .catch(() => undefined)
    .finally(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.on('disconnect', stop)

process.stdout.write(`${JSON.stringify({ url: server.url, key })}\n`)
