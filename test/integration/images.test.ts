/**
 * POST /api/v1/images/generations over real HTTP on 127.0.0.1 (docs/images.md), with the real `openai` SDK
 * (`client.images.generate`) against the fake OpenAI Images API: base64 images as the upstream sent them, billed exactly
 * from the reported tokens (OpenAI's gpt-image-1 prices), 402 when the credits cannot cover the most the request may
 * cost, a fallback to a second provider on a 503, the 400s of bad input, and what /generation shows.
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openai, openaiCompatible, openaiImageModels, type ProviderModel } from '../../src/index'
import { FAKE_IMAGE_TOKENS, fakeImage } from '../fakes/openai-images'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

// OpenAI's image models without gpt-image-1's retirement date (2026-10-23), so the tests do not depend on the day they run.
const imageModels: ProviderModel[] = openaiImageModels.map((m) => ({ ...m, expirationDate: undefined }))
const gptImage1 = imageModels.find((m) => m.id === 'openai/gpt-image-1')!
const shared = (upstreamId: string): ProviderModel => ({ ...gptImage1, id: 'shared/image', upstreamId })
const json = { 'content-type': 'application/json' }

// gpt-image-1 (OpenAI's model page): $5 per 1M text input tokens, $40 per 1M image output tokens; EUR at 0.86.
const PRICES: Record<string, { input: bigint; output: bigint }> = {
  'openai/gpt-image-1': { input: 5_000_000n, output: 40_000_000n },
  'openai/gpt-image-1-mini': { input: 2_000_000n, output: 8_000_000n },
  'openai/gpt-image-2': { input: 5_000_000n, output: 30_000_000n },
}
/** The fake's usage of a prompt and what it costs: a text token per 4 characters, each image's tokens by quality and size. */
const costOf = (model: string, prompt: string, n: number, quality = 'medium', size = '1024x1024') => {
  const input = Math.max(1, Math.ceil(prompt.length / 4))
  const output = n * FAKE_IMAGE_TOKENS[quality][size]
  const usd = BigInt(input) * PRICES[model].input + BigInt(output) * PRICES[model].output
  return { input, output, usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)), eurUnits: roundUnits(usd * 86n, 2) }
}

let alpha: FakeOpenAI
let beta: FakeOpenAI
let t: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>

beforeAll(async () => {
  alpha = await startFakeOpenAI({ apiKey: 'sk-alpha' })
  beta = await startFakeOpenAI({ apiKey: ['sk-beta', 'sk-customer-beta-9999'] })
  t = await startGateway({
    providers: [
      openai({
        apiKey: 'sk-alpha',
        baseURL: alpha.url,
        models: [
          ...imageModels,
          shared('fail-503'),
          { ...gptImage1, id: 'test/no-usage', upstreamId: 'no-usage' },
          { id: 'openai/gpt-4o-mini', pricing: { prompt: '0.00000015', completion: '0.0000006' } },
        ],
      }),
      openaiCompatible({
        slug: 'beta',
        name: 'Beta',
        baseURL: beta.url,
        apiKey: 'sk-beta',
        byokSupported: true,
        models: [shared('gpt-image-1'), { ...gptImage1, id: 'test/url', upstreamId: 'fail-url' }],
      }),
    ],
  })
  customer = await createCustomer(t.gateway, { credits: '10' })
})
afterAll(async () => {
  await t?.close()
  await Promise.all([alpha?.close(), beta?.close()])
})

const credits = async (orgId = customer.user.org_id) => units((await t.gateway.admin.getCredits(orgId)).balance)
const recordOf = async (id: string | null | undefined, orgId = customer.user.org_id) => (await t.gateway.admin.usage(orgId)).find((r) => r.id === id)
const generate = (body: Record<string, unknown>, auth = customer.auth) =>
  t.request('/api/v1/images/generations', { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify(body) })
const count = (fake: FakeOpenAI) => fake.requests.filter((r) => r.path === '/v1/images/generations').length

describe('the openai SDK: client.images.generate', () => {
  it('gpt-image-1: the upstream images as base64, its usage, and the reported tokens billed exactly once', async () => {
    const before = await credits()
    const raw: string[] = []
    const client = openaiClient(t.url, customer.key, raw)
    const prompt = 'A watercolour fox in a snowy birch forest'
    const { data: answer, response } = await client.images
      .generate({ model: 'openai/gpt-image-1', prompt, n: 2, size: '1536x1024', quality: 'high', output_format: 'webp', background: 'opaque' })
      .withResponse()
    const upstream = alpha.requests.at(-1)!
    expect(upstream.path).toBe('/v1/images/generations')
    expect(upstream.headers.authorization).toBe('Bearer sk-alpha')
    expect(upstream.body).toEqual({ model: 'gpt-image-1', prompt, n: 2, size: '1536x1024', quality: 'high', background: 'opaque', output_format: 'webp' })
    expect(answer.data!.map((image) => Buffer.from(image.b64_json!, 'base64'))).toEqual([fakeImage(prompt, 0), fakeImage(prompt, 1)])
    expect(answer.data![0].b64_json!.startsWith('iVBORw0KGgo')).toBe(true)
    const cost = costOf('openai/gpt-image-1', prompt, 2, 'high', '1536x1024')
    expect(cost.output).toBe(12_416)
    expect(answer).toMatchObject({ created: 1764201600, size: '1536x1024', quality: 'high', output_format: 'webp', background: 'opaque' })
    const body = JSON.parse(raw.at(-1)!)
    expect(body.usage).toEqual({
      cost: Number(cost.usd),
      cost_currency: 'USD',
      cost_eur: Number(cost.eur),
      is_byok: false,
      input_tokens: cost.input,
      output_tokens: cost.output,
      total_tokens: cost.input + cost.output,
      input_tokens_details: { text_tokens: cost.input, image_tokens: 0 },
      output_tokens_details: { image_tokens: cost.output, text_tokens: 0 },
      images: 2,
      cost_details: { upstream_inference_cost: Number(cost.usd) },
    })
    expect(body).toMatchObject({ model: 'openai/gpt-image-1', provider: 'OpenAI' })
    const generationId = response.headers.get('x-generation-id')
    expect(body.id).toBe(generationId)
    expect(decimalText(before - (await credits()))).toBe(cost.eur)
    expect(await recordOf(generationId)).toMatchObject({
      endpoint: 'images',
      model: 'openai/gpt-image-1',
      provider: 'openai',
      upstream_id: `req_fake_${alpha.requests.length}`,
      status: 'success',
      stream: false,
      prompt_tokens: cost.input,
      completion_tokens: cost.output,
      usage_estimated: false,
      cost: cost.usd,
      cost_eur: cost.eur,
      images: 2,
      attempts: 1,
    })
    const generation = (await (await t.request(`/api/v1/generation?id=${generationId}`, { headers: customer.auth })).json()).data
    expect(generation).toMatchObject({
      id: generationId,
      api_type: 'images',
      model: 'openai/gpt-image-1',
      total_cost: Number(cost.usd),
      usage: Number(cost.eur),
      tokens_prompt: cost.input,
      tokens_completion: cost.output,
      native_tokens_completion_images: cost.output,
      num_media_completion: 2,
    })
  })

  it('gpt-image-1-mini with quality and size left to the model: billed at its own prices from what was reported', async () => {
    const before = await credits()
    const client = openaiClient(t.url, customer.key)
    const prompt = 'A lighthouse at dusk, flat vector art, two colours'
    const answer = await client.images.generate({ model: 'openai/gpt-image-1-mini', prompt })
    // `auto` is not sent: the model picks (the fake: medium, 1024x1024).
    expect(alpha.requests.at(-1)!.body).toEqual({ model: 'gpt-image-1-mini', prompt, n: 1 })
    expect(answer.data).toHaveLength(1)
    const cost = costOf('openai/gpt-image-1-mini', prompt, 1)
    expect((answer.usage as any).cost_eur).toBe(Number(cost.eur))
    expect(decimalText(before - (await credits()))).toBe(cost.eur)
  })

  it('gpt-image-2 at high quality, landscape: the catalogue’s $5 / $30 per 1M tokens on what was reported', async () => {
    const before = await credits()
    const client = openaiClient(t.url, customer.key)
    const prompt = 'A poster for a tea brand with the words FRESH LEAF in bold type'
    const answer = await client.images.generate({ model: 'openai/gpt-image-2', prompt, quality: 'high', size: '1536x1024', n: 2 })
    expect(alpha.requests.at(-1)!.body).toEqual({ model: 'gpt-image-2', prompt, n: 2, quality: 'high', size: '1536x1024' })
    expect(answer.data).toHaveLength(2)
    const cost = costOf('openai/gpt-image-2', prompt, 2, 'high', '1536x1024')
    expect(answer.usage?.output_tokens).toBe(cost.output)
    expect((answer.usage as any).cost_eur).toBe(Number(cost.eur))
    expect(decimalText(before - (await credits()))).toBe(cost.eur)
  })

  it('falls back to the second provider when the first answers 503, and bills only the provider that served', async () => {
    const before = await credits()
    const [alphaBefore, betaBefore] = [count(alpha), count(beta)]
    const client = openaiClient(t.url, customer.key)
    const prompt = 'Second time lucky'
    const { data: answer, response } = await client.images.generate({ model: 'shared/image', prompt, quality: 'low', size: '1024x1024' }).withResponse()
    expect(count(alpha)).toBeGreaterThan(alphaBefore)
    expect(count(beta)).toBe(betaBefore + 1)
    expect(beta.requests.at(-1)!.body).toEqual({ model: 'gpt-image-1', prompt, n: 1, size: '1024x1024', quality: 'low' })
    expect(Buffer.from(answer.data![0].b64_json!, 'base64')).toEqual(fakeImage(prompt, 0))
    const cost = costOf('openai/gpt-image-1', prompt, 1, 'low')
    expect(decimalText(before - (await credits()))).toBe(cost.eur)
    const record = await recordOf(response.headers.get('x-generation-id'))
    expect(record).toMatchObject({ provider: 'beta', status: 'success', cost_eur: cost.eur })
    expect(record!.attempts).toBe(count(alpha) - alphaBefore + 1)
    expect(
      (await t.gateway.admin.usage(customer.user.org_id)).filter((r) => r.endpoint === 'images' && r.provider === 'openai' && r.model === 'shared/image'),
    ).toEqual([])
  })

  it('serves with a customer’s own key (BYOK) first, charging no upstream cost to credits', async () => {
    const own = await createCustomer(t.gateway, { credits: '1' })
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...own.auth, ...json },
      body: JSON.stringify({ key: 'sk-customer-beta-9999', provider: 'beta' }),
    })
    expect(created.status).toBe(201)
    const before = await credits(own.user.org_id)
    const prompt = 'My own key'
    const res = await generate({ model: 'shared/image', prompt, quality: 'low', size: '1024x1024' }, own.auth)
    expect(res.status).toBe(200)
    expect(beta.requests.at(-1)!.headers.authorization).toBe('Bearer sk-customer-beta-9999')
    const cost = costOf('openai/gpt-image-1', prompt, 1, 'low')
    expect((await res.json()).usage).toMatchObject({ is_byok: true, cost: 0, cost_eur: 0, cost_details: { upstream_inference_cost: Number(cost.usd) } })
    expect(await credits(own.user.org_id)).toBe(before)
    expect(await recordOf(res.headers.get('x-generation-id'), own.user.org_id)).toMatchObject({
      provider: 'beta',
      is_byok: true,
      cost_eur: '0',
      upstream_inference_cost: cost.usd,
      byok_counted: true,
      byok_free: true,
    })
  })

  it('402 when the credits cannot cover n images of the dearest quality and size, with nothing sent upstream', async () => {
    const poor = await createCustomer(t.gateway, { credits: '0.4' })
    const sent = count(alpha)
    const client = openaiClient(t.url, poor.key)
    const prompt = 'x'.repeat(100)
    const refused = await client.images.generate({ model: 'openai/gpt-image-1', prompt, n: 2 }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.APIError)
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402)
    // Held: 100 bytes as text input tokens and 2 × 6,240 image tokens (high, 1024x1536) = $0.4997 = 0.429742 EUR.
    expect((refused as any).error).toMatchObject({ type: 'insufficient_credits', metadata: { required: '0.429742' } })
    expect(count(alpha)).toBe(sent)
    expect(units((await t.gateway.admin.getCredits(poor.user.org_id)).balance)).toBe(units('0.4'))
    // One low-quality square image is covered.
    const answer = await client.images.generate({ model: 'openai/gpt-image-1', prompt, n: 1, quality: 'low', size: '1024x1024' })
    expect(answer.data).toHaveLength(1)
    const cost = costOf('openai/gpt-image-1', prompt, 1, 'low')
    expect(units((await t.gateway.admin.getCredits(poor.user.org_id)).balance)).toBe(units('0.4') - cost.eurUnits)
  })
})

describe('POST /images/generations: estimates, failures and bad input', () => {
  it('an answer without usage is billed from the tokens its quality and size take, marked estimated', async () => {
    const before = await credits()
    const prompt = 'abcdefghijklmnopqrstuvwxyz'
    const res = await generate({ model: 'test/no-usage', prompt, quality: 'low', size: '1024x1536' })
    expect(res.status).toBe(200)
    const body = await res.json()
    // 26 bytes / 4 → 7 text tokens, 408 image tokens: $0.000035 + $0.01632.
    const usd = 7n * 5_000_000n + 408n * 40_000_000n
    const eur = decimalText(roundUnits(usd * 86n, 2))
    expect(body.usage).toMatchObject({ input_tokens: 7, output_tokens: 408, estimated: true, cost_eur: Number(eur) })
    expect(decimalText(before - (await credits()))).toBe(eur)
    expect(await recordOf(res.headers.get('x-generation-id'))).toMatchObject({ usage_estimated: true, prompt_tokens: 7, completion_tokens: 408 })
  })

  it('an answer with URLs instead of base64 is a 502 and nothing is charged', async () => {
    const before = await credits()
    const res = await generate({ model: 'test/url', prompt: 'anything' })
    expect(res.status).toBe(502)
    expect((await res.json()).error.message).toMatch(/^Beta answered something that is not valid|^Beta answered something that is not a valid/)
    expect(await credits()).toBe(before)
  })

  const bad: [string, Record<string, unknown>, string, RegExp][] = [
    ['no prompt', { model: 'openai/gpt-image-1' }, 'prompt', /prompt/],
    ['an empty prompt', { model: 'openai/gpt-image-1', prompt: '' }, 'prompt', /must not be empty/],
    ['n of 0', { model: 'openai/gpt-image-1', prompt: 'a', n: 0 }, 'n', /n/],
    ['n of 11', { model: 'openai/gpt-image-1', prompt: 'a', n: 11 }, 'n', /n/],
    ['an unknown size', { model: 'openai/gpt-image-1', prompt: 'a', size: '512x512' }, 'size', /size/],
    ['an unknown quality', { model: 'openai/gpt-image-1', prompt: 'a', quality: 'hd' }, 'quality', /quality/],
    ['response_format url', { model: 'openai/gpt-image-1', prompt: 'a', response_format: 'url' }, 'response_format', /b64_json/],
  ]
  for (const [what, body, param, message] of bad) {
    it(`400 for ${what}, nothing sent upstream`, async () => {
      const sent = count(alpha) + count(beta)
      const res = await generate(body)
      const answer = await res.json()
      expect([res.status, answer.error.param]).toEqual([400, param])
      expect(answer.error.message).toMatch(message)
      expect(count(alpha) + count(beta)).toBe(sent)
    })
  }

  it('404 for a model the catalogue does not know', async () => {
    const res = await generate({ model: 'nobody/nothing', prompt: 'a' })
    expect(res.status).toBe(404)
    expect((await res.json()).error.message).toMatch(/nobody\/nothing/)
  })

  it('400 naming what a model serves when it does not generate images', async () => {
    const res = await generate({ model: 'openai/gpt-4o-mini', prompt: 'a' })
    expect(res.status).toBe(400)
    const answer = await res.json()
    expect(answer.error).toMatchObject({ param: 'model' })
    expect(answer.error.message).toMatch(/does not serve \/images\/generations/)
  })
})
