import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
// A completion below (prompt "hi", max_tokens 10): 8 prompt tokens and 4 completion tokens upstream, 0.00001376 EUR.
const COST = toUnits('0.00001376')
const RACERS = 30

/**
 * POST /completions (docs/completions.md) holds and bills as chat does: 30 concurrent requests of one org, whole and
 * streamed, through two gateway instances over one storage of `makeKind`, on credits that cover a few of them. What
 * is served stays within the credits, the rest is 402, each answer's `usage.cost_eur` is its usage record's, the
 * records sum to what the org was charged, and no hold is left.
 */
function describeRaces(name: string, makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway
  const options = () => ({
    storage: kind.open(),
    providers: [
      openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing }] }),
    ],
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

  // One request: its status and, when served, the cost its answer (or its stream's usage chunk) says in EUR.
  const ask = async (g: TestGateway, key: string, stream: boolean): Promise<{ status: number; costEur?: bigint; id?: string }> => {
    const res = await g.request('/api/v1/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'fake/gpt-test', prompt: 'hi', max_tokens: 10, stream }),
    })
    if (res.status !== 200) return { status: (await res.json()).error.code }
    if (!stream) {
      const body = await res.json()
      return { status: 200, costEur: toUnits(String(body.usage.cost_eur)), id: body.id }
    }
    const { events } = await readSse(res)
    const usage = events.at(-2)
    expect(events.at(-1)).toBe('[DONE]')
    return { status: 200, costEur: toUnits(String(usage.usage.cost_eur)), id: usage.id }
  }

  it(`${name}: credits for a few: what is served stays within them, the rest is 402, answers and records agree exactly`, async () => {
    const credits = '0.0001'
    const customer = await createCustomer(a.gateway, { credits })
    const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => ask(i % 2 ? b : a, customer.key, i % 3 === 0)))
    const served = results.filter((r) => r.status === 200)
    expect(served.length + results.filter((r) => r.status === 402).length).toBe(RACERS)
    expect(served.length).toBeGreaterThanOrEqual(1)
    // 0.0001 EUR is seven requests' cost at most (fewer at once: a hold is a request's most, above its cost).
    expect(served.length).toBeLessThanOrEqual(7)
    for (const answer of served) expect(answer.costEur).toBe(COST)

    const ctx = a.gateway.context
    const records = await ctx.usage.list(customer.user.org_id)
    expect(records.length).toBe(served.length)
    expect(new Set(records.map((r) => r.id))).toEqual(new Set(served.map((r) => r.id)))
    const recorded = records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)
    expect(recorded).toBe(COST * BigInt(served.length))
    const charged = toUnits((await a.gateway.admin.getCredits(customer.user.org_id)).total_usage)
    expect(charged).toBe(recorded)
    expect(charged).toBeLessThanOrEqual(toUnits(credits))
    const principal = (await a.gateway.admin.findUserByKey(customer.key))!
    for (const budget of budgetsOf(ctx, principal, Date.now()).budgets) expect(await ctx.holds.held(budget, Date.now())).toBe(0n)
  })
}

describe('/completions under races: memory (two instances on one storage)', () => describeRaces('memory', memoryKind))
describe.skipIf(!process.env.REDIS_URL)('/completions under races: redis (REDIS_URL; two instances)', () =>
  describeRaces('redis', () => redisKind(process.env.REDIS_URL!)),
)
describe.skipIf(!process.env.DATABASE_URL)('/completions under races: postgres (DATABASE_URL; two instances)', () =>
  describeRaces('postgres', () => postgresKind(process.env.DATABASE_URL!)),
)
