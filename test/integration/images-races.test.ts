import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, openaiImageModels, type ProviderModel } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { fromUnits, toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

// Image generations hold the most their prompt and images can cost before any call (docs/images.md#billing): concurrent
// requests on two gateway instances over one storage never spend more than the balance, and the usage records add up to
// exactly what was charged.

const gptImage1 = openaiImageModels.find((m) => m.id === 'openai/gpt-image-1')!
const model = (id: string, upstreamId: string): ProviderModel => ({ ...gptImage1, id, upstreamId, expirationDate: undefined })
const PROMPT = 'x'.repeat(100)
// gpt-image-1 ($5 / $40 per 1M), one low 1024x1024 image. Held: 100 bytes as text tokens and 272 image tokens =
// $0.01138 = 0.0097868 EUR; charged: the fake's 25 text tokens and 272 image tokens = $0.011005 = 0.0094643 EUR.
const HOLD = 9_786_800_000n
const CHARGE = 9_464_300_000n
const RACERS = 30

function describeRaces(name: string, makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway

  beforeAll(async () => {
    kind = makeKind()
    // The slow upstream (1 s) keeps every served request's hold in place while the others arrive.
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 1000 })
    const options = () => ({
      storage: kind.open(),
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up',
          baseURL: upstream.url,
          apiKey: 'sk-up',
          models: [model('money/slow', 'slow'), model('money/fast', 'gpt-image-1'), model('money/broken', 'fail-500')],
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

  const generate = (g: TestGateway, auth: Record<string, string>, body: Record<string, unknown>) =>
    g.request('/api/v1/images/generations', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const recorded = async (orgId: string) => (await a.gateway.admin.usage(orgId)).reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)
  const noHolds = async (key: string) => {
    const ctx = a.gateway.context
    const principal = (await a.gateway.admin.findUserByKey(key))!
    for (const budget of budgetsOf(ctx, principal, Date.now()).budgets) expect(await ctx.holds.held(budget, Date.now())).toBe(0n)
  }

  it(`${name}: ${RACERS} concurrent requests on two instances against a balance of three holds: three served, never below zero`, async () => {
    const customer = await createCustomer(a.gateway, { credits: fromUnits(HOLD * 3n + HOLD / 2n) })
    const sent = upstream.requests.length
    const body = { model: 'money/slow', prompt: PROMPT, quality: 'low', size: '1024x1024' }
    const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => generate(i % 2 ? a : b, customer.auth, body)))
    const served = answers.filter((res) => res.status === 200)
    const refused = answers.filter((res) => res.status === 402)
    expect([served.length, refused.length]).toEqual([3, RACERS - 3])
    for (const res of served) expect((await res.json()).usage).toMatchObject({ input_tokens: 25, output_tokens: 272, cost_eur: 0.0094643 })
    for (const res of refused) expect((await res.json()).error).toMatchObject({ type: 'insufficient_credits', metadata: { required: '0.0097868' } })
    expect(upstream.requests.length - sent).toBe(3)
    const credits = await a.gateway.admin.getCredits(customer.user.org_id)
    expect(toUnits(credits.total_usage)).toBe(CHARGE * 3n)
    expect(toUnits(credits.balance)).toBe(HOLD * 3n + HOLD / 2n - CHARGE * 3n)
    expect(await recorded(customer.user.org_id)).toBe(CHARGE * 3n)
    await noHolds(customer.key)
  })

  it(`${name}: mixed concurrent requests (served, failed, refused as bad input) spend exactly what their usage records say`, async () => {
    const customer = await createCustomer(a.gateway, { credits: '0.05' })
    const bodies = Array.from({ length: RACERS }, (_, i) =>
      i % 7 === 0
        ? { model: 'money/fast', prompt: PROMPT, n: 0 }
        : i % 5 === 0
          ? { model: 'money/broken', prompt: PROMPT, quality: 'low', size: '1024x1024' }
          : { model: i % 2 ? 'money/fast' : 'money/slow', prompt: `${PROMPT}${i}`, quality: 'low', size: '1024x1024' },
    )
    const answers = await Promise.all(bodies.map((body, i) => generate(i % 2 ? a : b, customer.auth, body)))
    const statuses = answers.map((res) => res.status)
    expect(statuses.every((s) => [200, 400, 402, 502].includes(s))).toBe(true)
    expect(statuses.filter((s) => s === 400)).toHaveLength(bodies.filter((body) => body.n === 0).length)
    const served = statuses.filter((s) => s === 200).length
    expect(served).toBeGreaterThan(0)
    await Promise.all(answers.map((res) => res.json()))
    const credits = await a.gateway.admin.getCredits(customer.user.org_id)
    expect(toUnits(credits.balance)).toBeGreaterThanOrEqual(0n)
    expect(toUnits(credits.total_usage)).toBe(await recorded(customer.user.org_id))
    expect(await a.gateway.admin.usage(customer.user.org_id)).toHaveLength(served)
    await noHolds(customer.key)
  })
}

describe('image generation money: memory (two instances on one storage)', () => describeRaces('memory', memoryKind))
describe.skipIf(!process.env.REDIS_URL)('image generation money: redis (REDIS_URL; two instances)', () =>
  describeRaces('redis', () => redisKind(process.env.REDIS_URL!)),
)
describe.skipIf(!process.env.DATABASE_URL)('image generation money: postgres (DATABASE_URL; two instances)', () =>
  describeRaces('postgres', () => postgresKind(process.env.DATABASE_URL!)),
)
