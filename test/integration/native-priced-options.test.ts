/**
 * Options that change what a provider charges (docs/money.md#priced-options), on every path, over real HTTP: the
 * native /messages path to the fake Anthropic (fast mode, US-only inference, one-hour cache writes, service tiers,
 * the fields and `anthropic-beta` values passed on), the native /responses path to the fake OpenAI (`service_tier`,
 * stored prompts and conversations, the fields passed on), chat's audio output, and `provider.max_price` against
 * the prices a request is billed at (long-context ones included).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { anthropic } from '../../src/providers/anthropic'
import { openai } from '../../src/providers/openai'
import type { ModelPricing, ProviderModel } from '../../src/contracts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

const KEY = 'sk-ant-api03-test-key-0123456789'
const OPUS = anthropicModels.find((m) => m.id === 'anthropic/claude-opus-5.5')!
const HAIKU = anthropicModels.find((m) => m.id === 'anthropic/claude-haiku-4.5')!
// The same model with fast mode priced (6× every token price), as an operator would give it in modelOverrides.
const OPUS_FAST: ProviderModel = { ...OPUS, id: 'anthropic/claude-opus-5.5-fast', pricing: { ...OPUS.pricing, speeds: { fast: '6' } } }

const PLAIN: ModelPricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const TIERED: ModelPricing = { ...PLAIN, service_tiers: { priority: { prompt: '0.0000018', completion: '0.0000036' } } }
// Past 50 prompt tokens, every prompt token costs twice as much (a long-context price).
const LONG: ModelPricing = { ...PLAIN, long_context: { above_prompt_tokens: 50, prompt: '0.000002', completion: '0.000003' } }
const openaiModel = (id: string, upstreamId: string, pricing: ModelPricing): ProviderModel => ({ id, upstreamId, pricing, maxCompletionTokens: 1000 })

/** USD per token (decimal strings) × counts, summed: exact, in ledger units (10^-12). */
const usdUnits = (...terms: [number, string][]) => terms.reduce((sum, [count, price]) => sum + BigInt(count) * units(price), 0n)
/** The EUR charge of a USD amount at the tests' 0.86, rounded half-up once to 12 digits. */
const eurOf = (usd: bigint) => decimalText(roundUnits(usd * 86n, 2))
const times = (price: string, factor: string) => decimalText(roundUnits(units(price) * units(factor), 12))

let fakeAnthropic: FakeAnthropic
let fakeOpenAI: FakeOpenAI
let t: TestGateway

beforeAll(async () => {
  fakeAnthropic = await startFakeAnthropic({ apiKey: KEY })
  fakeOpenAI = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  t = await startGateway({
    retry: { maxRetries: 0 },
    providers: [
      anthropic({ apiKey: KEY, baseURL: fakeAnthropic.url, models: [OPUS, OPUS_FAST, HAIKU] }),
      openai({
        apiKey: 'sk-upstream',
        baseURL: fakeOpenAI.url,
        models: [
          openaiModel('openai/plain', 'gpt-test', PLAIN),
          openaiModel('openai/tiered', 'gpt-test', TIERED),
          openaiModel('openai/long', 'gpt-test', LONG),
        ],
      }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fakeAnthropic?.close()
  await fakeOpenAI?.close()
})

const messages = (customer: { key: string }, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('/api/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': customer.key, 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify({ max_tokens: 200, messages: [{ role: 'user', content: 'Say hello' }], ...body }),
  })
const responses = (customer: { key: string }, body: Record<string, unknown>) =>
  t.request('/api/v1/responses', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${customer.key}` },
    body: JSON.stringify({ input: 'Say hello', store: false, ...body }),
  })
const chat = (customer: { key: string }, body: Record<string, unknown>) =>
  t.request('/api/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${customer.key}` },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Say hello' }], ...body }),
  })
const spent = async (customer: Awaited<ReturnType<typeof createCustomer>>) => (await t.gateway.admin.getCredits(customer.user.org_id)).total_usage

/** Expects a 400 naming `param`, with nothing sent upstream and nothing charged. */
async function refused(res: Response, param: string, customer: Awaited<ReturnType<typeof createCustomer>>, sentBefore: number, fake: { requests: unknown[] }) {
  expect(res.status).toBe(400)
  const body = await res.json()
  const error = body.error
  expect(error.param ?? error.metadata?.param ?? body.error?.param).toBe(param)
  expect(JSON.stringify(body)).toContain(param)
  expect(fake.requests.length).toBe(sentBefore)
  expect(await spent(customer)).toBe('0')
}

describe('/messages passed on natively: options that change the price', () => {
  it('speed "fast" on a model without a fast-mode price is a 400 naming speed; nothing reaches Anthropic or is charged', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const before = fakeAnthropic.requests.length
    const res = await messages(customer, { model: 'anthropic/claude-opus-5.5', speed: 'fast' }, { 'anthropic-beta': 'fast-mode-2026-02-01' })
    await refused(res, 'speed', customer, before, fakeAnthropic)
  })

  it('speed "fast" on a model whose pricing has it is passed on with its beta and billed at 6× every token price', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const res = await messages(customer, { model: 'anthropic/claude-opus-5.5-fast', speed: 'fast' }, { 'anthropic-beta': 'fast-mode-2026-02-01' })
    expect(res.status).toBe(200)
    const message = await res.json()
    const sent = fakeAnthropic.requests.at(-1)!
    expect(sent.body.speed).toBe('fast')
    expect(sent.headers['anthropic-beta']).toBe('fast-mode-2026-02-01')
    const { input_tokens: input, output_tokens: output } = message.usage
    const usd = usdUnits([input, times(OPUS.pricing.prompt, '6')], [output, times(OPUS.pricing.completion, '6')])
    expect(String(message.usage.cost)).toBe(decimalText(usd))
    expect(await spent(customer)).toBe(eurOf(usd))
    // Six times what the same request costs at the plain speed.
    expect(usd).toBe(6n * usdUnits([input, OPUS.pricing.prompt], [output, OPUS.pricing.completion]))
  })

  it('inference_geo "us" is billed at 1.1× on a model released from February 2026; a 400 on an older one', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const res = await messages(customer, { model: 'anthropic/claude-opus-5.5', inference_geo: 'us' })
    expect(res.status).toBe(200)
    const message = await res.json()
    expect(fakeAnthropic.requests.at(-1)!.body.inference_geo).toBe('us')
    const { input_tokens: input, output_tokens: output } = message.usage
    const usd = usdUnits([input, times(OPUS.pricing.prompt, '1.1')], [output, times(OPUS.pricing.completion, '1.1')])
    expect(String(message.usage.cost)).toBe(decimalText(usd))
    expect(await spent(customer)).toBe(eurOf(usd))

    const other = await createCustomer(t.gateway, { credits: '5' })
    const before = fakeAnthropic.requests.length
    await refused(await messages(other, { model: 'anthropic/claude-haiku-4.5', inference_geo: 'us' }), 'inference_geo', other, before, fakeAnthropic)
    // The default region is the plain price.
    expect((await messages(other, { model: 'anthropic/claude-haiku-4.5', inference_geo: 'global' })).status).toBe(200)
  })

  it('one-hour cache writes are passed on and billed at their own price (2× input), not the 5-minute one', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ')
    const res = await messages(customer, {
      model: 'anthropic/claude-opus-5.5',
      cache_control: { type: 'ephemeral', ttl: '1h' },
      messages: [{ role: 'user', content: long }],
    })
    expect(res.status).toBe(200)
    const message = await res.json()
    expect(fakeAnthropic.requests.at(-1)!.body.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
    const usage = message.usage
    expect(usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: usage.cache_creation_input_tokens })
    expect(usage.cache_creation_input_tokens).toBeGreaterThan(0)
    const usd = usdUnits(
      [usage.input_tokens, OPUS.pricing.prompt],
      [usage.cache_creation_input_tokens, OPUS.pricing.input_cache_write_1h!],
      [usage.output_tokens, OPUS.pricing.completion],
    )
    expect(OPUS.pricing.input_cache_write_1h).toBe(times(OPUS.pricing.prompt, '2'))
    expect(String(usage.cost)).toBe(decimalText(usd))
    expect(await spent(customer)).toBe(eurOf(usd))
  })

  it('a service_tier other than auto or standard_only is a 400; those two are passed on', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const before = fakeAnthropic.requests.length
    await refused(await messages(customer, { model: 'anthropic/claude-haiku-4.5', service_tier: 'priority' }), 'service_tier', customer, before, fakeAnthropic)
    expect((await messages(customer, { model: 'anthropic/claude-haiku-4.5', service_tier: 'standard_only' })).status).toBe(200)
    expect(fakeAnthropic.requests.at(-1)!.body.service_tier).toBe('standard_only')
  })

  it('passes on only the fields and anthropic-beta values it knows: nothing else a client sends', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const res = await messages(
      customer,
      {
        model: 'anthropic/claude-haiku-4.5',
        container: 'container_operator_01',
        diagnostics: { trace: true },
        betas: ['files-api-2025-04-14'],
        extra_field: 1,
      },
      { 'anthropic-beta': 'files-api-2025-04-14, interleaved-thinking-2025-05-14,oauth-2025-04-20,mcp-client-2025-04-04,claude-code-20250219' },
    )
    expect(res.status).toBe(200)
    const sent = fakeAnthropic.requests.at(-1)!
    expect(Object.keys(sent.body).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream'])
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,claude-code-20250219')
  })

  it('holds one-hour cache writes at their price: a balance that covers the plain hold but not the 2× one is refused', async () => {
    // 40 prompt tokens of messages (120 bytes / 3) and 10 completion tokens on Haiku 4.5: the plain hold is
    // 40 × 0.000001 + 10 × 0.000005 = 0.00009 USD; with one-hour writes 40 × 0.000002 + 10 × 0.000005 = 0.00013 USD.
    const content = 'x'.repeat(120 - JSON.stringify([{ role: 'user', content: '' }]).length)
    const body = { model: 'anthropic/claude-haiku-4.5', max_tokens: 10, messages: [{ role: 'user', content }] }
    const between = eurOf(usdUnits([40, '0.000001'], [10, '0.000005']) + usdUnits([20, '0.000001']))
    const customer = await createCustomer(t.gateway, { credits: between })
    const before = fakeAnthropic.requests.length
    const res = await messages(customer, { ...body, cache_control: { type: 'ephemeral', ttl: '1h' } })
    expect(res.status).toBe(402)
    expect(fakeAnthropic.requests.length).toBe(before)
    expect((await messages(customer, body)).status).toBe(200)
  })
})

describe('/responses passed on natively: service_tier, stored prompts, the fields passed on', () => {
  it('service_tier "priority" is a 400 on a model without its price, and billed at the tier price where there is one', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const before = fakeOpenAI.requests.length
    await refused(await responses(customer, { model: 'openai/plain', service_tier: 'priority' }), 'service_tier', customer, before, fakeOpenAI)

    const res = await responses(customer, { model: 'openai/tiered', service_tier: 'priority' })
    expect(res.status).toBe(200)
    const response = await res.json()
    const sent = fakeOpenAI.requests.at(-1)!
    expect(sent.path).toBe('/v1/responses')
    expect(sent.body.service_tier).toBe('priority')
    const usd = usdUnits([response.usage.input_tokens, '0.0000018'], [response.usage.output_tokens, '0.0000036'])
    expect(String(response.usage.cost)).toBe(decimalText(usd))
    expect(await spent(customer)).toBe(eurOf(usd))
  })

  it('prompt and conversation references are refused (they would reach the operator’s own OpenAI account)', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const before = fakeOpenAI.requests.length
    await refused(await responses(customer, { model: 'openai/plain', prompt: { id: 'pmpt_operator', version: '2' } }), 'prompt', customer, before, fakeOpenAI)
    await refused(await responses(customer, { model: 'openai/plain', conversation: 'conv_operator' }), 'conversation', customer, before, fakeOpenAI)
  })

  it('passes on only the fields it knows', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const res = await responses(customer, { model: 'openai/plain', prompt_cache_key: 'k1', truncation: 'auto', extra_field: true, max_tool_calls: 5 })
    expect(res.status).toBe(200)
    const sent = fakeOpenAI.requests.at(-1)!
    expect(Object.keys(sent.body).sort()).toEqual(['input', 'model', 'prompt_cache_key', 'store', 'stream', 'truncation'])
  })
})

describe('chat completions: audio output and max_price', () => {
  it('audio output (modalities, audio) is a 400: no catalogue price covers its audio tokens', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const before = fakeOpenAI.requests.length
    await refused(
      await chat(customer, { model: 'openai/plain', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }),
      'modalities',
      customer,
      before,
      fakeOpenAI,
    )
    await refused(await chat(customer, { model: 'openai/plain', audio: { voice: 'alloy', format: 'wav' } }), 'audio', customer, before, fakeOpenAI)
  })

  it('provider.max_price compares the long-context prices of a long prompt: a prompt past the threshold is not routed above the price', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    // max_price.prompt 1.5 USD per million: the plain price (1) is within it, the long-context one (2) is not.
    const maxPrice = { provider: { max_price: { prompt: 1.5 } } }
    const short = await chat(customer, { model: 'openai/long', ...maxPrice })
    expect(short.status).toBe(200)
    const before = fakeOpenAI.requests.length
    const long = await chat(customer, { model: 'openai/long', ...maxPrice, messages: [{ role: 'user', content: 'word '.repeat(100) }] })
    expect(long.status).toBe(404)
    const error = (await long.json()).error
    expect(error.metadata.excluded).toEqual([
      expect.objectContaining({ provider: 'openai', model: 'openai/long', preference: 'max_price', reason: expect.stringContaining('prompt price') }),
    ])
    expect(fakeOpenAI.requests.length).toBe(before)
  })

  it('an image given by URL holds 2,048 prompt tokens (its bytes are not in the request), an inline one its bytes', async () => {
    const customer = await createCustomer(t.gateway, { credits: '0.000000000001' })
    const part = (url: string) => ({ type: 'image_url', image_url: { url } })
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'What are these?' }, part('https://example.com/a.png'), part('https://example.com/b.png')] },
    ]
    const res = await chat(customer, { model: 'openai/plain', max_tokens: 10, messages })
    expect(res.status).toBe(402)
    // (bytes / 3, rounded up) + 2 × 2,048 prompt tokens at 0.000001 USD, 10 completion tokens at 0.000002, at 0.86 EUR a USD.
    const prompt = Math.ceil(Buffer.byteLength(JSON.stringify(messages)) / 3) + 2 * 2048
    expect((await res.json()).error.metadata.required).toBe(eurOf(usdUnits([prompt, '0.000001'], [10, '0.000002'])))
  })

  it('a whole request whose provider sends nothing in time falls back; only the answer served is billed (docs/money.md)', async () => {
    const fake = await startFakeOpenAI({ apiKey: 'sk-upstream' })
    const g = await startGateway({
      upstreamTimeoutMs: 300,
      retry: { maxRetries: 0 },
      providers: [
        openai({
          apiKey: 'sk-upstream',
          baseURL: fake.url,
          models: [openaiModel('openai/hang', 'hang', PLAIN), openaiModel('openai/plain', 'gpt-test', PLAIN)],
        }),
      ],
    })
    try {
      const customer = await createCustomer(g.gateway, { credits: '5' })
      const res = await g.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${customer.key}` },
        body: JSON.stringify({ model: 'openai/hang', models: ['openai/plain'], messages: [{ role: 'user', content: 'Say hello' }] }),
      })
      expect(res.status).toBe(200)
      const answer = await res.json()
      expect(answer.model).toBe('openai/plain')
      // The first provider got the request and was cut: it may bill the operator, the customer pays for the answer only.
      expect(fake.requests.map((r) => r.body.model)).toEqual(['hang', 'gpt-test'])
      await expect.poll(() => fake.aborted).toBe(1)
      const usd = usdUnits([answer.usage.prompt_tokens, '0.000001'], [answer.usage.completion_tokens, '0.000002'])
      expect((await g.gateway.admin.getCredits(customer.user.org_id)).total_usage).toBe(eurOf(usd))
      const records = await g.gateway.context.usage.list(customer.user.org_id)
      expect(records.map((r) => [r.model, r.attempts])).toEqual([['openai/plain', 2]])
    } finally {
      await g.close()
      await fake.close()
    }
  })

  it('provider.max_price compares the price of the service tier asked for', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    // Priority's prompt price is 1.8 USD per million, above max_price's 1.5; the plain 1 is within it.
    const res = await chat(customer, { model: 'openai/tiered', service_tier: 'priority', provider: { max_price: { prompt: 1.5 } } })
    expect(res.status).toBe(404)
    expect((await res.json()).error.message).toContain('max_price')
    expect((await chat(customer, { model: 'openai/tiered', provider: { max_price: { prompt: 1.5 } } })).status).toBe(200)
  })

  it('a max_price rule of the key bounds the service tier asked for as the request’s own would (docs/policies.md)', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    await t.gateway.admin.setKeyRules(customer.key, { max_price: { prompt: '1.5' } })
    const res = await chat(customer, { model: 'openai/tiered', service_tier: 'priority' })
    expect(res.status).toBe(404)
    expect((await res.json()).error.message).toContain('max_price')
    expect((await chat(customer, { model: 'openai/tiered' })).status).toBe(200)
  })
})
