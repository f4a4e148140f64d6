import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { endUserSubject, userUsage } from '../../src/billing/spend-limits'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { fsKind, memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
// A chat below ("hi", max_tokens 10): 8 prompt tokens and 4 completion tokens upstream, 0.00001376 EUR.
const COST = toUnits('0.00001376')
const RACERS = 50

/**
 * 50 concurrent requests of one user, through two keys of its own (without limits: the user's decide) and two gateway
 * instances over one storage of `makeKind`: the user's credit limit, requests at once and requests per minute hold
 * exactly, and its counters reconcile with the usage records (docs/first-party.md#budgets-for-users-and-end-users).
 */
function describeRaces(name: string, makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway
  // One UTC minute for the races, so the rate's window does not turn under them (the sweep's test moves it on).
  const START = Date.parse('2026-11-26T12:00:30.000Z')
  let at = START
  const clock = () => at
  const models: ProviderModel[] = ['gpt-test', 'slow'].map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing }))
  const options = () => ({
    storage: kind.open(),
    clock,
    requestTimeoutMs: 30_000,
    providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })],
  })

  beforeAll(async () => {
    kind = makeKind()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 20 })
    a = await startGateway(options())
    b = await startGateway(options())
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await upstream?.close()
    await kind?.cleanup()
  })

  /** A user with credits and two keys of its own, its limits set. */
  const racer = async (limits: Parameters<TestGateway['gateway']['admin']['setUserLimits']>[1]) => {
    const customer = await createCustomer(a.gateway, { credits: '5' })
    const second = await a.gateway.admin.issueKey({ userId: customer.user.id, label: 'second' })
    await a.gateway.admin.setUserLimits(customer.user.id, limits)
    return { customer, keys: [customer.key, second.key] }
  }
  // One request: the status, once its answer was read to the end.
  const ask = async (g: TestGateway, key: string, model: string, stream: boolean, user?: string) => {
    const res = await g.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }], ...(user ? { user } : {}) }),
    })
    if (res.status === 200) await (res.headers.get('content-type')?.startsWith('text/event-stream') ? readSse(res) : res.json())
    else await res.json()
    return res.status
  }
  // Request i goes to instance i % 2 with key ⌊i / 2⌋ % 2, streamed every third time; `answered` counts those done.
  const race = (keys: string[], model: string, options: { endUsers?: string[]; answered?: { count: number } } = {}) =>
    Promise.all(
      Array.from({ length: RACERS }, async (_, i) => {
        const status = await ask(i % 2 ? b : a, keys[Math.floor(i / 2) % 2], model, i % 3 === 0, options.endUsers?.[i % options.endUsers.length])
        if (options.answered) options.answered.count++
        return status
      }),
    )
  const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length
  /** The user's counters, the org's credits and the usage records agree exactly, and no hold is left on any budget. */
  const reconcile = async (customer: Awaited<ReturnType<typeof createCustomer>>, served: number) => {
    const ctx = a.gateway.context
    const principal = (await a.gateway.admin.findUserByKey(customer.key))!
    const records = await ctx.usage.list(customer.user.org_id)
    expect(records.length).toBe(served)
    expect(records.every((r) => toUnits(r.cost_eur) === COST)).toBe(true)
    const recorded = records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)
    expect(recorded).toBe(COST * BigInt(served))
    expect(toUnits((await a.gateway.admin.getCredits(customer.user.org_id)).total_usage)).toBe(recorded)
    const used = await userUsage(ctx, principal.user, clock())
    expect([used.usage, used.usage_daily, used.usage_weekly, used.usage_monthly]).toEqual([recorded, recorded, recorded, recorded])
    for (const budget of budgetsOf(ctx, principal, clock()).budgets) expect(await ctx.holds.held(budget, clock())).toBe(0n)
    return used
  }

  it(`${name}: a credit limit: what is served stays within it, the rest is 402, and it reconciles`, async () => {
    // Ten requests' cost; a hold (the request's most) is more than one request's cost, so fewer than ten fit at once.
    const limit = COST * 10n
    const { customer, keys } = await racer({ credit_limit: '0.0001376' })
    const statuses = await race(keys, 'fake/gpt-test')
    const served = count(statuses, 200)
    expect(served + count(statuses, 402)).toBe(RACERS)
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served).toBeLessThan(10)
    const used = await reconcile(customer, served)
    expect(used.usage).toBeLessThanOrEqual(limit)
    // Served one at a time afterwards, what is left is spent to below one request's hold, never past the limit.
    let more = served
    while ((await ask(more % 2 ? b : a, keys[more % 2], 'fake/gpt-test', false)) === 200) more++
    const after = await reconcile(customer, more)
    expect(after.usage).toBeLessThanOrEqual(limit)
    expect(after.limit_remaining).toBe(limit - after.usage)
  })

  it(`${name}: requests at once: the cap runs upstream, the others are 429 while it does, never more`, async () => {
    const cap = 3
    const { customer, keys } = await racer({ max_in_flight: cap })
    let open!: () => void
    upstream.slowGate = new Promise<void>((resolve) => (open = resolve))
    const sent = upstream.requests.length
    let statuses: number[]
    try {
      const answered = { count: 0 }
      const racing = race(keys, 'fake/slow', { answered })
      // The held requests wait upstream until every other one was answered: they were all refused meanwhile.
      await expect.poll(() => answered.count, { timeout: 20_000 }).toBe(RACERS - cap)
      expect(upstream.requests.length - sent).toBe(cap)
      const principal = (await a.gateway.admin.findUserByKey(customer.key))!
      expect((await userUsage(a.gateway.context, principal.user, clock())).in_flight).toBe(BigInt(cap))
      open()
      statuses = await racing
    } finally {
      open()
      upstream.slowGate = undefined
    }
    expect(upstream.requests.length - sent).toBe(cap)
    expect(count(statuses, 200)).toBe(cap)
    expect(count(statuses, 429)).toBe(RACERS - cap)
    const used = await reconcile(customer, cap)
    expect(used.in_flight).toBe(0n)
  })

  it(`${name}: requests per minute: the minute admits exactly that many, the others are 429`, async () => {
    const perMinute = 7
    const { customer, keys } = await racer({ requests_per_minute: perMinute })
    const statuses = await race(keys, 'fake/gpt-test')
    expect(count(statuses, 200)).toBe(perMinute)
    expect(count(statuses, 429)).toBe(RACERS - perMinute)
    const used = await reconcile(customer, perMinute)
    expect(used.requests_this_minute).toBe(BigInt(perMinute))
  })

  it(`${name}: all three at once, with the org's end users limited too`, async () => {
    const { customer, keys } = await racer({ credit_limit: '0.001', requests_per_minute: 20, max_in_flight: 5 })
    await a.gateway.admin.setEndUserLimits(customer.user.org_id, { requests_per_minute: 9 })
    const endUsers = ['u1', 'u2']
    const statuses = await Promise.all([race(keys, 'fake/gpt-test', { endUsers }), race(keys, 'fake/slow', { endUsers })]).then((s) => s.flat())
    const served = count(statuses, 200)
    // At most 9 a minute for each end user (so 18 in all, below the user's 20); the 429s are the rates' and the cap's.
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served).toBeLessThanOrEqual(18)
    expect(served + count(statuses, 429)).toBe(2 * RACERS)
    const used = await reconcile(customer, served)
    expect(used.requests_this_minute).toBe(BigInt(served))
  })

  it(`${name}: end users' counters of past windows go (by the sweep, or Redis's own expiry), their usage exact till then`, async () => {
    const { customer, keys } = await racer({})
    await a.gateway.admin.setEndUserLimits(customer.user.org_id, { credit_limit: '1', limit_reset: 'daily', requests_per_minute: 100 })
    const statuses = await race(keys, 'fake/gpt-test', { endUsers: ['v1', 'v2'] })
    expect(count(statuses, 200)).toBe(RACERS)
    const ctx = a.gateway.context
    for (const endUser of ['v1', 'v2'])
      expect(await ctx.spendCounters.readUsage(endUserSubject(customer.user.org_id, endUser), 'daily', Date.parse('2026-11-26T00:00:00.000Z'))).toBe(
        COST * BigInt(RACERS / 2),
      )
    const mine = async () => (await ctx.expiring.list('end_user_counters')).filter((k) => k.startsWith(`${customer.user.org_id}:`)).length
    expect(await mine()).toBe(4)
    try {
      at = Date.parse('2026-11-28T00:00:00.000Z')
      const removed = (await a.gateway.admin.sweep()).end_user_counters
      if (name === 'redis') {
        expect(removed).toBe(0)
        expect(await mine()).toBe(4)
      } else {
        expect(removed).toBeGreaterThanOrEqual(4)
        expect(await mine()).toBe(0)
      }
    } finally {
      at = START
    }
    await reconcile(customer, RACERS)
  })
}

describe('user budgets under races: memory (two instances on one storage)', () => describeRaces('memory', memoryKind))
describe('user budgets under races: fs (two instances over one folder)', () => describeRaces('fs', fsKind))
describe.skipIf(!process.env.REDIS_URL)('user budgets under races: redis (REDIS_URL; two instances)', () =>
  describeRaces('redis', () => redisKind(process.env.REDIS_URL!)),
)
describe.skipIf(!process.env.DATABASE_URL)('user budgets under races: postgres (DATABASE_URL; two instances)', () =>
  describeRaces('postgres', () => postgresKind(process.env.DATABASE_URL!)),
)
