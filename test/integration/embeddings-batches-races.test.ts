import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gemini, openaiCompatible, type ProviderModel } from '../../src/index'
import { fromUnits, toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

// Concurrent embeddings requests in batches on two gateway instances over one storage (docs/embeddings.md#batches):
// batches that fail once are retried alone, those that keep failing end the request or fall back to another model,
// and the credits run short on the way. Whatever happens, every text a provider served is billed exactly once (the
// records' tokens match the texts the fakes embedded), balance, records and ledger agree, the balance never goes
// below zero and no hold is left.

const GEMINI_KEY = 'AIzaSy-batch-races-key'
const json = { 'content-type': 'application/json' }
const embeddingModel = (id: string, upstreamId: string, prompt: string): ProviderModel => ({
  id,
  upstreamId,
  pricing: { prompt, completion: '0', currency: 'USD' },
  endpoints: ['/embeddings'],
  outputModalities: ['embeddings'],
  embedding: { dimensions: 8 },
})
// 250 texts of 12 characters (3 tokens each) a request: batches of 100, 100 and 50 on Gemini. A request holds
// 3,000 bytes at $0.20 per M (alt/embed, the dearer), 0.000516 EUR; 1.5 such holds are granted per 4 requests.
const textsOf = (request: number) => Array.from({ length: 250 }, (_, j) => `${String(request).padStart(3, '0')}:${String(j).padStart(4, '0')}-abc`)
const REQUESTS = 24
const CREDITS = '0.004644'

function describeRaces(makeKind: () => StorageKind) {
  let kind: StorageKind
  let google: FakeGemini
  let alt: FakeOpenAI
  let a: TestGateway
  let b: TestGateway

  beforeAll(async () => {
    kind = makeKind()
    google = await startFakeGemini({ apiKey: GEMINI_KEY })
    alt = await startFakeOpenAI({ apiKey: 'sk-alt' })
    const options = () => ({
      storage: kind.open(),
      retry: { baseDelayMs: 1, maxRetries: 1 },
      health: { failureThreshold: 100_000 },
      providers: [
        gemini({ apiKey: GEMINI_KEY, baseURL: google.url, models: [embeddingModel('gtest/embed', 'test-embed', '0.00000015')] }),
        openaiCompatible({ slug: 'alt', name: 'Alt', baseURL: alt.url, apiKey: 'sk-alt', models: [embeddingModel('alt/embed', 'emb-alt', '0.0000002')] }),
      ],
    })
    a = await startGateway(options())
    b = await startGateway(options())
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await Promise.all([google?.close(), alt?.close()])
    await kind?.cleanup()
  })

  it('every served text billed once, balance = records = ledger, never below zero, no hold left', async () => {
    const customer = await createCustomer(a.gateway, { credits: CREDITS })
    const orgId = customer.user.org_id
    // A third of the requests: the last batch fails once (retried alone); a third: it fails twice, with a fallback
    // model; a third: it fails twice, with none.
    const bodies = Array.from({ length: REQUESTS }, (_, i) => {
      const texts = textsOf(i)
      google.textScript[texts[249]] = i % 3 === 0 ? ['fail-503'] : ['fail-503', 'fail-503']
      return { model: 'gtest/embed', input: texts, ...(i % 3 === 1 ? { models: ['alt/embed'] } : {}) }
    })
    const answers = await Promise.all(
      bodies.map(async (body, i) => {
        const res = await (i % 2 ? a : b).request('/api/v1/embeddings', { method: 'POST', headers: { ...customer.auth, ...json }, body: JSON.stringify(body) })
        return { i, status: res.status, body: await res.json() }
      }),
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.every((status) => [200, 402, 502].includes(status))).toBe(true)
    // Some served, some refused: the credits ran short.
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0)
    expect(statuses.filter((status) => status === 402).length).toBeGreaterThan(0)
    // Requests whose batches always succeed in the end never fail; those without a fallback never succeed.
    for (const { i, status } of answers) expect(i % 3 === 0 ? [200, 402] : i % 3 === 2 ? [402, 502] : [200, 402, 502]).toContain(status)

    // What each fake embedded (answered 200), and how many of those texts were distinct: none embedded twice.
    const geminiServed = google.requests
      .filter((r) => r.status === 200 && r.path.endsWith(':batchEmbedContents'))
      .flatMap((r) => r.body.requests.map((item: any) => item.content.parts[0].text as string))
    const altServed = alt.requests.filter((r) => r.path === '/v1/embeddings').flatMap((r) => r.body.input as string[])
    expect(new Set(geminiServed).size).toBe(geminiServed.length)
    expect(new Set(altServed).size).toBe(altServed.length)

    const records = await a.gateway.admin.usage(orgId)
    const tokens = (model: string) => records.filter((r) => r.model === model).reduce((n, r) => n + r.prompt_tokens, 0)
    expect(tokens('gtest/embed')).toBe(geminiServed.length * 3)
    expect(tokens('alt/embed')).toBe(altServed.length * 3)
    // Each answer's usage is its record's.
    for (const { body } of answers.filter((answer) => answer.status === 200))
      expect(records.find((r) => r.id === body.id)).toMatchObject({ status: 'success', prompt_tokens: body.usage.prompt_tokens, model: body.model })
    expect(records.filter((r) => r.status === 'success')).toHaveLength(statuses.filter((status) => status === 200).length)

    const credits = await a.gateway.admin.getCredits(orgId)
    const charges = (await a.gateway.admin.ledger(orgId)).filter((e) => e.kind === 'charge')
    const recorded = fromUnits(records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n))
    expect(toUnits(credits.balance)).toBeGreaterThanOrEqual(0n)
    expect(credits.total_usage).toBe(recorded)
    expect(fromUnits(charges.reduce((sum, e) => sum + toUnits(e.amount), 0n))).toBe(recorded)
    expect(fromUnits(toUnits(CREDITS) - toUnits(credits.balance))).toBe(recorded)
    expect(toUnits(recorded)).toBeGreaterThan(0n)
    for (const g of [a, b]) expect(g.gateway.metrics()).toMatch(/^model_gateway_holds_active 0$/m)
  })
}

describe('embeddings batch races: memory (two instances on one storage)', () => describeRaces(memoryKind))
describe.skipIf(!process.env.REDIS_URL)('embeddings batch races: redis (REDIS_URL; two instances)', () =>
  describeRaces(() => redisKind(process.env.REDIS_URL!)),
)
describe.skipIf(!process.env.DATABASE_URL)('embeddings batch races: postgres (DATABASE_URL; two instances)', () =>
  describeRaces(() => postgresKind(process.env.DATABASE_URL!)),
)
