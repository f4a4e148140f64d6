import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { fromUnits, toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { memoryKind, redisKind, type StorageKind } from '../helpers/storages'

// Embeddings requests hold their most tokens before any call (docs/money.md): concurrent requests on two gateway
// instances over one storage never spend more than the balance, and the usage records add up to what was charged.

// $1 per M input tokens: 0.00000086 EUR a token. The slow upstream (1.5 s, so that on a loaded machine the 40 requests
// all arrive well before the first is charged) keeps every served request's hold in place while the others arrive.
const pricing = { prompt: '0.000001', completion: '0', currency: 'USD' }
const model = (id: string, upstreamId: string): ProviderModel => ({ id, upstreamId, pricing, endpoints: ['/embeddings'], embedding: { dimensions: 8 } })
const json = { 'content-type': 'application/json' }
// 100 bytes hold 100 tokens, 0.000086 EUR; the fake counts 25 tokens (4 characters a token), 0.0000215 EUR.
const INPUT = 'x'.repeat(100)
const HOLD = 86_000_000n
const CHARGE = 21_500_000n

function describeMoney(name: string, makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway

  beforeAll(async () => {
    kind = makeKind()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 1500 })
    const options = () => ({
      storage: kind.open(),
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up',
          baseURL: upstream.url,
          apiKey: 'sk-up',
          models: [model('money/slow', 'slow'), model('money/fast', 'emb-fast'), model('money/broken', 'fail-500')],
        }),
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

  const embed = (g: TestGateway, auth: Record<string, string>, body: Record<string, unknown>) =>
    g.request('/api/v1/embeddings', { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify(body) })
  const recorded = async (orgId: string) => (await a.gateway.admin.usage(orgId)).reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)

  it(`${name}: 40 concurrent requests on two instances against a balance of three holds: three served, never below zero`, async () => {
    const customer = await createCustomer(a.gateway, { credits: fromUnits(HOLD * 3n + HOLD / 2n) })
    const sent = upstream.requests.length
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => embed(i % 2 ? a : b, customer.auth, { model: 'money/slow', input: INPUT })))
    const served = answers.filter((res) => res.status === 200)
    const refused = answers.filter((res) => res.status === 402)
    expect([served.length, refused.length]).toEqual([3, 37])
    for (const res of served) expect((await res.json()).usage).toMatchObject({ prompt_tokens: 25, cost_eur: 0.0000215 })
    for (const res of refused) expect((await res.json()).error).toMatchObject({ type: 'insufficient_credits', metadata: { required: '0.000086' } })
    // Refused requests never reached the upstream.
    expect(upstream.requests.length - sent).toBe(3)
    const credits = await a.gateway.admin.getCredits(customer.user.org_id)
    expect(toUnits(credits.total_usage)).toBe(CHARGE * 3n)
    expect(toUnits(credits.balance)).toBe(HOLD * 3n + HOLD / 2n - CHARGE * 3n)
    expect(await recorded(customer.user.org_id)).toBe(CHARGE * 3n)
  })

  it(`${name}: mixed concurrent requests (strings, token arrays, failures) spend exactly what their usage records say`, async () => {
    const customer = await createCustomer(a.gateway, { credits: '0.0005' })
    const bodies = Array.from({ length: 30 }, (_, i) =>
      i % 5 === 0
        ? {
            model: 'money/fast',
            input: [
              [1, 2, 3],
              [4, 5],
            ],
          }
        : i % 7 === 0
          ? { model: 'money/fast', input: 'bad', dimensions: 0 }
          : i % 11 === 0
            ? { model: 'money/broken', input: INPUT }
            : { model: i % 3 ? 'money/slow' : 'money/fast', input: [INPUT, `${INPUT.slice(0, 40)}${i}`] },
    )
    const answers = await Promise.all(bodies.map((body, i) => embed(i % 2 ? a : b, customer.auth, body)))
    const statuses = answers.map((res) => res.status)
    expect(statuses.every((s) => [200, 400, 402, 502].includes(s))).toBe(true)
    expect(statuses.filter((s) => s === 400)).toHaveLength(bodies.filter((body) => 'dimensions' in body).length)
    expect(statuses.filter((s) => s === 502).length).toBeLessThanOrEqual(bodies.filter((body) => body.model === 'money/broken').length)
    const served = statuses.filter((s) => s === 200).length
    expect(served).toBeGreaterThan(0)
    await Promise.all(answers.map((res) => res.json()))
    const credits = await a.gateway.admin.getCredits(customer.user.org_id)
    expect(toUnits(credits.balance)).toBeGreaterThanOrEqual(0n)
    expect(toUnits(credits.total_usage)).toBe(await recorded(customer.user.org_id))
    expect(await a.gateway.admin.usage(customer.user.org_id)).toHaveLength(served)
  })
}

describe('embeddings money: memory (two instances on one storage)', () => describeMoney('memory', memoryKind))
describe.skipIf(!process.env.REDIS_URL)('embeddings money: redis (REDIS_URL; two instances)', () =>
  describeMoney('redis', () => redisKind(process.env.REDIS_URL!)),
)
