/**
 * Settlements that fail because Redis is down are kept and tried again until they land, exactly once
 * (docs/operations.md#settlements-that-fail), over real HTTP against a redis-server the test starts, kills (SIGKILL)
 * and starts again on the same data: two gateway instances with 30 chats in flight (whole and streamed) when Redis
 * dies for 15 s; a gateway process with a journal killed while its settlements are pending, and started again once
 * Redis is back. Each ends with balance = Σ usage = Σ ledger = Σ what the clients were told, one usage record per
 * served answer, and no hold left; the retry queue's own timers run for real.
 */
import type { ChildProcess } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import type { Gateway } from '../../src/index'
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai'
import { hasRedisServer } from '../helpers/redis-cluster'
import { type PersistentRedis, startPersistentRedis } from '../helpers/redis-persistent'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { startTcpProxy } from '../helpers/tcp-proxy'
import { fakeUpProvider } from '../helpers/providers'
import { startServerProcess } from '../helpers/server-process'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Customer = Awaited<ReturnType<typeof createCustomer>>

// The value of one series of the text exposition (`name{labels}`), or undefined.
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** A chat to `url` for `customer`; resolves with the EUR cost the client was told (usage.cost_eur), once it is read whole. */
async function chat(url: string, customer: Customer, stream: boolean): Promise<{ status: number; costEur?: string }> {
  const res = await fetch(`${url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { ...customer.auth, ...json },
    body: JSON.stringify({ model: 'fake/gpt-test', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
  })
  if (res.status !== 200) return { status: res.status }
  if (!stream) {
    const body = await res.json()
    expect(body.choices[0].message.content).toContain('Hello from gpt-test')
    return { status: 200, costEur: String(body.usage.cost_eur) }
  }
  const { events } = await readSse(res)
  expect(events.at(-1)).toBe('[DONE]')
  const usage = events.find((e) => e !== '[DONE]' && e.usage)?.usage
  expect(events.filter((e) => e !== '[DONE]' && e.choices?.[0]?.delta?.content).length).toBeGreaterThan(0)
  return { status: 200, costEur: String(usage.cost_eur) }
}

/** Balance decrease = Σ usage records = Σ ledger charges = Σ `told` (what the clients were told), `told.length` records, and nothing held. */
async function reconciled(gateway: Gateway, customer: Customer, told: string[]) {
  const org = customer.user.org_id
  const credits = await gateway.admin.getCredits(org)
  const records = await gateway.admin.usage(org)
  const ledger = (await gateway.admin.ledger(org)).filter((e) => e.kind === 'charge')
  expect(records).toHaveLength(told.length)
  expect(ledger).toHaveLength(told.length)
  const recorded = records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)
  expect(recorded).toBeGreaterThan(0n)
  expect(recorded).toBe(told.reduce((sum, cost) => sum + toUnits(cost), 0n))
  expect(toUnits(credits.total_usage)).toBe(recorded)
  expect(ledger.reduce((sum, e) => sum + toUnits(e.amount), 0n)).toBe(recorded)
  const principal = (await gateway.admin.findUserByKey(customer.key))!
  for (const budget of budgetsOf(gateway.context, principal).budgets) expect(await gateway.context.holds.held(budget, Date.now())).toBe(0n)
}

/** GET /health/ready's settlements check, and GET /metrics' pending and landed settlements. */
async function settlementsOf(url: string) {
  const ready = await fetch(`${url}/api/v1/health/ready`)
  const body = await ready.json()
  const metrics = await (await fetch(`${url}/api/v1/metrics`)).text()
  return {
    status: ready.status,
    check: body.checks.settlements as { ok: boolean; pending: number; journal?: string },
    pending: sample(metrics, 'model_gateway_settlements_pending'),
    landed: sample(metrics, 'model_gateway_settlements_landed_total{kind="charge"}') ?? 0,
    givenUp: metrics.split('\n').filter((l) => l.startsWith('model_gateway_settlements_given_up_total{')).length,
  }
}

/** Polls `check` every 250 ms until it returns true, for up to `ms`; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now()
  for (;;) {
    if (await check()) return Date.now() - started
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`)
    await sleep(250)
  }
}

describe.skipIf(!hasRedisServer())('settlements kept while Redis is down land once it is back (a redis-server the test kills)', () => {
  let redis: PersistentRedis
  let upstream: FakeOpenAI

  beforeAll(async () => {
    redis = await startPersistentRedis()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
  }, 30_000)
  afterAll(async () => {
    await upstream?.close()
    await redis?.stop()
  })

  const provider = () => fakeUpProvider(upstream, pricing)

  it('Redis killed for 15 s with 30 chats in flight on two instances: every served answer is charged once within seconds of its return', async () => {
    const base = `mg-retry-${Math.random().toString(36).slice(2, 8)}`
    const open = () => createStorage({ driver: redisDriver({ url: redis.url, base }) })
    const options = { providers: [provider()], metrics: { route: true } as const }
    const gateways: TestGateway[] = [await startGateway({ ...options, storage: open() }), await startGateway({ ...options, storage: open() })]
    try {
      const customers = [await createCustomer(gateways[0].gateway, { credits: '5' }), await createCustomer(gateways[0].gateway, { credits: '5' })]
      customers.push(await createCustomer(gateways[1].gateway, { credits: '5' }))
      // Every chat waits 2 s for its provider's first byte: all 30 have placed their holds and are in flight when Redis dies.
      upstream.latencyMs = 2000
      const arrived = upstream.arrivals.length
      const chats = Array.from({ length: 30 }, (_, i) => {
        const customer = customers[i % 3]
        return chat(gateways[i % 2].url, customer, (i >> 1) % 2 === 1).then((outcome) => ({ ...outcome, customer }))
      })
      await within(10_000, async () => upstream.arrivals.length - arrived === 30)
      await redis.kill()
      const killedAt = Date.now()

      // Meanwhile each instance keeps what it could not settle, says so in /health/ready and /metrics, and answers.
      await within(14_000, async () => {
        const states = await Promise.all(gateways.map((t) => settlementsOf(t.url)))
        return states.reduce((sum, s) => sum + s.check.pending, 0) === 30 && states.reduce((sum, s) => sum + (s.pending ?? 0), 0) === 30
      })
      const during = await Promise.all(gateways.map((t) => settlementsOf(t.url)))
      for (const state of during) {
        // Not ready (the storage does not answer), the settlements reported: under their bound, they are not a failure.
        expect(state.status).toBe(503)
        expect(state.check.ok).toBe(true)
        expect(state.check.pending).toBeGreaterThan(0)
      }
      const outcomes = await Promise.all(chats)
      expect(outcomes.map((o) => o.status)).toEqual(Array(30).fill(200))

      await sleep(Math.max(0, 15_000 - (Date.now() - killedAt)))
      await redis.start()
      const tookMs = await within(20_000, async () => {
        const states = await Promise.all(gateways.map((t) => settlementsOf(t.url)))
        return states.every((s) => s.status === 200 && s.check.pending === 0 && s.pending === 0)
      })
      // Within seconds of Redis answering again (the longest wait between two tries is 10 s).
      expect(tookMs).toBeLessThan(13_000)
      const after = await Promise.all(gateways.map((t) => settlementsOf(t.url)))
      expect(after.reduce((sum, s) => sum + s.landed, 0)).toBe(30)
      expect(after.map((s) => s.givenUp)).toEqual([0, 0])
      for (const customer of customers) {
        const told = outcomes.filter((o) => o.customer === customer).map((o) => o.costEur!)
        expect(told).toHaveLength(10)
        await reconciled(gateways[0].gateway, customer, told)
      }
      // And the instances serve again, charging at once.
      const next = await chat(gateways[1].url, customers[0], false)
      expect(next.status).toBe(200)
    } finally {
      upstream.latencyMs = 0
      for (const t of gateways) await t.close()
    }
  }, 90_000)

  it('a hold whose placement timed out (Redis stalled) is removed as soon as Redis answers: the org is not refused by it', async () => {
    const proxy = await startTcpProxy({ port: redis.port })
    const base = `mg-orphan-${Math.random().toString(36).slice(2, 8)}`
    const t = await startGateway({
      providers: [provider()],
      metrics: { route: true },
      storage: createStorage({ driver: redisDriver({ url: `redis://127.0.0.1:${proxy.port}`, base }) }),
      storageTimeoutMs: 1500,
      authCache: { ttlMs: 60_000 },
    })
    try {
      // Credits for one hold and a half (a hold: 0.00009804 EUR): a hold left behind refuses the org's next request.
      const customer = await createCustomer(t.gateway, { credits: '0.00015' })
      expect((await t.request('/api/v1/key', { headers: customer.auth })).status).toBe(200)
      proxy.stalled = true
      const refused = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
      })
      // Its placement was sent, and not answered in time: it may still run, so its release is kept.
      expect(refused.status).toBe(503)
      const metrics = await (await t.request('/api/v1/metrics')).text()
      expect(sample(metrics, 'model_gateway_settlements_pending')).toBe(1)
      expect(sample(metrics, 'model_gateway_settlements_kept_total{kind="release"}')).toBe(1)
      // Redis answers again: the placement runs (the hold is placed), then its release removes it.
      proxy.stalled = false
      await within(10_000, async () => sample(await (await t.request('/api/v1/metrics')).text(), 'model_gateway_settlements_pending') === 0)
      const principal = (await t.gateway.admin.findUserByKey(customer.key))!
      for (const budget of budgetsOf(t.gateway.context, principal).budgets) expect(await t.gateway.context.holds.held(budget, Date.now())).toBe(0n)
      const served = await chat(t.url, customer, false)
      expect(served.status).toBe(200)
      await reconciled(t.gateway, customer, [served.costEur!])
    } finally {
      await t.close()
      await proxy.close()
    }
  }, 60_000)

  it('a process killed while its settlements are pending: they land once from its journal when it starts again, and a second replay charges nothing more', async () => {
    const base = `mg-journal-${Math.random().toString(36).slice(2, 8)}`
    const dir = mkdtempSync(join(tmpdir(), 'mg-journal-'))
    const journal = join(dir, 'settlements.jsonl')
    const children: ChildProcess[] = []
    const startProcess = async (journalPath: string) => {
      const started = await startServerProcess(new URL('../helpers/redis-gateway-process.ts', import.meta.url), {
        REDIS_URL: redis.url,
        REDIS_BASE: base,
        JOURNAL: journalPath,
        UPSTREAM_URL: upstream.url,
        LOGGER: 'off',
      })
      children.push(started.child)
      return started.url
    }
    // The tests' own gateway over the same Redis: accounts, and the books to check.
    const admin = await startGateway({ providers: [provider()], storage: createStorage({ driver: redisDriver({ url: redis.url, base }) }) })
    try {
      const customer = await createCustomer(admin.gateway, { credits: '5' })
      const first = await startProcess(journal)
      upstream.latencyMs = 1500
      const arrived = upstream.arrivals.length
      const chats = Array.from({ length: 8 }, (_, i) => chat(first, customer, i % 2 === 1))
      await within(10_000, async () => upstream.arrivals.length - arrived === 8)
      await redis.kill()
      const outcomes = await Promise.all(chats)
      expect(outcomes.map((o) => o.status)).toEqual(Array(8).fill(200))
      const during = await settlementsOf(first)
      expect(during.check).toEqual({ ok: true, pending: 8, journal: 'ok' })
      expect(during.pending).toBe(8)
      // Each is in the journal, flushed before its answer ended.
      const lines = readFileSync(journal, 'utf8').trim().split('\n')
      expect(lines).toHaveLength(8)
      expect(lines.map((l) => JSON.parse(l).op)).toEqual(Array(8).fill('keep'))
      copyFileSync(journal, join(dir, 'copy.jsonl'))

      // Killed as an OOM kill or a lost node would: nothing of it runs again.
      const killed = children[0]
      await new Promise<void>((resolve) => {
        killed.removeAllListeners('exit')
        killed.once('exit', () => resolve())
        killed.kill('SIGKILL')
      })
      await redis.start()
      const told = outcomes.map((o) => o.costEur!)
      // Nothing was charged: the holds wait for their settlements.
      expect((await admin.gateway.admin.usage(customer.user.org_id)).length).toBe(0)

      const second = await startProcess(journal)
      await within(15_000, async () => (await admin.gateway.admin.usage(customer.user.org_id)).length === 8)
      await within(5_000, async () => (await settlementsOf(second)).check.pending === 0)
      await reconciled(admin.gateway, customer, told)
      const landed = await settlementsOf(second)
      expect(landed).toMatchObject({ status: 200, check: { ok: true, pending: 0, journal: 'ok' }, pending: 0, landed: 8, givenUp: 0 })
      // Nothing pending: the journal is emptied.
      await within(5_000, async () => readFileSync(journal, 'utf8') === '')

      // The same eight settlements tried again (a journal copied back, a done line lost): each finds it ran, and does nothing.
      const third = await startProcess(join(dir, 'copy.jsonl'))
      await within(15_000, async () => (await settlementsOf(third)).landed === 8)
      expect((await settlementsOf(third)).check.pending).toBe(0)
      await reconciled(admin.gateway, customer, told)
    } finally {
      upstream.latencyMs = 0
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await admin.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
