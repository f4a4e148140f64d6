import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
// A chat below ("hi", max_tokens 10) holds 21 tokens (11 prompt estimated, 10 completion) and 0.00002666 EUR; the
// provider reports 8 prompt and 4 completion tokens: 12 tokens, 0.00001376 EUR.
const HOLD_TOKENS = 21n
const TOKENS = 12n
const COST = toUnits('0.00001376')
const RACERS = 50

/**
 * 50 concurrent requests through two gateway instances over one storage of `makeKind`: a key's tokens per minute and
 * an org's spend per minute hold across instances, and the counters agree with what was served
 * (docs/limits.md#tokens-spend-and-requests-in-flight).
 */
function describeRaces(name: string, makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway
  // One UTC minute for the races, so the windows do not turn under them.
  const START = Date.parse('2026-11-26T12:00:10.000Z')
  const MINUTE = Date.parse('2026-11-26T12:00:00.000Z')
  const clock = () => START
  const models: ProviderModel[] = ['gpt-test', 'slow'].map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing, maxCompletionTokens: 1000 }))
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

  const ask = async (g: TestGateway, key: string, stream: boolean, model = 'fake/gpt-test') => {
    const res = await g.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }] }),
    })
    if (res.status === 200) await (res.headers.get('content-type')?.startsWith('text/event-stream') ? readSse(res) : res.json())
    else await res.json()
    return res.status
  }
  // Request i goes to instance i % 2 with key ⌊i / 2⌋ % keys, streamed every third time.
  const race = (keys: string[], model?: string, answered?: { count: number }) =>
    Promise.all(
      Array.from({ length: RACERS }, async (_, i) => {
        const status = await ask(i % 2 ? b : a, keys[Math.floor(i / 2) % keys.length], i % 3 === 0, model)
        if (answered) answered.count++
        return status
      }),
    )
  const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length
  /** The usage records number `served`, the org was charged for them exactly, and no hold is left on any budget. */
  const reconcile = async (customer: Awaited<ReturnType<typeof createCustomer>>, served: number) => {
    const ctx = a.gateway.context
    const records = await ctx.usage.list(customer.user.org_id)
    expect(records.length).toBe(served)
    expect(records.every((r) => r.prompt_tokens + r.completion_tokens === Number(TOKENS) && toUnits(r.cost_eur) === COST)).toBe(true)
    expect(toUnits((await a.gateway.admin.getCredits(customer.user.org_id)).total_usage)).toBe(COST * BigInt(served))
    const principal = (await a.gateway.admin.findUserByKey(customer.key))!
    for (const budget of budgetsOf(ctx, principal, clock(), Number(HOLD_TOKENS)).budgets) expect(await ctx.holds.held(budget, clock())).toBe(0n)
  }

  it(`${name}: a key's tokens per minute: what is counted stays within it, the rest is 429, and the counter matches what was served`, async () => {
    const limit = 100n
    const customer = await createCustomer(a.gateway, { credits: '5' })
    await a.gateway.admin.setKeyLimits(customer.record.hash, { tokens_per_minute: Number(limit) })
    const statuses = await race([customer.key])
    const served = count(statuses, 200)
    expect(served + count(statuses, 429)).toBe(RACERS)
    // At least ⌊100 / 21⌋ at once fit; one at a time, at most 7 (6 × 12 + 21 ≤ 100 < 7 × 12 + 21).
    expect(served).toBeGreaterThanOrEqual(4)
    expect(served).toBeLessThanOrEqual(7)
    const counted = await a.gateway.context.spendCounters.readTokens({ kind: 'key', hash: customer.record.hash }, 'minute', MINUTE)
    expect(counted).toBe(TOKENS * BigInt(served))
    // A request holds more than it uses here, so the counted tokens never pass the limit.
    expect(counted).toBeLessThanOrEqual(limit)
    await reconcile(customer, served)
  })

  it(`${name}: an org's spend per minute over two keys: what is spent stays within it, the rest is 429, and the counter matches what was served`, async () => {
    const limit = COST * 10n
    const customer = await createCustomer(a.gateway, { credits: '5' })
    const second = (await a.gateway.admin.issueKey({ userId: customer.user.id, label: 'second' })).key
    await a.gateway.admin.setOrgLimits(customer.user.org_id, { spend_limit: '0.0001376', spend_window: 'minute', max_in_flight: 6 })
    const statuses = await race([customer.key, second])
    const served = count(statuses, 200)
    expect(served + count(statuses, 429)).toBe(RACERS)
    expect(served).toBeGreaterThanOrEqual(1)
    // A hold (0.00002666) is more than a request's cost, so fewer than ten fit.
    expect(served).toBeLessThan(10)
    const spent = await a.gateway.context.spendCounters.readSpent({ kind: 'org', id: customer.user.org_id }, 'minute', MINUTE)
    expect(spent).toBe(COST * BigInt(served))
    expect(spent).toBeLessThanOrEqual(limit)
    await reconcile(customer, served)
    // Served one at a time afterwards, the minute is spent to below one request's hold, never past the limit.
    let more = served
    while ((await ask(more % 2 ? b : a, more % 2 ? second : customer.key, false)) === 200) more++
    const after = await a.gateway.context.spendCounters.readSpent({ kind: 'org', id: customer.user.org_id }, 'minute', MINUTE)
    expect(after).toBe(COST * BigInt(more))
    expect(after).toBeLessThanOrEqual(limit)
    expect(limit - after).toBeLessThan(toUnits('0.00002666'))
    await reconcile(customer, more)
  })

  it(`${name}: an org's requests in flight over two keys: the cap runs upstream, the others are 429 while it does, never more`, async () => {
    const cap = 3
    const customer = await createCustomer(a.gateway, { credits: '5' })
    const second = (await a.gateway.admin.issueKey({ userId: customer.user.id, label: 'second' })).key
    await a.gateway.admin.setOrgLimits(customer.user.org_id, { max_in_flight: cap })
    let open!: () => void
    upstream.slowGate = new Promise<void>((resolve) => (open = resolve))
    const sent = upstream.requests.length
    let statuses: number[]
    try {
      const answered = { count: 0 }
      const racing = race([customer.key, second], 'fake/slow', answered)
      // The admitted requests wait upstream until every other one was answered: they were all refused meanwhile.
      await expect.poll(() => answered.count, { timeout: 15_000 }).toBe(RACERS - cap)
      expect(upstream.requests.length - sent).toBe(cap)
      open()
      statuses = await racing
    } finally {
      open()
      upstream.slowGate = undefined
    }
    expect(count(statuses, 200)).toBe(cap)
    expect(count(statuses, 429)).toBe(RACERS - cap)
    await reconcile(customer, cap)
  })
}

describe('tokens and spend limits under races: memory (two instances on one storage)', () => describeRaces('memory', memoryKind))
describe.skipIf(!process.env.REDIS_URL)('tokens and spend limits under races: redis (REDIS_URL; two instances)', () =>
  describeRaces('redis', () => redisKind(process.env.REDIS_URL!)),
)
describe.skipIf(!process.env.DATABASE_URL)('tokens and spend limits under races: postgres (DATABASE_URL; two instances)', () =>
  describeRaces('postgres', () => postgresKind(process.env.DATABASE_URL!)),
)
