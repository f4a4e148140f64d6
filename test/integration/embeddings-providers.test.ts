import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gemini, geminiModels, openai, openaiCompatible, type ProviderModel } from '../../src/index'
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// POST /embeddings through real providers' wire formats (docs/embeddings.md): OpenAI (openai(), the catalogue's
// models and prices), an OpenAI-compatible host for fallbacks and BYOK, and Gemini's embedContent / batchEmbedContents.

const json = { 'content-type': 'application/json' }
const GEMINI_KEY = 'AIzaSy-embeddings-test-key'
const CUSTOMER_KEY = 'sk-cust-embed-1111'
type Customer = Awaited<ReturnType<typeof createCustomer>>

// $0.10 per M input tokens at alpha, $0.20 at beta; 8 dimensions (the fake's length for unknown models), shortenable.
const testModel = (upstreamId: string, prompt: string): ProviderModel => ({
  id: 'test/embed',
  upstreamId,
  pricing: { prompt, completion: '0', currency: 'USD' },
  endpoints: ['/embeddings'],
  outputModalities: ['embeddings'],
  embedding: { dimensions: 8, shortenable: true },
})
const decodeBase64 = (text: string): number[] => {
  const bytes = Buffer.from(text, 'base64')
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4))
}
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

describe('POST /api/v1/embeddings: OpenAI, OpenAI-compatible hosts and Gemini', () => {
  let openaiUp: FakeOpenAI
  let alpha: FakeOpenAI
  let beta: FakeOpenAI
  let google: FakeGemini
  let t: TestGateway
  let customer: Customer

  beforeAll(async () => {
    openaiUp = await startFakeOpenAI({ apiKey: ['sk-openai', CUSTOMER_KEY] })
    alpha = await startFakeOpenAI({ apiKey: ['sk-alpha', CUSTOMER_KEY] })
    beta = await startFakeOpenAI({ apiKey: 'sk-beta' })
    google = await startFakeGemini({ apiKey: GEMINI_KEY })
    t = await startGateway({
      // Every failure below is a provider's: the breaker would otherwise skip alpha after three of them.
      retry: { baseDelayMs: 1, maxRetries: 0 },
      health: { failureThreshold: 1000 },
      byok: { freeRequestAllowance: 0, platformFeeRate: '0.05', settlementIntervalSeconds: 0 },
      providers: [
        openai({ apiKey: 'sk-openai', baseURL: openaiUp.url }),
        openaiCompatible({
          slug: 'alpha',
          name: 'Alpha',
          baseURL: alpha.url,
          apiKey: 'sk-alpha',
          byokSupported: true,
          models: [testModel('emb-alpha', '0.0000001')],
        }),
        openaiCompatible({ slug: 'beta', name: 'Beta', baseURL: beta.url, apiKey: 'sk-beta', models: [testModel('emb-beta', '0.0000002')] }),
        gemini({ apiKey: GEMINI_KEY, baseURL: google.url, models: geminiModels }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '1' })
  })
  afterAll(async () => {
    await t?.close()
    await Promise.all([openaiUp?.close(), alpha?.close(), beta?.close(), google?.close()])
  })

  const embed = async (body: Record<string, unknown>, who: Customer = customer) => {
    const res = await t.request('/api/v1/embeddings', { method: 'POST', headers: { ...who.auth, ...json }, body: JSON.stringify(body) })
    return { res, status: res.status, body: await res.json() }
  }
  const records = (who: Customer) => t.gateway.admin.usage(who.user.org_id)
  const credits = (who: Customer) => t.gateway.admin.getCredits(who.user.org_id)
  const embeddingsOf = (body: any): unknown[] => body.data.map((item: { embedding: unknown }) => item.embedding)
  const calls = (fake: FakeOpenAI) => fake.requests.filter((r) => r.path === '/v1/embeddings')

  it('OpenAI: sends floats’ request with the upstream model id, answers the upstream’s vectors exactly, bills its tokens at the catalogue price', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const input = ['hello world', 'a second, longer text']
    const { res, status, body } = await embed({ model: 'openai/text-embedding-3-small', input }, who)
    expect(status).toBe(200)
    expect(calls(openaiUp).at(-1)).toMatchObject({
      headers: { authorization: 'Bearer sk-openai' },
      body: { model: 'text-embedding-3-small', input, encoding_format: 'float' },
    })
    expect(calls(openaiUp).at(-1)!.body).not.toHaveProperty('dimensions')
    expect(embeddingsOf(body)).toEqual(input.map((text) => fakeEmbedding(text, 1536)))
    // 3 + 6 tokens at $0.02 per M: $0.00000018, 0.0000001548 EUR.
    expect(body).toMatchObject({
      id: res.headers.get('x-generation-id'),
      object: 'list',
      model: 'openai/text-embedding-3-small',
      provider: 'OpenAI',
      usage: {
        prompt_tokens: 9,
        total_tokens: 9,
        cost: 0.00000018,
        cost_currency: 'USD',
        cost_eur: 0.0000001548,
        is_byok: false,
        cost_details: { upstream_inference_cost: 0.00000018 },
      },
    })
    expect(body.usage).not.toHaveProperty('estimated')
    expect(await records(who)).toEqual([
      expect.objectContaining({ id: body.id, endpoint: 'embeddings', provider: 'openai', prompt_tokens: 9, cost_eur: '0.0000001548', usage_estimated: false }),
    ])
    expect((await credits(who)).total_usage).toBe('0.0000001548')
  })

  it('OpenAI: forwards dimensions to shortenable models, and refuses them for ada-002 and beyond a model’s length before any call', async () => {
    const short = await embed({ model: 'openai/text-embedding-3-large', input: 'short vector', dimensions: 256 })
    expect(short.status).toBe(200)
    expect(calls(openaiUp).at(-1)!.body).toMatchObject({ model: 'text-embedding-3-large', dimensions: 256 })
    expect(embeddingsOf(short.body)).toEqual([fakeEmbedding('short vector', 256)])
    const sent = calls(openaiUp).length
    const who = await createCustomer(t.gateway, { credits: '1' })
    const ada = await embed({ model: 'openai/text-embedding-ada-002', input: 'x', dimensions: 256 }, who)
    expect(ada).toMatchObject({
      status: 400,
      body: {
        error: { param: 'dimensions', message: 'dimensions: 256 cannot be served: openai/text-embedding-ada-002 cannot shorten its 1536-dimension vectors' },
      },
    })
    const long = await embed({ model: 'openai/text-embedding-3-small', input: 'x', dimensions: 2000 }, who)
    expect(long).toMatchObject({
      status: 400,
      body: { error: { param: 'dimensions', message: 'dimensions: 2000 cannot be served: openai/text-embedding-3-small returns 1536 dimensions at most' } },
    })
    expect(calls(openaiUp).length).toBe(sent)
    expect(await records(who)).toEqual([])
  })

  it('OpenAI: base64 is the upstream’s floats as float32, exactly; token arrays are sent as they are and counted by the upstream', async () => {
    const packed = await embed({ model: 'openai/text-embedding-3-small', input: ['pack me', 'and me'], encoding_format: 'base64' })
    expect(packed.status).toBe(200)
    // The upstream is always asked for floats; the gateway encodes.
    expect(calls(openaiUp).at(-1)!.body.encoding_format).toBe('float')
    expect(packed.body.data.map((item: { embedding: string }) => decodeBase64(item.embedding))).toEqual(
      ['pack me', 'and me'].map((text) => fakeEmbedding(text, 1536).map(Math.fround)),
    )
    const arrays = await embed({ model: 'openai/text-embedding-3-small', input: [[9906, 1917], [15339]] })
    expect(arrays.status).toBe(200)
    expect(calls(openaiUp).at(-1)!.body.input).toEqual([[9906, 1917], [15339]])
    expect(embeddingsOf(arrays.body)).toEqual([fakeEmbedding('9906 1917', 1536), fakeEmbedding('15339', 1536)])
    expect(arrays.body.usage).toMatchObject({ prompt_tokens: 3, cost: 0.00000006 })
  })

  it('estimates the tokens when the upstream reports none, and says so', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    alpha.modes['emb-alpha'] = 'no-usage'
    try {
      const { status, body } = await embed({ model: 'test/embed', input: ['twelve chars', 'five!'] }, who)
      expect(status).toBe(200)
      // 12 and 5 characters: 3 + 2 tokens at $0.10 per M.
      expect(body.usage).toMatchObject({ prompt_tokens: 5, cost: 0.0000005, cost_eur: 0.00000043, estimated: true })
      expect((await records(who))[0]).toMatchObject({ usage_estimated: true, prompt_tokens: 5, cost_eur: '0.00000043' })
    } finally {
      delete alpha.modes['emb-alpha']
    }
  })

  it('puts vectors the upstream sent out of order back in input order', async () => {
    alpha.modes['emb-alpha'] = 'shuffled'
    try {
      const { status, body } = await embed({ model: 'test/embed', input: ['first', 'second', 'third'] })
      expect(status).toBe(200)
      expect(body.data.map((item: { index: number }) => item.index)).toEqual([0, 1, 2])
      expect(embeddingsOf(body)).toEqual(['first', 'second', 'third'].map((text) => fakeEmbedding(text, 8)))
    } finally {
      delete alpha.modes['emb-alpha']
    }
  })

  for (const failure of ['fail-500', 'fail-short', 'fail-null', 'fail-malformed', 'fail-reset']) {
    it(`falls back to the next provider when the first fails (${failure}), billing only the one that served`, async () => {
      const who = await createCustomer(t.gateway, { credits: '1' })
      alpha.modes['emb-alpha'] = failure
      const [sentAlpha, sentBeta] = [calls(alpha).length, calls(beta).length]
      try {
        const { status, body } = await embed({ model: 'test/embed', input: ['fall back', 'please'], provider: { order: ['alpha', 'beta'] } }, who)
        expect(status).toBe(200)
        expect([calls(alpha).length - sentAlpha, calls(beta).length - sentBeta]).toEqual([1, 1])
        expect(body.provider).toBe('Beta')
        expect(embeddingsOf(body)).toEqual([fakeEmbedding('fall back', 8), fakeEmbedding('please', 8)])
        // 3 + 2 tokens at beta's $0.20 per M.
        expect(body.usage).toMatchObject({ prompt_tokens: 5, cost: 0.000001, cost_eur: 0.00000086 })
        expect(await records(who)).toEqual([expect.objectContaining({ provider: 'beta', attempts: 2, cost_eur: '0.00000086' })])
      } finally {
        delete alpha.modes['emb-alpha']
      }
    })
  }

  it('answers the upstream’s 400 without falling back, and a 502 when every provider fails; nothing is charged, the hold is released', async () => {
    const who = await createCustomer(t.gateway, { credits: '0.00001' })
    alpha.modes['emb-alpha'] = 'fail-400'
    try {
      const sentBeta = calls(beta).length
      const refused = await embed({ model: 'test/embed', input: 'bad', provider: { order: ['alpha', 'beta'] } }, who)
      expect(refused.status).toBe(400)
      expect(calls(beta).length).toBe(sentBeta)
      alpha.modes['emb-alpha'] = 'fail-500'
      beta.modes['emb-beta'] = 'fail-503'
      const failed = await embed({ model: 'test/embed', input: 'nobody', provider: { order: ['alpha', 'beta'] } }, who)
      expect(failed.status).toBe(502)
      expect(await records(who)).toEqual([])
      expect(await credits(who)).toMatchObject({ balance: '0.00001', total_usage: '0' })
    } finally {
      delete alpha.modes['emb-alpha']
      delete beta.modes['emb-beta']
    }
    // No hold is left behind: the whole balance can be held again. 50 bytes × $0.20 per M × 0.86 = 0.0000086 EUR.
    expect((await embed({ model: 'test/embed', input: 'y'.repeat(50), provider: { order: ['beta'] } }, who)).status).toBe(200)
  })

  it('answers 408 when no provider answers within the deadline, charging nothing and leaving no hold', async () => {
    const late = await startGateway({
      requestTimeoutMs: 300,
      providers: [
        openaiCompatible({
          slug: 'alpha',
          name: 'Alpha',
          baseURL: alpha.url,
          apiKey: 'sk-alpha',
          models: [testModel('hang', '0.0000001'), { ...testModel('emb-alpha', '0.0000001'), id: 'test/ok' }],
        }),
      ],
    })
    try {
      // 0.0000005 EUR: one hold of 5 bytes × $0.10 per M × 0.86 = 0.00000043 EUR at a time.
      const who = await createCustomer(late.gateway, { credits: '0.0000005' })
      const post = (model: string) =>
        late.request('/api/v1/embeddings', { method: 'POST', headers: { ...who.auth, ...json }, body: JSON.stringify({ model, input: 'wait!' }) })
      const res = await post('test/embed')
      expect(res.status).toBe(408)
      expect((await res.json()).error).toMatchObject({ code: 408, type: 'timeout' })
      expect(await late.gateway.admin.usage(who.user.org_id)).toEqual([])
      expect((await late.gateway.admin.getCredits(who.user.org_id)).total_usage).toBe('0')
      expect((await post('test/ok')).status).toBe(200)
    } finally {
      await late.close()
    }
  })

  it('BYOK: the customer’s key serves, only the platform fee is owed, settled later', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...who.auth, ...json },
      body: JSON.stringify({ key: CUSTOMER_KEY, provider: 'alpha' }),
    })
    expect(created.status).toBe(201)
    const { status, body } = await embed({ model: 'test/embed', input: ['my own key'] }, who)
    expect(status).toBe(200)
    expect(calls(alpha).at(-1)!.headers.authorization).toBe(`Bearer ${CUSTOMER_KEY}`)
    // 3 tokens at $0.10 per M: $0.0000003 upstream, a 5% fee of $0.000000015 (0.0000000129 EUR).
    expect(body.usage).toMatchObject({
      is_byok: true,
      prompt_tokens: 3,
      cost: 0.000000015,
      cost_eur: 0.0000000129,
      cost_details: { upstream_inference_cost: 0.0000003 },
    })
    expect((await credits(who)).total_usage).toBe('0')
    expect(await records(who)).toEqual([expect.objectContaining({ is_byok: true, cost_eur: '0.0000000129', upstream_cost_eur: '0.000000258' })])
    expect(await t.gateway.admin.settleByokFees(who.user.org_id)).toEqual({ settled_requests: 1, charged_eur: '0.0000000129' })
    expect((await credits(who)).total_usage).toBe('0.0000000129')
  })

  it('Gemini: one text through embedContent, several through batchEmbedContents, shortened with outputDimensionality; usage estimated', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const one = await embed({ model: 'google/gemini-embedding-001', input: 'one text for gemini' }, who)
    expect(one.status).toBe(200)
    expect(google.requests.at(-1)).toMatchObject({ path: '/v1beta/models/gemini-embedding-001:embedContent' })
    expect(embeddingsOf(one.body)).toEqual([fakeEmbedding('one text for gemini', 3072)])
    // gemini-embedding-001 reports no usage: 19 characters, 5 tokens estimated at $0.15 per M.
    expect(one.body).toMatchObject({
      model: 'google/gemini-embedding-001',
      provider: 'Google AI Studio',
      usage: { prompt_tokens: 5, cost: 0.00000075, cost_eur: 0.000000645, estimated: true },
    })

    const texts = ['first of three', 'second', 'third and last']
    const several = await embed({ model: 'google/gemini-embedding-001', input: texts, dimensions: 768, encoding_format: 'base64' }, who)
    expect(several.status).toBe(200)
    const batch = google.requests.at(-1)!
    expect(batch.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
    expect(batch.body.requests).toHaveLength(3)
    expect(batch.body.requests[0]).toMatchObject({
      model: 'models/gemini-embedding-001',
      content: { parts: [{ text: 'first of three' }] },
      outputDimensionality: 768,
    })
    expect(several.body.data.map((item: { embedding: string }) => decodeBase64(item.embedding))).toEqual(
      texts.map((text) => fakeEmbedding(text, 768).map(Math.fround)),
    )
    expect(several.body.usage.prompt_tokens).toBe(texts.reduce((n, text) => n + tokens(text), 0))
    expect((await records(who)).map((r) => [r.endpoint, r.model, r.usage_estimated])).toEqual([
      ['embeddings', 'google/gemini-embedding-001', true],
      ['embeddings', 'google/gemini-embedding-001', true],
    ])
  })

  it('Gemini: token arrays are a 400 naming input, and nothing is charged', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const { status, body } = await embed({ model: 'google/gemini-embedding-001', input: [1, 2, 3] }, who)
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 400, param: 'input' })
    expect(await records(who)).toEqual([])
    expect((await credits(who)).total_usage).toBe('0')
  })
})
