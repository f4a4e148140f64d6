/**
 * Kept settlements on PostgreSQL (docs/operations.md#settlements-that-fail), over real HTTP against the PostgreSQL at
 * DATABASE_URL through a TCP proxy the test controls: PostgreSQL unreachable while chats are in flight on two
 * instances (their statements never reach it: the connections are stalled, then cut), and the reply to a hold's
 * placement lost after PostgreSQL ran it. Each ends with balance = Σ usage = Σ ledger = Σ what the clients were told,
 * one record per served answer, and no hold left; the retry queue's own timers run for real.
 */
import { createDatabase } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { createStorage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { type Gateway, postgresDriver } from '../../src/index'
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { dropPostgresTable } from '../helpers/storages'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy'
import { fakeUpProvider } from '../helpers/providers'

const DATABASE_URL = process.env.DATABASE_URL
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Customer = Awaited<ReturnType<typeof createCustomer>>

// The value of one series of the text exposition (`name{labels}`), or undefined.
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** Polls `check` every 100 ms until it returns true, for up to `ms`. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`)
    await sleep(100)
  }
}

/** A chat to `url`: its status and, when served, the EUR cost the client was told. */
async function chat(url: string, customer: Customer, stream: boolean): Promise<{ status: number; costEur?: string }> {
  const res = await fetch(`${url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { ...customer.auth, ...json },
    body: JSON.stringify({ model: 'fake/gpt-test', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
  })
  if (res.status !== 200) return { status: res.status }
  if (!stream) return { status: 200, costEur: String((await res.json()).usage.cost_eur) }
  const { events } = await readSse(res)
  expect(events.at(-1)).toBe('[DONE]')
  return { status: 200, costEur: String(events.find((e) => e !== '[DONE]' && e.usage)?.usage.cost_eur) }
}

/** Balance decrease = Σ usage = Σ ledger = Σ `told`, one record each, nothing held. */
async function reconciled(gateway: Gateway, customer: Customer, told: string[]) {
  const org = customer.user.org_id
  const records = await gateway.admin.usage(org)
  const ledger = (await gateway.admin.ledger(org)).filter((e) => e.kind === 'charge')
  expect(records).toHaveLength(told.length)
  expect(ledger).toHaveLength(told.length)
  const sum = told.reduce((s, c) => s + toUnits(c), 0n)
  expect(sum).toBeGreaterThan(0n)
  expect(records.reduce((s, r) => s + toUnits(r.cost_eur), 0n)).toBe(sum)
  expect(ledger.reduce((s, e) => s + toUnits(e.amount), 0n)).toBe(sum)
  expect(toUnits((await gateway.admin.getCredits(org)).total_usage)).toBe(sum)
  const principal = (await gateway.admin.findUserByKey(customer.key))!
  for (const budget of budgetsOf(gateway.context, principal).budgets) expect(await gateway.context.holds.held(budget, Date.now())).toBe(0n)
}

describe.skipIf(!DATABASE_URL)('kept settlements on PostgreSQL (DATABASE_URL, through a TCP proxy)', () => {
  const table = `mg_settle_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  let proxy: TcpProxy
  let upstream: FakeOpenAI
  const gateways: TestGateway[] = []

  beforeAll(async () => {
    const target = new URL(DATABASE_URL!)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
  })
  afterAll(async () => {
    proxy.stalled = false
    for (const t of gateways) await t.close()
    const database = createDatabase(postgresql({ url: DATABASE_URL! }))
    await dropPostgresTable(database, table).catch(() => undefined)
    await database.dispose()
    await upstream?.close()
    await proxy?.close()
  })

  /** A gateway over the table through the proxy (storage waits bounded at 1.5 s). */
  async function start() {
    const url = new URL(DATABASE_URL!)
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    const t = await startGateway({
      providers: [fakeUpProvider(upstream, pricing)],
      storage: createStorage({ driver: postgresDriver({ url: url.toString(), tableName: table }) }),
      storageTimeoutMs: 1500,
      authCache: { ttlMs: 60_000 },
      metrics: { route: true },
    })
    gateways.push(t)
    return t
  }

  it('PostgreSQL unreachable with chats in flight on two instances: their statements never reach it, and each is charged once when it is back', async () => {
    const [a, b] = [await start(), await start()]
    const customer = await createCustomer(a.gateway, { credits: '5' })
    // Both instances know the key (the authentication cache), so that only the settlements need PostgreSQL.
    for (const t of [a, b]) expect((await t.request('/api/v1/key', { headers: customer.auth })).status).toBe(200)
    upstream.latencyMs = 1000
    const arrived = upstream.arrivals.length
    const chats = Array.from({ length: 8 }, (_, i) => chat([a, b][i % 2].url, customer, i % 4 >= 2))
    try {
      await within(5000, () => upstream.arrivals.length - arrived === 8)
      proxy.stalled = true
      const outcomes = await Promise.all(chats)
      expect(outcomes.map((o) => o.status)).toEqual(Array(8).fill(200))
      expect(a.gateway.context.settlements.pending + b.gateway.context.settlements.pending).toBe(8)
      // Every connection cut while stalled: what was sent on them never reaches PostgreSQL, only the retries can land.
      proxy.cutAll()
      proxy.stalled = false
      for (const t of [a, b])
        await within(15_000, async () => sample(await (await t.request('/api/v1/metrics')).text(), 'model_gateway_settlements_pending') === 0)
      const landed = await Promise.all(
        [a, b].map(async (t) => sample(await (await t.request('/api/v1/metrics')).text(), 'model_gateway_settlements_landed_total{kind="charge"}')),
      )
      expect(landed[0]! + landed[1]!).toBe(8)
      await reconciled(
        a.gateway,
        customer,
        outcomes.map((o) => o.costEur!),
      )
    } finally {
      upstream.latencyMs = 0
      proxy.stalled = false
    }
  }, 60_000)

  it('the reply to a placement is lost after PostgreSQL placed the hold: the request fails, and its hold is released at once, not after holdTtlSeconds', async () => {
    const t = await start()
    // Credits for one hold and a half (a hold: 0.00009804 EUR): the hold left behind would refuse the next request 402.
    const customer = await createCustomer(t.gateway, { credits: '0.00015' })
    expect((await t.request('/api/v1/key', { headers: customer.auth })).status).toBe(200)
    const lost = proxy.loseReplyTo('mg_place_hold_once')
    const failed = await chat(t.url, customer, false)
    await lost
    expect(failed.status).toBeGreaterThanOrEqual(500)
    await within(10_000, () => t.gateway.context.settlements.pending === 0)
    const metrics = await (await t.request('/api/v1/metrics')).text()
    expect(sample(metrics, 'model_gateway_settlements_landed_total{kind="release"}')).toBe(1)
    const served = await chat(t.url, customer, false)
    expect(served.status).toBe(200)
    await reconciled(t.gateway, customer, [served.costEur!])
  }, 30_000)
})
