import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

// 0.000001 USD a prompt token, 0.000002 a completion token (0.86 EUR a USD): with max_tokens 1000 a request holds
// 0.00172 EUR of completion and a few prompt tokens, and is charged a few hundredths of that.
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
const HOLD_TTL_SECONDS = 1
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A request still running keeps its hold (docs/money.md): with a hold TTL of 1 s, a stream of about 7 s and others started one
 * after another on two instances, with credits for one and a half holds, are refused while the first runs, and the
 * balance never goes below zero; only a dead process's hold expires.
 */
function describeRenewal(makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway

  beforeAll(async () => {
    kind = makeKind()
    // `slow`: each chunk (a word) waits 500 ms, so the first stream below takes about 7 s, seven hold TTLs.
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 500 })
    const options = () => ({
      storage: kind.open(),
      holdTtlSeconds: HOLD_TTL_SECONDS,
      keepAliveMs: 200,
      providers: [
        openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models: [{ id: 'fake/slow', upstreamId: 'slow', pricing }] }),
      ],
    })
    a = await startGateway(options())
    b = await startGateway(options())
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await upstream?.close()
    await kind?.cleanup()
  })

  const stream = (g: TestGateway, auth: Record<string, string>, text: string) =>
    g.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...auth, ...json },
      body: JSON.stringify({ model: 'fake/slow', stream: true, max_tokens: 1000, messages: [{ role: 'user', content: text }] }),
    })

  it('streams that outlive the hold TTL keep their holds: the next ones are refused, the balance never goes below zero', async () => {
    const customer = await createCustomer(a.gateway, { credits: '0.0026' })
    const ctx = a.gateway.context
    const principal = (await a.gateway.admin.findUserByKey(customer.key))!
    const orgBudget = budgetsOf(ctx, principal).budgets[0]

    const first = await stream(a, customer.auth, 'one two three four five six seven eight nine ten')
    expect(first.status).toBe(200)
    const reading = readSse(first)
    const held = await ctx.holds.held(orgBudget, Date.now())
    expect(held).toBeGreaterThan(toUnits('0.00172'))
    expect(held).toBeLessThan(toUnits('0.0026'))

    // Three more, each started after the previous hold would have expired (1.2 s > the 1 s TTL), alternately on b and a.
    const later: number[] = []
    for (let i = 0; i < 3; i++) {
      await sleep(1200)
      const res = await stream(i % 2 ? a : b, customer.auth, `hi ${i}`)
      later.push(res.status)
      if (res.status === 200) await readSse(res)
      else expect((await res.json()).error.type).toBe('insufficient_credits')
    }
    expect(later).toEqual([402, 402, 402])
    // The first stream is still running (it lasts about 7 s), and still holds its maximum cost.
    expect(await ctx.holds.held(orgBudget, Date.now())).toBe(held)

    const { events } = await reading
    expect(events.at(-1)).toBe('[DONE]')
    const usage = events.at(-2).usage
    const credits = await a.gateway.admin.getCredits(customer.user.org_id)
    expect(credits.total_usage).toBe(String(usage.cost_eur))
    expect(toUnits(credits.balance)).toBeGreaterThan(0n)
    expect(await ctx.holds.held(orgBudget, Date.now())).toBe(0n)

    // Its hold settled, the next request is served.
    const next = await stream(b, customer.auth, 'again')
    expect(next.status).toBe(200)
    await readSse(next)
  })

  it("a hold that is not renewed (its process died) stops counting after the TTL, and the org's next request is served", async () => {
    const customer = await createCustomer(a.gateway, { credits: '0.0026' })
    const ctx = a.gateway.context
    const principal = (await a.gateway.admin.findUserByKey(customer.key))!
    const { budgets } = budgetsOf(ctx, principal)
    // A hold placed as a request of a killed process left it: nothing renews it.
    const placed = await ctx.holds.place({ id: 'dead-process-hold', units: toUnits('0.002'), now: Date.now(), expiresAt: Date.now() + 1000, budgets })
    expect(placed).toEqual({ ok: true })
    const refused = await stream(b, customer.auth, 'too soon')
    expect(refused.status).toBe(402)
    await refused.text()
    await sleep(1100)
    const served = await stream(b, customer.auth, 'after the TTL')
    expect(served.status).toBe(200)
    await served.body?.cancel()
  })
}

describe('hold renewal: memory (two gateways over one store)', () => describeRenewal(memoryKind))
describe.skipIf(!process.env.REDIS_URL)('hold renewal: redis (REDIS_URL)', () => describeRenewal(() => redisKind(process.env.REDIS_URL!)))
describe.skipIf(!process.env.DATABASE_URL)('hold renewal: postgres (DATABASE_URL)', () => describeRenewal(() => postgresKind(process.env.DATABASE_URL!)))
