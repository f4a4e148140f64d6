/**
 * Embeddings clients unchanged against the gateway over real HTTP on 127.0.0.1 (docs/embeddings.md): the `openai`
 * SDK's `embeddings.create` (its default base64, which it decodes, and `encoding_format: "float"`, `dimensions`) and
 * the Vercel AI SDK's `embed` / `embedMany` through `@ai-sdk/openai-compatible`, on OpenAI (the fake OpenAI
 * upstream), Gemini (the fake Gemini API) and the offline demo model. Vectors are what the upstream sent (float32 when
 * they travel as base64), and costs are exact: the usage record's cost is the tokens times the price.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { embed, embedMany } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo, gemini, geminiModels, openai } from '../../src/index'
import { demoVector } from '../../src/providers/demo-embeddings'
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

const GEMINI_KEY = 'AIzaSy-compat-embeddings-key'
// Prices per input token (the catalogue's): text-embedding-3-small $0.02 per M, gemini-embedding-001 $0.15, demo/embed $0.02.
const PRICES: Record<string, string> = {
  'openai/text-embedding-3-small': '0.00000002',
  'google/gemini-embedding-001': '0.00000015',
  'demo/embed': '0.00000002',
}
/** The exact cost of `tokens` input tokens of a model: USD, and EUR at 0.86 rounded once to 12 digits. */
const costOf = (model: string, tokens: number) => {
  const usd = BigInt(tokens) * units(PRICES[model])
  return { usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) }
}
/** The fakes' and the demo's token count of a text: 4 characters a token, at least 1. */
const tokensOf = (texts: string[]) => texts.reduce((n, text) => n + Math.max(1, Math.ceil(text.length / 4)), 0)
const f32 = (vector: number[]) => vector.map(Math.fround)

let upstream: FakeOpenAI
let google: FakeGemini
let t: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>

beforeAll(async () => {
  upstream = await startFakeOpenAI({ apiKey: 'sk-openai-compat' })
  google = await startFakeGemini({ apiKey: GEMINI_KEY })
  t = await startGateway({
    providers: [
      openai({ apiKey: 'sk-openai-compat', baseURL: upstream.url }),
      gemini({ apiKey: GEMINI_KEY, baseURL: google.url, models: geminiModels }),
      demo({ embeddings: true }),
    ],
  })
  customer = await createCustomer(t.gateway, { credits: '5' })
})
afterAll(async () => {
  await t?.close()
  await Promise.all([upstream?.close(), google?.close()])
})

/** The usage record of a generation, and what it cost. */
const recordOf = async (id: string | undefined) => (await t.gateway.admin.usage(customer.user.org_id)).find((r) => r.id === id)!
const expectCost = async (id: string | undefined, model: string, tokens: number) => {
  const record = await recordOf(id)
  const { usd, eur } = costOf(model, tokens)
  expect(record).toMatchObject({ endpoint: 'embeddings', model, prompt_tokens: tokens, cost: usd, cost_eur: eur })
}

// What each upstream answers for a text: the fakes' vectors (rounded to 6 decimals), the demo's (float32 already).
const targets = [
  { model: 'openai/text-embedding-3-small', vector: (text: string, n = 1536) => fakeEmbedding(text, n), estimated: false },
  { model: 'google/gemini-embedding-001', vector: (text: string, n = 3072) => fakeEmbedding(text, n), estimated: true },
  { model: 'demo/embed', vector: (text: string, n = 256) => demoVector(text, n), estimated: false },
]

describe('the openai SDK: client.embeddings.create', () => {
  for (const target of targets) {
    it(`${target.model}: its default base64 decodes to the upstream's vectors as float32, and the cost is exact`, async () => {
      const raw: string[] = []
      const client = openaiClient(t.url, customer.key, raw)
      const input = ['The quick brown fox', 'jumps over the lazy dog']
      const { data: answer, response } = await client.embeddings.create({ model: target.model, input }).withResponse()
      // The SDK asked for base64 (its default) and got strings.
      expect(JSON.parse(raw.at(-1)!).data[0].embedding).toEqual(expect.any(String))
      expect(answer.data.map((item) => Array.from(item.embedding))).toEqual(input.map((text) => f32(target.vector(text))))
      expect(answer.model).toBe(target.model)
      expect(answer.usage).toMatchObject({ prompt_tokens: tokensOf(input), total_tokens: tokensOf(input) })
      await expectCost(response.headers.get('x-generation-id') ?? undefined, target.model, tokensOf(input))
      expect((await recordOf(response.headers.get('x-generation-id') ?? undefined)).usage_estimated).toBe(target.estimated)
    })

    it(`${target.model}: encoding_format float and dimensions give the upstream's shortened vectors as they are`, async () => {
      const client = openaiClient(t.url, customer.key)
      const { data: answer, response } = await client.embeddings
        .create({ model: target.model, input: 'shorten me', encoding_format: 'float', dimensions: 128 })
        .withResponse()
      expect(answer.data).toEqual([{ object: 'embedding', index: 0, embedding: target.vector('shorten me', 128) }])
      await expectCost(response.headers.get('x-generation-id') ?? undefined, target.model, tokensOf(['shorten me']))
    })
  }

  it('surfaces the gateway’s 400 as the SDK’s BadRequestError, naming the field', async () => {
    const client = openaiClient(t.url, customer.key)
    const error = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: ['fine', ''] }).catch((e) => e)
    expect(error.status).toBe(400)
    expect(error.error).toMatchObject({ param: 'input.1', message: 'input.1: must not be empty' })
  })
})

describe('the Vercel AI SDK: embed and embedMany through @ai-sdk/openai-compatible', () => {
  const provider = () => {
    const ids: string[] = []
    const gateway = createOpenAICompatible({
      name: 'model-gateway',
      baseURL: `${t.url}/api/v1`,
      apiKey: customer.key,
      fetch: async (input, init) => {
        const res = await fetch(input, init)
        ids.push(res.headers.get('x-generation-id') ?? '')
        return res
      },
    })
    return { gateway, ids }
  }

  for (const target of targets) {
    it(`${target.model}: embedMany returns the upstream's vectors in order, with the tokens the gateway billed`, async () => {
      const { gateway, ids } = provider()
      const values = ['sunny day at the beach', 'rainy day in the city', 'a third value']
      const result = await embedMany({ model: gateway.embeddingModel(target.model), values, maxRetries: 0 })
      expect(result.embeddings).toEqual(values.map((text) => target.vector(text)))
      expect(result.usage.tokens).toBe(tokensOf(values))
      expect(ids).toHaveLength(1)
      await expectCost(ids[0], target.model, tokensOf(values))
    })

    it(`${target.model}: embed returns one vector, with its dimensions from providerOptions`, async () => {
      const { gateway, ids } = provider()
      const result = await embed({
        model: gateway.embeddingModel(target.model),
        value: 'one value',
        maxRetries: 0,
        providerOptions: { 'model-gateway': { dimensions: 64 } },
      })
      expect(result.embedding).toEqual(target.vector('one value', 64))
      expect(result.usage.tokens).toBe(tokensOf(['one value']))
      await expectCost(ids[0], target.model, tokensOf(['one value']))
    })
  }
})
