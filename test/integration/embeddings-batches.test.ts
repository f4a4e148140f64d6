import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gemini, openaiCompatible, type ProviderModel } from '../../src/index'
import { fromUnits, toUnits } from '../../src/billing/money'
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { eventually } from '../helpers/eventually'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// A request Gemini embeds in batches of 100 (docs/embeddings.md#batches): a failed batch is retried on its own, the
// batches already served are never sent again, and what the provider served is billed exactly once, whether the request
// then succeeds, fails, falls back to another model or its client leaves (docs/money.md).

const GEMINI_KEY = 'AIzaSy-batches-test-key'
const json = { 'content-type': 'application/json' }
const embeddingModel = (id: string, upstreamId: string, prompt: string): ProviderModel => ({
  id,
  upstreamId,
  pricing: { prompt, completion: '0', currency: 'USD' },
  endpoints: ['/embeddings'],
  outputModalities: ['embeddings'],
  embedding: { dimensions: 8 },
})
// Gemini's test-embed: $0.15 per M tokens, reports no usage (estimated: 4 characters a token), 8 dimensions.
// alt/embed on an OpenAI-compatible host: $0.20 per M tokens, reports its tokens (4 characters a token too).
const GEMINI_MODEL = embeddingModel('gtest/embed', 'test-embed', '0.00000015')
const ALT_MODEL = embeddingModel('alt/embed', 'emb-alt', '0.0000002')

// 2,048 texts of 12 characters (3 tokens, 12 bytes each): 21 batches, 20 of 100 and a last one of 48.
const TEXTS = Array.from({ length: 2048 }, (_, i) => `t${String(i).padStart(4, '0')}-abcdef`)
const LAST = TEXTS[2047]
// What each outcome costs, in EUR (USD at 0.86): 2,000 texts served by Gemini are 6,000 tokens at $0.15 per M,
// 0.0009 USD = 0.000774 EUR; all 2,048 are 6,144 tokens, 0.0009216 USD = 0.000792576 EUR on Gemini and
// 0.0012288 USD = 0.001056768 EUR on alt/embed. The hold: 24,576 bytes at the dearer $0.20 per M, 0.004227072 EUR.
const GEMINI_2000 = '0.000774'
const GEMINI_2048 = '0.000792576'
const ALT_2048 = '0.001056768'

describe('embeddings in batches: a failed batch is retried alone, and what was served is billed once', () => {
  let google: FakeGemini
  let alt: FakeOpenAI
  let t: TestGateway

  beforeAll(async () => {
    google = await startFakeGemini({ apiKey: GEMINI_KEY })
    alt = await startFakeOpenAI({ apiKey: 'sk-alt' })
    t = await startGateway({
      // Two retries of a provider, at once; the breaker never opens on the failures these tests cause.
      retry: { baseDelayMs: 1, maxRetries: 2 },
      health: { failureThreshold: 1000 },
      providers: [
        gemini({ apiKey: GEMINI_KEY, baseURL: google.url, models: [GEMINI_MODEL] }),
        openaiCompatible({ slug: 'alt', name: 'Alt', baseURL: alt.url, apiKey: 'sk-alt', models: [ALT_MODEL] }),
      ],
    })
  })
  afterAll(async () => {
    await t?.close()
    await Promise.all([google?.close(), alt?.close()])
  })

  const embed = (who: { auth: Record<string, string> }, body: Record<string, unknown>, signal?: AbortSignal) =>
    t.request('/api/v1/embeddings', { method: 'POST', headers: { ...who.auth, ...json }, body: JSON.stringify(body), signal })
  // The texts the fake Gemini was sent since `from`, and those it embedded (answered 200).
  const geminiTexts = (from: number) => {
    const calls = google.requests.slice(from).filter((r) => r.path.endsWith(':batchEmbedContents') || r.path.endsWith(':embedContent'))
    const texts = (r: (typeof calls)[number]) => (Array.isArray(r.body?.requests) ? r.body.requests.length : 1)
    return {
      calls: calls.length,
      sent: calls.reduce((n, r) => n + texts(r), 0),
      served: calls.filter((r) => r.status === 200).reduce((n, r) => n + texts(r), 0),
    }
  }
  const altTexts = (from: number) =>
    alt.requests
      .slice(from)
      .filter((r) => r.path === '/v1/embeddings')
      .reduce((n, r) => n + r.body.input.length, 0)
  // The org's money three ways: the balance's decrease, the usage records' costs, the ledger's charges.
  const money = async (orgId: string, granted: string) => {
    const credits = await t.gateway.admin.getCredits(orgId)
    const records = await t.gateway.admin.usage(orgId)
    const charges = (await t.gateway.admin.ledger(orgId)).filter((e) => e.kind === 'charge')
    return {
      decrease: fromUnits(toUnits(granted) - toUnits(credits.balance)),
      used: credits.total_usage,
      records: fromUnits(records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)),
      ledger: fromUnits(charges.reduce((sum, e) => sum + toUnits(e.amount), 0n)),
    }
  }

  it('a 503 on the last batch: only that batch is sent again; all 2,048 texts billed once', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const from = google.requests.length
    google.textScript[LAST] = ['fail-503']
    const res = await embed(who, { model: 'gtest/embed', input: TEXTS })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.data.map((item: { embedding: number[] }) => item.embedding)).toEqual(TEXTS.map((text) => fakeEmbedding(text, 8)))
    expect(body.usage).toMatchObject({ prompt_tokens: 6144, cost_eur: Number(GEMINI_2048), estimated: true })
    // 21 batches, then the failed one again: 2,048 + 48 texts, never the 2,000 already served.
    expect(geminiTexts(from)).toEqual({ calls: 22, sent: 2096, served: 2048 })
    expect(await money(who.user.org_id, '1')).toEqual({ decrease: GEMINI_2048, used: GEMINI_2048, records: GEMINI_2048, ledger: GEMINI_2048 })
    expect((await t.gateway.admin.usage(who.user.org_id)).map((r) => [r.status, r.prompt_tokens, r.id])).toEqual([['success', 6144, body.id]])
  })

  it('the last batch keeps failing: the request fails, and the 2,000 texts Gemini served are billed (status error)', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const from = google.requests.length
    google.textScript[LAST] = ['fail-503', 'fail-503', 'fail-503']
    const res = await embed(who, { model: 'gtest/embed', input: TEXTS })
    // Gemini's 503 (overloaded), answered as every provider failure is: 502.
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatchObject({ code: 502, metadata: { error_type: 'provider_overloaded' } })
    // The first try and two retries of the failed batch alone.
    expect(geminiTexts(from)).toEqual({ calls: 23, sent: 2000 + 48 * 3, served: 2000 })
    expect(await money(who.user.org_id, '1')).toEqual({ decrease: GEMINI_2000, used: GEMINI_2000, records: GEMINI_2000, ledger: GEMINI_2000 })
    const [record] = await t.gateway.admin.usage(who.user.org_id)
    expect(record).toMatchObject({ status: 'error', endpoint: 'embeddings', model: 'gtest/embed', prompt_tokens: 6000, usage_estimated: true, attempts: 3 })
    // The error names the generation that was billed; the ledger's charge points at it.
    expect(res.headers.get('x-generation-id')).toBe(record.id)
    const charges = (await t.gateway.admin.ledger(who.user.org_id)).filter((e) => e.kind === 'charge')
    expect(charges.map((e) => [e.amount, e.note, e.generation_id])).toEqual([[GEMINI_2000, 'embeddings gtest/embed', record.id]])
  })

  it('a fallback model after a partly served provider: Gemini’s 2,000 texts and alt’s 2,048 are each billed once', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const from = google.requests.length
    const altFrom = alt.requests.length
    google.textScript[LAST] = ['fail-503', 'fail-503', 'fail-503']
    const res = await embed(who, { model: 'gtest/embed', models: ['alt/embed'], input: TEXTS })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ model: 'alt/embed', usage: { prompt_tokens: 6144, cost_eur: Number(ALT_2048) } })
    // alt/embed's vectors only: another model's vectors are never mixed with Gemini's.
    expect(body.data.map((item: { embedding: number[] }) => item.embedding)).toEqual(TEXTS.map((text) => fakeEmbedding(text, 8)))
    expect(geminiTexts(from)).toEqual({ calls: 23, sent: 2144, served: 2000 })
    expect(altTexts(altFrom)).toBe(2048)
    const both = fromUnits(toUnits(GEMINI_2000) + toUnits(ALT_2048))
    expect(await money(who.user.org_id, '1')).toEqual({ decrease: both, used: both, records: both, ledger: both })
    const records = await t.gateway.admin.usage(who.user.org_id)
    expect(records.map((r) => [r.model, r.status, r.prompt_tokens, r.cost_eur]).sort()).toEqual([
      ['alt/embed', 'success', 6144, ALT_2048],
      ['gtest/embed', 'error', 6000, GEMINI_2000],
    ])
    expect(records.find((r) => r.status === 'success')!.id).toBe(body.id)
  })

  it('a fallback the credits cannot hold after the served part is charged is not tried: the error is answered, the served part billed', async () => {
    // 0.0045 EUR covers the first hold (0.004227072) but not the fallback's after 0.000774 is charged.
    const who = await createCustomer(t.gateway, { credits: '0.0045' })
    const from = google.requests.length
    const altFrom = alt.requests.length
    google.textScript[LAST] = ['fail-503', 'fail-503', 'fail-503']
    const res = await embed(who, { model: 'gtest/embed', models: ['alt/embed'], input: TEXTS })
    expect(res.status).toBe(502)
    expect(geminiTexts(from)).toMatchObject({ served: 2000 })
    expect(altTexts(altFrom)).toBe(0)
    expect(await money(who.user.org_id, '0.0045')).toEqual({ decrease: GEMINI_2000, used: GEMINI_2000, records: GEMINI_2000, ledger: GEMINI_2000 })
    expect(res.headers.get('x-generation-id')).toBe((await t.gateway.admin.usage(who.user.org_id))[0].id)
  })

  it('a client that leaves while the last batch runs is billed for the 2,000 texts served (status cancelled)', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const from = google.requests.length
    const aborted = google.aborted
    google.textScript[LAST] = ['hang']
    const client = new AbortController()
    const answer = embed(who, { model: 'gtest/embed', input: TEXTS }, client.signal).catch((error: Error) => error)
    // Every batch but the last answered; a moment for the gateway to read them, then the client leaves.
    await eventually(
      async () => geminiTexts(from),
      (texts) => texts.calls === 21 && texts.served === 2000,
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    client.abort()
    expect(await answer).toMatchObject({ name: 'AbortError' })
    const records = await eventually(
      () => t.gateway.admin.usage(who.user.org_id),
      (list) => list.length > 0,
    )
    expect(records.map((r) => [r.status, r.prompt_tokens, r.cost_eur])).toEqual([['cancelled', 6000, GEMINI_2000]])
    expect(await money(who.user.org_id, '1')).toEqual({ decrease: GEMINI_2000, used: GEMINI_2000, records: GEMINI_2000, ledger: GEMINI_2000 })
    // The hanging batch was stopped, never sent again.
    expect(
      await eventually(
        async () => google.aborted - aborted,
        (n) => n === 1,
      ),
    ).toBe(1)
    expect(geminiTexts(from)).toEqual({ calls: 21, sent: 2048, served: 2000 })
  })

  it('the deadline passing while the last batch runs: 408, and the 2,000 texts served are billed (status error)', async () => {
    const short = await startGateway({
      requestTimeoutMs: 1500,
      providers: [gemini({ apiKey: GEMINI_KEY, baseURL: google.url, models: [GEMINI_MODEL] })],
    })
    try {
      const who = await createCustomer(short.gateway, { credits: '1' })
      const from = google.requests.length
      google.textScript[LAST] = ['hang']
      const res = await short.request('/api/v1/embeddings', {
        method: 'POST',
        headers: { ...who.auth, ...json },
        body: JSON.stringify({ model: 'gtest/embed', input: TEXTS }),
      })
      expect(res.status).toBe(408)
      const [record] = await short.gateway.admin.usage(who.user.org_id)
      expect(record).toMatchObject({ status: 'error', prompt_tokens: 6000, cost_eur: GEMINI_2000 })
      expect(res.headers.get('x-generation-id')).toBe(record.id)
      const credits = await short.gateway.admin.getCredits(who.user.org_id)
      expect([credits.total_usage, credits.balance]).toEqual([GEMINI_2000, fromUnits(toUnits('1') - toUnits(GEMINI_2000))])
      expect(geminiTexts(from)).toEqual({ calls: 21, sent: 2048, served: 2000 })
      expect(short.gateway.metrics()).toMatch(/^model_gateway_holds_active 0$/m)
    } finally {
      await short.close()
    }
  })

  it('no hold is left behind by any of the above', () => {
    expect(t.gateway.metrics()).toMatch(/^model_gateway_holds_active 0$/m)
  })
})
