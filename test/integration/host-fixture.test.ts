/**
 * Adding an OpenAI-compatible host is one file (docs/providers.md#adding-a-host): a host declared in a fixture file
 * (test/fixtures/hosts/acme.ts), not in the package's host list, is served by `hostedProvider(definition)`: `/providers`
 * shows its facts and data policy, `/models` its models with their prices, and a chat completion reaches its upstream
 * (the fake OpenAI server) with the host's model id and is billed at the model's price.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hostedProvider } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import acme from '../fixtures/hosts/acme'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const KEY = 'sk-acme-fixture'

let fake: FakeOpenAI
let t: TestGateway
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY })
  t = await startGateway({ providers: [hostedProvider(acme, { apiKey: KEY, baseURL: fake.url })] })
})
afterAll(async () => {
  await t.close()
  await fake.close()
})

describe('a host declared in one fixture file', () => {
  it('is listed by /providers with its facts and data policy', async () => {
    const { data } = await (await t.request('/api/v1/providers')).json()
    expect(data).toEqual([
      {
        id: 'acme-cloud',
        name: 'Acme Cloud',
        slug: 'acme-cloud',
        description: 'Open-weights models in OpenAI’s chat format.',
        model_count: 1,
        privacy_policy_url: 'https://acme-cloud.example/privacy',
        terms_of_service_url: 'https://acme-cloud.example/terms',
        status_page_url: null,
        region: null,
        enabled: true,
        headquarters: 'NL',
        icon_url: null,
        data_policy: acme.dataPolicy,
        byok: { supported: true },
      },
    ])
  })

  it('lists its models in /models with their prices', async () => {
    const { data } = await (await t.request('/api/v1/models')).json()
    expect(data.map((m: { id: string }) => m.id)).toEqual(['acme/acme-chat'])
    expect(data[0]).toMatchObject({ name: 'Acme: Chat', context_length: 32_768, pricing: { prompt: '0.000002', completion: '0.000008' } })
  })

  it('routes a chat completion to its upstream with its model id, drops what it rejects, and bills the model’s price', async () => {
    const { user, auth } = await createCustomer(t.gateway, { credits: '5' })
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/acme-chat', messages: [{ role: 'user', content: 'hello acme' }], top_k: 5, provider: { zdr: true } }),
    })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect([body.provider, body.choices[0].message.content]).toEqual(['Acme Cloud', 'Hello from acme-chat-v2: hello acme'])
    const sent = fake.requests.at(-1)!
    expect([sent.path, sent.headers.authorization, sent.body.model, sent.body.top_k]).toEqual([
      '/v1/chat/completions',
      `Bearer ${KEY}`,
      'acme-chat-v2',
      undefined,
    ])
    const { prompt_tokens, completion_tokens } = body.usage
    const expected = prompt_tokens * 0.000002 + completion_tokens * 0.000008
    expect(body.usage.cost).toBeCloseTo(expected, 12)
    const [record] = await t.gateway.admin.usage(user.org_id)
    expect([record.provider, record.model, record.prompt_tokens, record.completion_tokens]).toEqual([
      'acme-cloud',
      'acme/acme-chat',
      prompt_tokens,
      completion_tokens,
    ])
    expect(Number(record.cost)).toBeCloseTo(expected, 12)
  })
})
