import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo } from '../../src/index'
import { DEMO_EMBED_DIMENSIONS, demoVector } from '../../src/providers/demo-embeddings'
import { EMBEDDING_LIMITS } from '../../src/schemas/embeddings'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// POST /embeddings through the offline demo model (docs/embeddings.md): the answer's shape, base64, dimensions, token
// arrays, the limits, billing (hold, charge, usage record, /generation, /activity) and the capability checks.

const json = { 'content-type': 'application/json' }
type Customer = Awaited<ReturnType<typeof createCustomer>>

/** The float32 values of OpenAI's base64 encoding (little-endian), as the openai SDK decodes them. */
const decodeBase64 = (text: string): number[] => {
  const bytes = Buffer.from(text, 'base64')
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4))
}
const norm = (vector: number[]) => Math.hypot(...vector)

describe('POST /api/v1/embeddings: the demo model', () => {
  let t: TestGateway
  let customer: Customer
  beforeAll(async () => {
    t = await startGateway({ providers: [demo({ embeddings: true })] })
    customer = await createCustomer(t.gateway, { credits: '1' })
  })
  afterAll(() => t.close())

  const embed = async (body: Record<string, unknown>, who: Customer = customer) => {
    const res = await t.request('/api/v1/embeddings', { method: 'POST', headers: { ...who.auth, ...json }, body: JSON.stringify(body) })
    return { res, status: res.status, body: await res.json() }
  }
  const records = (who: Customer = customer) => t.gateway.admin.usage(who.user.org_id)
  const credits = (who: Customer = customer) => t.gateway.admin.getCredits(who.user.org_id)

  it('answers OpenAI’s list of embeddings with the generation id, the model, the provider and the exact cost', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const { res, status, body } = await embed({ model: 'demo/embed', input: 'Hello embeddings' }, who)
    expect(status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-generation-id')).toBe(body.id)
    expect(body.id).toMatch(/^gen-\d{10}-[A-Za-z0-9]{20}$/)
    // "Hello embeddings" is 16 characters: 4 demo tokens at $0.02 per M = $0.00000008, 0.0000000688 EUR at 0.86.
    expect(body).toEqual({
      id: body.id,
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: demoVector('Hello embeddings') }],
      model: 'demo/embed',
      provider: 'Demo (offline)',
      usage: {
        prompt_tokens: 4,
        total_tokens: 4,
        cost: 0.00000008,
        cost_currency: 'USD',
        cost_eur: 0.0000000688,
        is_byok: false,
        cost_details: { upstream_inference_cost: 0.00000008, upstream_inference_prompt_cost: 0.00000008, upstream_inference_completions_cost: 0 },
      },
    })
    const vector: number[] = body.data[0].embedding
    expect(vector).toHaveLength(DEMO_EMBED_DIMENSIONS)
    expect(norm(vector)).toBeCloseTo(1, 6)
    expect(await credits(who)).toMatchObject({ total_usage: '0.0000000688', balance: '0.9999999312' })
    const [record] = await records(who)
    expect(record).toMatchObject({
      id: body.id,
      endpoint: 'embeddings',
      model: 'demo/embed',
      provider: 'demo',
      prompt_tokens: 4,
      completion_tokens: 0,
      usage_estimated: false,
      cost: '0.00000008',
      cost_eur: '0.0000000688',
      is_byok: false,
      status: 'success',
      stream: false,
    })
  })

  it('gives the same text the same vector and different texts different ones', async () => {
    const first = await embed({ model: 'demo/embed', input: ['the cat sat', 'the cat sat', 'The cat sat', 'a dog ran'] })
    expect(first.status).toBe(200)
    const [a, b, c, d] = first.body.data.map((item: { embedding: number[] }) => item.embedding)
    expect(first.body.data.map((item: { index: number }) => item.index)).toEqual([0, 1, 2, 3])
    expect(a).toEqual(b)
    expect(c).not.toEqual(a)
    expect(d).not.toEqual(a)
    const again = await embed({ model: 'demo/embed', input: 'the cat sat' })
    expect(again.body.data[0].embedding).toEqual(a)
    // 11 + 11 + 11 + 9 characters: 3 + 3 + 3 + 3 tokens.
    expect(first.body.usage.prompt_tokens).toBe(12)
  })

  it('encodes base64 as the float32 little-endian bytes of the same vector', async () => {
    const floats = await embed({ model: 'demo/embed', input: ['base64 please', 'and a second one'], encoding_format: 'float' })
    const packed = await embed({ model: 'demo/embed', input: ['base64 please', 'and a second one'], encoding_format: 'base64' })
    expect(packed.status).toBe(200)
    for (const [i, item] of packed.body.data.entries()) {
      expect(typeof item.embedding).toBe('string')
      expect(Buffer.from(item.embedding, 'base64')).toHaveLength(DEMO_EMBED_DIMENSIONS * 4)
      // The demo's values are float32 already: the round trip is exact.
      expect(decodeBase64(item.embedding)).toEqual(floats.body.data[i].embedding)
    }
    expect(packed.body.usage).toEqual(floats.body.usage)
  })

  it('shortens the vectors to dimensions, still of unit length, and refuses more than the model has', async () => {
    const short = await embed({ model: 'demo/embed', input: 'shorter, please', dimensions: 64 })
    expect(short.status).toBe(200)
    expect(short.body.data[0].embedding).toEqual(demoVector('shorter, please', 64))
    expect(short.body.data[0].embedding).toHaveLength(64)
    expect(norm(short.body.data[0].embedding)).toBeCloseTo(1, 6)
    const who = await createCustomer(t.gateway, { credits: '1' })
    const tooMany = await embed({ model: 'demo/embed', input: 'longer', dimensions: 257 }, who)
    expect(tooMany).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 400,
          type: 'invalid_request',
          param: 'dimensions',
          message: 'dimensions: 257 cannot be served: demo/embed returns 256 dimensions at most',
        },
      },
    })
    expect(await records(who)).toEqual([])
    expect((await credits(who)).total_usage).toBe('0')
  })

  it('embeds token arrays, one or several, counting their tokens exactly', async () => {
    const one = await embed({ model: 'demo/embed', input: [15339, 1917, 0] })
    expect(one.status).toBe(200)
    expect(one.body.data).toEqual([{ object: 'embedding', index: 0, embedding: demoVector([15339, 1917, 0]) }])
    expect(one.body.usage.prompt_tokens).toBe(3)
    const several = await embed({
      model: 'demo/embed',
      input: [
        [1, 2],
        [3, 4, 5],
        [1, 2],
      ],
    })
    expect(several.status).toBe(200)
    expect(several.body.data.map((item: { embedding: number[] }) => item.embedding)).toEqual([demoVector([1, 2]), demoVector([3, 4, 5]), demoVector([1, 2])])
    expect(several.body.usage).toMatchObject({ prompt_tokens: 7, cost: 0.00000014 })
  })

  it('shows the request in GET /generation as api_type embeddings and in GET /activity', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const { body } = await embed({ model: 'demo/embed', input: ['one two three four', 'five'] }, who)
    const generation = await (await t.request(`/api/v1/generation?id=${body.id}`, { headers: who.auth })).json()
    expect(generation.data).toMatchObject({
      id: body.id,
      model: 'demo/embed',
      api_type: 'embeddings',
      streamed: false,
      tokens_prompt: 6,
      tokens_completion: 0,
      native_tokens_prompt: 6,
      total_cost: 0.00000012,
      provider_name: 'Demo (offline)',
    })
    const activity = await (await t.request('/api/v1/activity', { headers: who.auth })).json()
    expect(activity.data).toEqual([
      expect.objectContaining({ model: 'demo/embed', provider: 'demo', requests: 1, prompt_tokens: 6, completion_tokens: 0, usage: 0.0000001032 }),
    ])
  })

  it('holds the input’s bytes at the prompt price: 402 when the credits cannot cover them, without calling the model', async () => {
    // 0.0000001 EUR. 100 bytes hold 100 × $0.00000002 × 0.86 = 0.00000172 EUR: refused. 2 bytes hold 0.0000000344: served,
    // and charged 1 token, 0.0000000172 EUR.
    const poor = await createCustomer(t.gateway, { credits: '0.0000001' })
    const refused = await embed({ model: 'demo/embed', input: 'x'.repeat(100) }, poor)
    expect(refused.status).toBe(402)
    expect(refused.body.error).toMatchObject({ code: 402, type: 'insufficient_credits', metadata: { required: '0.00000172', available: '0.0000001' } })
    const served = await embed({ model: 'demo/embed', input: 'hi' }, poor)
    expect(served.status).toBe(200)
    expect(served.body.usage).toMatchObject({ prompt_tokens: 1, cost_eur: 0.0000000172 })
    expect(await credits(poor)).toMatchObject({ balance: '0.0000000828', total_usage: '0.0000000172' })
    // A token array holds its length: 4 tokens hold 0.0000000688 EUR, within what is left.
    expect((await embed({ model: 'demo/embed', input: [1, 2, 3, 4] }, poor)).status).toBe(200)
    expect((await embed({ model: 'demo/embed', input: [1, 2, 3, 4, 5] }, poor)).status).toBe(402)
    expect((await records(poor)).map((r) => r.cost_eur)).toEqual(['0.0000000172', '0.0000000688'])
  })

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['no input', { model: 'demo/embed' }, 'input', 'input: is required'],
    ['no model', { input: 'hi' }, 'model', 'model: is required'],
    ['an empty string', { model: 'demo/embed', input: '' }, 'input', 'input: must not be empty'],
    ['an empty list', { model: 'demo/embed', input: [] }, 'input', 'input: must not be empty'],
    ['an empty string in the list', { model: 'demo/embed', input: ['a', ''] }, 'input.1', 'input.1: must not be empty'],
    ['an empty token array', { model: 'demo/embed', input: [[1], []] }, 'input.1', 'input.1: must not be empty'],
    ['a negative token', { model: 'demo/embed', input: [1, -1] }, 'input.1', 'input.1: a token id must be an integer ≥ 0'],
    ['a fractional token', { model: 'demo/embed', input: [[1], [2, 2.5]] }, 'input.1.1', 'input.1.1: a token id must be an integer ≥ 0'],
    [
      'a mixed list',
      { model: 'demo/embed', input: ['a', 1] },
      'input',
      'input: must be a string, an array of strings, an array of token ids, or an array of token id arrays',
    ],
    [
      'a number',
      { model: 'demo/embed', input: 42 },
      'input',
      'input: must be a string, an array of strings, an array of token ids, or an array of token id arrays',
    ],
    [
      'too many inputs',
      { model: 'demo/embed', input: Array.from({ length: EMBEDDING_LIMITS.inputs + 1 }, () => 'a') },
      'input',
      'input: must have at most 2048 items (one request embeds at most 2048 inputs)',
    ],
    [
      'too long an input',
      { model: 'demo/embed', input: ['ok', 'a'.repeat(EMBEDDING_LIMITS.inputCharacters + 1)] },
      'input.1',
      'input.1: must have at most 262144 characters',
    ],
    [
      'too long a token array',
      { model: 'demo/embed', input: new Array(EMBEDDING_LIMITS.inputTokens + 1).fill(7) },
      'input',
      'input: must have at most 65536 tokens',
    ],
    ['another encoding', { model: 'demo/embed', input: 'hi', encoding_format: 'hex' }, 'encoding_format', 'encoding_format: must be "float" or "base64"'],
    ['zero dimensions', { model: 'demo/embed', input: 'hi', dimensions: 0 }, 'dimensions', 'dimensions: must be >=1'],
    ['fractional dimensions', { model: 'demo/embed', input: 'hi', dimensions: 1.5 }, 'dimensions', 'dimensions: must be an integer'],
  ]
  for (const [name, body, param, message] of invalid) {
    it(`answers 400 naming the field, charging nothing: ${name}`, async () => {
      const who = await createCustomer(t.gateway, { credits: '1' })
      expect(await embed(body, who)).toMatchObject({ status: 400, body: { error: { code: 400, type: 'invalid_request', param, message } } })
      expect(await records(who)).toEqual([])
      expect((await credits(who)).total_usage).toBe('0')
    })
  }

  it('accepts 2048 inputs, one vector each', async () => {
    const { status, body } = await embed({ model: 'demo/embed', input: Array.from({ length: EMBEDDING_LIMITS.inputs }, (_, i) => `input ${i}`) })
    expect(status).toBe(200)
    expect(body.data).toHaveLength(2048)
    expect(body.data[2047]).toEqual({ object: 'embedding', index: 2047, embedding: demoVector('input 2047') })
  })

  it('answers 400 naming what a model serves when it does not embed, and falls back to a models entry that does', async () => {
    const chatModel = await embed({ model: 'demo/echo', input: 'hi' })
    expect(chatModel).toMatchObject({
      status: 400,
      body: { error: { param: 'model', message: 'model: demo/echo does not serve /embeddings (it serves /chat/completions). Models that do: demo/embed.' } },
    })
    const fallback = await embed({ model: 'demo/echo', models: ['demo/embed'], input: 'hi' })
    expect([fallback.status, fallback.body.model]).toEqual([200, 'demo/embed'])
    const chat = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'demo/embed', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(chat.status).toBe(400)
    expect((await chat.json()).error.message).toMatch(/^model: demo\/embed does not serve \/chat\/completions \(it serves \/embeddings\)\./)
    expect((await embed({ model: 'demo/nothing', input: 'hi' })).status).toBe(404)
  })

  it('takes bodies up to the chat body limit (not the default one), 413 beyond', async () => {
    const small = await startGateway({ providers: [demo({ embeddings: true })], bodyLimits: { default: 1024, chat: 4096 } })
    try {
      const who = await createCustomer(small.gateway, { credits: '1' })
      const post = (input: string) =>
        small.request('/api/v1/embeddings', { method: 'POST', headers: { ...who.auth, ...json }, body: JSON.stringify({ model: 'demo/embed', input }) })
      expect((await post('a'.repeat(3000))).status).toBe(200)
      const tooLarge = await post('a'.repeat(5000))
      expect(tooLarge.status).toBe(413)
      expect(await small.gateway.admin.usage(who.user.org_id)).toHaveLength(1)
    } finally {
      await small.close()
    }
  })

  it('records user as the generation’s external_user', async () => {
    const who = await createCustomer(t.gateway, { credits: '1' })
    const { body } = await embed({ model: 'demo/embed', input: 'who am I', user: 'end-user-42' }, who)
    expect((await records(who))[0]).toMatchObject({ id: body.id, external_user: 'end-user-42' })
  })

  it('lists demo/embed in /models with its embeddings output and route', async () => {
    const { data } = await (await t.request('/api/v1/models?output_modalities=embeddings')).json()
    expect(data.map((m: { id: string }) => m.id)).toEqual(['demo/embed'])
    expect(data[0]).toMatchObject({
      architecture: { modality: 'text->embeddings', input_modalities: ['text'], output_modalities: ['embeddings'] },
      supported_api_endpoints: ['/api/v1/embeddings'],
      pricing: { prompt: '0.00000002', completion: '0' },
    })
  })

  it('needs an API key, and is in the OpenAPI document with the pipeline’s errors', async () => {
    expect((await t.request('/api/v1/embeddings', { method: 'POST', headers: json, body: JSON.stringify({ model: 'demo/embed', input: 'hi' }) })).status).toBe(
      401,
    )
    const doc = await (await t.request('/api/v1/openapi.json')).json()
    const operation = doc.paths['/api/v1/embeddings'].post
    expect(operation.operationId).toBe('createEmbeddings')
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '402', '408', '502', '503']))
  })
})
