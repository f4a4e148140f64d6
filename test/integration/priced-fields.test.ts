/**
 * Fields that change a provider's price (docs/limits.md): `service_tier` beyond auto/default and
 * `web_search_options` reach the provider only when the catalogue prices them, and are then billed at that price;
 * otherwise 400 naming the field, before anything is sent upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ModelPricing, type ProviderModel } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, readSse, units } from '../helpers/sse'

const plain: ModelPricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const tiered: ModelPricing = { ...plain, web_search: '0.01', service_tiers: { priority: { prompt: '0.0000018', completion: '0.0000036' } } }
const json = { 'content-type': 'application/json' }

/** The exact cost of reported usage at these per-token prices plus a per-request amount, as a decimal string. */
const cost = (usage: { prompt_tokens: number; completion_tokens: number }, prompt: string, completion: string, extra = '0') =>
  decimalText(BigInt(usage.prompt_tokens) * units(prompt) + BigInt(usage.completion_tokens) * units(completion) + units(extra))

describe('fields that change the provider price', () => {
  let fake: FakeOpenAI
  let t: TestGateway
  let auth: Record<string, string>
  let orgId: string

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: ['sk-alpha', 'sk-beta'], slowMs: 0 })
    const model = (id: string, pricing: ModelPricing = plain): ProviderModel => ({ id, upstreamId: 'gpt-test', pricing })
    t = await startGateway({
      exchangeRates: { USD: '1' },
      providers: [
        openaiCompatible({
          slug: 'alpha',
          name: 'Alpha',
          baseURL: fake.url,
          apiKey: 'sk-alpha',
          models: [model('fake/plain'), model('fake/overridden'), model('shared/model')],
        }),
        // Dearer, but the only one that prices the priority tier and web search.
        openaiCompatible({
          slug: 'beta',
          name: 'Beta',
          baseURL: fake.url,
          apiKey: 'sk-beta',
          models: [model('shared/model', { ...tiered, prompt: '0.000003' })],
        }),
      ],
      // The catalogue prices the priority tier and web search of this model through the host's override.
      modelOverrides: { 'fake/overridden': { pricing: tiered } },
    })
    const customer = await createCustomer(t.gateway, { credits: '10' })
    auth = customer.auth
    orgId = customer.user.org_id
  })
  afterAll(async () => {
    await t.close()
    await fake.close()
  })

  const ask = (model: string, extra: Record<string, unknown> = {}) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...auth, ...json },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], ...extra }),
    })

  const refused = async (res: Response, param: string) => {
    const body = await res.json()
    expect(res.status).toBe(400)
    expect(body.error).toMatchObject({ code: 400, type: 'invalid_request', param })
    expect(body.error.message).toMatch(new RegExp(`^${param}: `))
    return body
  }

  it('refuses service_tier priority and web_search_options on a model the catalogue does not price them for, sending nothing upstream', async () => {
    const sent = fake.requests.length
    const tier = await refused(await ask('fake/plain', { service_tier: 'priority' }), 'service_tier')
    expect(tier.error.message).toMatch(/priority.*fake\/plain/)
    await refused(await ask('fake/plain', { service_tier: 'flex' }), 'service_tier')
    await refused(await ask('fake/plain', { web_search_options: {} }), 'web_search_options')
    await refused(await ask('fake/plain', { web_search_options: { search_context_size: 'high' }, stream: true }), 'web_search_options')
    // A priced model prices only the tiers it lists.
    await refused(await ask('fake/overridden', { service_tier: 'flex' }), 'service_tier')
    // Wrong types are refused by the schema.
    await refused(await ask('fake/plain', { service_tier: 5 }), 'service_tier')
    await refused(await ask('fake/plain', { web_search_options: 'on' }), 'web_search_options')
    expect(fake.requests.length).toBe(sent)
  })

  it('lets the plain tiers through at the plain price', async () => {
    for (const serviceTier of ['auto', 'default', null]) {
      const res = await ask('fake/plain', { service_tier: serviceTier })
      expect(res.status).toBe(200)
      const body = await res.json()
      expect(fake.requests.at(-1)!.body.service_tier).toBe(serviceTier)
      expect(String(body.usage.cost)).toBe(cost(body.usage, plain.prompt, plain.completion))
    }
  })

  it('forwards a priced tier and bills its prices exactly', async () => {
    const before = units((await t.gateway.admin.getCredits(orgId)).balance)
    const res = await ask('fake/overridden', { service_tier: 'priority' })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'gpt-test', service_tier: 'priority' })
    const expected = cost(body.usage, '0.0000018', '0.0000036')
    expect(String(body.usage.cost)).toBe(expected)
    expect(String(body.usage.cost_eur)).toBe(expected)
    expect(decimalText(before - units((await t.gateway.admin.getCredits(orgId)).balance))).toBe(expected)
    const record = (await t.gateway.context.usage.list(orgId)).find((r) => r.id === res.headers.get('x-generation-id'))
    expect(record).toMatchObject({ model: 'fake/overridden', cost: expected })
  })

  it('forwards web_search_options on a model that prices web search, billed once per request', async () => {
    const res = await ask('fake/overridden', { web_search_options: { search_context_size: 'low' } })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(fake.requests.at(-1)!.body.web_search_options).toEqual({ search_context_size: 'low' })
    expect(String(body.usage.cost)).toBe(cost(body.usage, plain.prompt, plain.completion, '0.01'))

    const both = await ask('fake/overridden', { web_search_options: {}, service_tier: 'priority', stream: true })
    expect(both.status).toBe(200)
    const { events } = await readSse(both)
    const usage = events.at(-2).usage
    expect(fake.requests.at(-1)!.body).toMatchObject({ service_tier: 'priority', web_search_options: {} })
    expect(String(usage.cost)).toBe(cost(usage, '0.0000018', '0.0000036', '0.01'))
  })

  it('drops the attempts that cannot price the field when others can', async () => {
    // shared/model: alpha is cheaper and would serve first, but only beta prices priority and web search.
    const plainRes = await ask('shared/model')
    expect((await plainRes.json()).provider).toBe('Alpha')
    const res = await ask('shared/model', { service_tier: 'priority', web_search_options: {} })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.provider).toBe('Beta')
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk-beta')
    expect(String(body.usage.cost)).toBe(cost(body.usage, '0.0000018', '0.0000036', '0.01'))
    // A fallback model that prices it serves when the first one does not.
    const fallback = await ask('fake/plain', { models: ['fake/overridden'], web_search_options: {} })
    expect(fallback.status).toBe(200)
    expect((await fallback.json()).model).toBe('fake/overridden')
  })
})
