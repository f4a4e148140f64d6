/**
 * A Redis that stops answering (docs/operations.md#when-the-storage-fails), over real HTTP: a redis-server of the
 * test's own, paused with SIGSTOP (it keeps its connections and answers nothing), under two gateway instances. Every
 * request answers within `storageTimeoutMs` and a margin, a 503 naming the storage and the bound, though the pause
 * outlasts `requestTimeoutMs`; requests already served end (a stream with its usage and [DONE]) while their settlement
 * waits; after SIGCONT the gateways serve again by themselves and the money reconciles: balance = Σ usage = Σ ledger,
 * nothing left held. close() during a stall returns within its drain, leaving a sweep stuck on the storage behind.
 * Redis killed: its client's errors go to the gateway's logger, and nothing to stderr with `logger: false`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { createGateway, type GatewayOptions } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { hasRedisServer } from '../helpers/redis-cluster'
import { type RedisServer, startRedisServer } from '../helpers/redis-process'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'
import { expectReconciled, expectStorageTimeout, type TimedAnswer, timed } from '../helpers/outage'
import { fakeUpProvider } from '../helpers/providers'
import { startServerProcess } from '../helpers/server-process'

const BOUND_MS = 2000
// What an answer may take past the bound: the event loop, the HTTP round trip, a busy 2-core machine.
const MARGIN_MS = 1500
const PAUSE_MS = 20_000
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Line {
  level: string
  message: string
  fields?: Record<string, unknown>
}

describe.skipIf(!hasRedisServer())('a stalled Redis (SIGSTOP on a redis-server of its own)', () => {
  let redis: RedisServer
  let upstream: FakeOpenAI
  const base = `mg-stall-${process.pid}`
  const lines: Line[] = []
  const logger = {
    debug: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'debug', message, fields }),
    info: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'info', message, fields }),
    warn: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'warn', message, fields }),
    error: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'error', message, fields }),
  }
  const started: TestGateway[] = []

  const gatewayOptions = (extra: GatewayOptions = {}): GatewayOptions => ({
    storage: createStorage({ driver: redisDriver({ url: redis.url, base }) }),
    storageTimeoutMs: BOUND_MS,
    requestTimeoutMs: 8000,
    logger,
    byok: { settlementIntervalSeconds: 0 },
    retention: { sweepIntervalSeconds: 0 },
    providers: [fakeUpProvider(upstream, pricing)],
    ...extra,
  })
  const start = async (extra?: GatewayOptions) => {
    const t = await startGateway(gatewayOptions(extra))
    started.push(t)
    return t
  }

  beforeAll(async () => {
    redis = await startRedisServer()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
  }, 30_000)
  afterEach(async () => {
    redis.resume()
    upstream.latencyMs = 0
    const gateways = started.splice(0)
    await Promise.all(gateways.map((t) => t.close()))
    await Promise.all(gateways.map((t) => t.gateway.internals.storage.dispose()))
  }, 30_000)
  afterAll(async () => {
    await upstream?.close()
    await redis?.stop()
  })

  const chat = (t: TestGateway, customer: { auth: Record<string, string> }, stream: boolean) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'fake/gpt-test', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
    })

  /** The 503 of a storage that did not answer: the envelope names Redis and the bound, never where it runs. */
  const expectStorage503 = (answer: TimedAnswer) =>
    expectStorageTimeout(answer, { name: 'redis', label: 'Redis', boundMs: BOUND_MS, marginMs: MARGIN_MS, port: redis.port })

  it(`paused ${PAUSE_MS / 1000} s (requestTimeoutMs 8 s, storageTimeoutMs 2 s): every request answers within the bound, then the gateways serve again and the money reconciles`, async () => {
    const a = await start()
    const b = await start()
    const customer = await createCustomer(a.gateway, { credits: '5' })
    // Served before the pause, on both instances (their keys are then in each one's authentication cache).
    for (const t of [a, b]) expect((await timed(() => chat(t, customer, false))).status).toBe(200)

    // Requests in flight when Redis stops: held already, their provider answers in 1 s, their settlement waits.
    upstream.latencyMs = 1000
    const arrived = upstream.requests.length
    const inFlight = [chat(a, customer, false), chat(a, customer, true), chat(b, customer, false), chat(b, customer, true)].map((sent) => timed(() => sent))
    await expect.poll(() => upstream.requests.length - arrived, { interval: 10 }).toBe(4)
    redis.pause()
    const pausedAt = performance.now()
    const resumeAnyway = setTimeout(() => redis.resume(), PAUSE_MS + 5000)

    // Every request sent while Redis is paused: whole, streamed, /me, /credits, on both instances.
    const wave = () =>
      Promise.all(
        [a, b].flatMap((t) => [
          timed(() => chat(t, customer, false)),
          timed(() => chat(t, customer, true)),
          timed(() => t.request('/api/v1/me', { headers: customer.auth })),
          timed(() => t.request('/api/v1/credits', { headers: customer.auth })),
        ]),
      )
    const first = await wave()
    for (const answer of first) expectStorage503(answer)

    // Those in flight were served: whole answers, and streams to their usage and [DONE], within the bound of the
    // settlement they waited for (their provider took 1 s after the pause began).
    for (const answer of await Promise.all(inFlight)) {
      expect(answer.status).toBe(200)
      expect(answer.ms).toBeLessThan(1000 + BOUND_MS + MARGIN_MS + 500)
      if (Array.isArray(answer.body.events)) {
        expect(answer.body.raw).toContain('data: [DONE]')
        expect(answer.body.events.at(-1)).toBe('[DONE]')
        expect(answer.body.events.at(-2).usage.cost_eur).toBeGreaterThan(0)
      } else expect(answer.body.choices[0].message.content).toContain('hello there')
    }

    // Past requestTimeoutMs into the pause, the same.
    await sleep(9000 - (performance.now() - pausedAt))
    for (const answer of await wave()) expectStorage503(answer)
    // The authentication cache has expired by now: keys are read from Redis, and the read is bounded too.
    const late = await timed(() => chat(a, customer, false))
    expectStorage503(late)

    // Nothing was sent to the provider while the storage could not hold its cost.
    expect(upstream.requests.length - arrived).toBe(4)
    await sleep(PAUSE_MS - (performance.now() - pausedAt))
    redis.resume()
    clearTimeout(resumeAnyway)
    upstream.latencyMs = 0

    // Both instances serve again by themselves within seconds.
    const resumedAt = performance.now()
    for (const t of [a, b]) {
      await expect.poll(async () => (await timed(() => chat(t, customer, false))).status, { timeout: 5000, interval: 100 }).toBe(200)
    }
    expect(performance.now() - resumedAt).toBeLessThan(5000)
    // 2 before the pause, 4 in flight, 2 after; the money reconciles once what waited in Redis ran.
    await expect.poll(async () => (await a.gateway.admin.usage(customer.user.org_id)).length, { timeout: 5000 }).toBe(8)
    await expect.poll(() => expectReconciled(a.gateway, customer, 8).then(() => true), { timeout: 10_000, interval: 200 }).toBe(true)
    await expectReconciled(b.gateway, customer, 8)
  }, 60_000)

  it('close() during a stall returns within drainTimeoutMs, leaving a sweep stuck on the storage behind', async () => {
    const drainTimeoutMs = 3000
    const t = await start({ drainTimeoutMs, retention: { sweepIntervalSeconds: 1 } })
    const customer = await createCustomer(t.gateway, { credits: '5' })
    expect((await timed(() => chat(t, customer, false))).status).toBe(200)
    upstream.latencyMs = 1000
    const arrived = upstream.requests.length
    const inFlight = timed(() => chat(t, customer, true))
    await expect.poll(() => upstream.requests.length - arrived, { interval: 10 }).toBe(1)
    redis.pause()
    // Without a bound on the wait, close() would wait as long as the pause: Redis answers again after 12 s anyway.
    const resumeAnyway = setTimeout(() => redis.resume(), 12_000)
    // A sweep begins within a second, and waits on Redis (it lists the records it may remove).
    await sleep(1500)
    const closing = performance.now()
    await t.gateway.close()
    const took = performance.now() - closing
    clearTimeout(resumeAnyway)
    expect(took).toBeLessThan(drainTimeoutMs + MARGIN_MS)
    await t.close()
    started.splice(started.indexOf(t), 1)
    // The stream in flight ended whole meanwhile, its settlement left to the storage's return.
    const answer = await inFlight
    expect(answer.status).toBe(200)
    expect(answer.body.raw).toContain('data: [DONE]')
    expect(lines.some((l) => l.level === 'warn' && l.message.startsWith('closing without the retention sweep'))).toBe(true)
    redis.resume()
    await t.gateway.internals.storage.dispose()
  }, 30_000)

  /** A gateway process over this Redis (../helpers/redis-gateway-process.ts): its URL, its stderr so far, and stop(). */
  const gatewayProcess = (logger: 'console' | 'off') =>
    startServerProcess(new URL('../helpers/redis-gateway-process.ts', import.meta.url), {
      REDIS_URL: redis.url,
      REDIS_BASE: base,
      UPSTREAM_URL: upstream.url,
      STORAGE_TIMEOUT_MS: '1000',
      LOGGER: logger,
    })

  for (const logger of ['console', 'off'] as const) {
    it(`Redis killed, then started again: its client's errors go to the logger (${logger === 'off' ? 'logger: false: nothing' : 'one line'} on stderr), the gateway serves again`, async () => {
      const child = await gatewayProcess(logger)
      // Customers are created beside it, by a gateway over the same Redis.
      const admin = createGateway({ secret: TEST_SECRET, logger: false, storage: createStorage({ driver: redisDriver({ url: redis.url, base }) }) })
      const send = (customer: { auth: Record<string, string> }) =>
        timed(() =>
          fetch(`${child.url}/api/v1/chat/completions`, {
            method: 'POST',
            headers: { ...customer.auth, ...json },
            body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
          }),
        )
      try {
        const customer = await createCustomer(admin, { credits: '5' })
        expect((await send(customer)).status).toBe(200)
        await redis.kill()
        // Its client tries to reconnect, and fails, several times a second.
        await sleep(2500)
        const refused = await send(customer)
        expect(refused.status).toBe(503)
        expect(refused.ms).toBeLessThan(1000 + MARGIN_MS)
        expect(refused.body.error.metadata).toEqual({ error_type: 'storage_unavailable', storage: 'redis', timeout_ms: 1000 })
        await redis.start()
        // A Redis started empty: the customer is created again, and served as soon as the client reconnected.
        const again = await createCustomer(admin, { credits: '5' })
        await expect.poll(async () => (await send(again)).status, { timeout: 5000, interval: 100 }).toBe(200)
      } finally {
        await child.stop()
        await admin.close()
        await admin.internals.storage.dispose()
      }
      const stderr = child.stderr()
      expect(stderr).not.toContain('Unhandled error event')
      if (logger === 'off') expect(stderr).toBe('')
      else {
        // Reported once at once, then at most once per 10 s, however often the client failed meanwhile.
        const reports = stderr.split('\n').filter((line) => line.includes('the Redis connection failed'))
        expect(reports).toHaveLength(1)
        expect(reports[0]).toMatch(/^\[model-gateway\] error the Redis connection failed; its client reconnects by itself \{"error":"[^"]*ECONNREFUSED/)
      }
    }, 60_000)
  }
})
