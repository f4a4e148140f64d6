import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// OpenRouter's catalogue routes beside the seed's /models (docs/catalogue.md, docs/routing.md):
// /models/{author}/{slug}/endpoints, /models/user, /models/{id} (OpenAI's model object), /model/{author}/{slug},
// and /models' total_count, links and modality filters.

const json = { 'content-type': 'application/json' }
const CREATED = 1767225600 // 2026-01-01T00:00:00Z

const chatModel = (pricing: ProviderModel['pricing'], extra: Partial<ProviderModel> = {}): ProviderModel => ({
  id: 'acme/chat',
  upstreamId: 'gpt-test',
  name: 'Acme Chat',
  description: 'A chat model.',
  created: CREATED,
  contextLength: 8000,
  maxCompletionTokens: 1000,
  inputModalities: ['text', 'image'],
  pricing,
  ...extra,
})

describe('catalogue routes in OpenRouter’s and OpenAI’s shapes', () => {
  let alpha: FakeOpenAI
  let beta: FakeOpenAI
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>

  beforeAll(async () => {
    alpha = await startFakeOpenAI({ apiKey: 'sk-alpha' })
    beta = await startFakeOpenAI({ apiKey: 'sk-beta' })
    t = await startGateway({
      providers: [
        openaiCompatible({
          slug: 'alpha',
          name: 'Alpha',
          baseURL: alpha.url,
          apiKey: 'sk-alpha',
          models: [
            chatModel(
              { prompt: '0.000001', completion: '0.000002', input_cache_read: '0.0000005', currency: 'USD' },
              { quantization: 'fp8', supportedParameters: ['tools', 'tool_choice', 'temperature'] },
            ),
            {
              id: 'acme/painter',
              upstreamId: 'gpt-test',
              name: 'Acme Painter',
              created: CREATED - 100,
              outputModalities: ['image'],
              pricing: { prompt: '0.000003', completion: '0.00004', currency: 'USD' },
            },
            {
              id: 'acme/old',
              upstreamId: 'gpt-test',
              created: CREATED - 200,
              expirationDate: '2020-01-01',
              replacement: 'acme/chat',
              pricing: { prompt: '0.000001', completion: '0.000001', currency: 'USD' },
            },
          ],
        }),
        openaiCompatible({
          slug: 'beta',
          name: 'Beta',
          baseURL: beta.url,
          apiKey: 'sk-beta',
          models: [chatModel({ prompt: '0.000002', completion: '0.000003', currency: 'USD' }, { contextLength: 4000, supportedParameters: ['temperature'] })],
        }),
        // Customers' keys only: no service key.
        openaiCompatible({
          slug: 'gamma',
          name: 'Gamma',
          baseURL: beta.url,
          byokSupported: true,
          models: [
            { id: 'gamma/only', upstreamId: 'gpt-test', created: CREATED - 300, pricing: { prompt: '0.000001', completion: '0.000001', currency: 'USD' } },
          ],
        }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '5' })
  })
  afterAll(async () => {
    await t.close()
    await alpha.close()
    await beta.close()
  })

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await t.request(`/api/v1${path}`, { headers })
    return { status: res.status, body: await res.json() }
  }
  const ids = (body: { data: { id: string }[] }) => body.data.map((m) => m.id)

  it('GET /models adds total_count and links beside object and data, and pages with offset and limit', async () => {
    const all = await get('/models')
    expect(all.status).toBe(200)
    expect(Object.keys(all.body).sort()).toEqual(['data', 'links', 'object', 'total_count'])
    expect(all.body).toMatchObject({ object: 'list', total_count: 3, links: { next: null } })
    // Newest first; the retired model is not listed.
    expect(ids(all.body)).toEqual(['acme/chat', 'acme/painter', 'gamma/only'])

    const first = await get('/models?offset=0&limit=2')
    expect(ids(first.body)).toEqual(['acme/chat', 'acme/painter'])
    expect(first.body.total_count).toBe(3)
    expect(first.body.links.next).toBe(`${t.url}/api/v1/models?offset=2&limit=2`)
    const second = await get(first.body.links.next.slice(t.url.length + '/api/v1'.length))
    expect(second.body).toMatchObject({ total_count: 3, links: { next: null } })
    expect(ids(second.body)).toEqual(['gamma/only'])
    // Filters apply before the page; total_count counts what they keep.
    const filtered = await get('/models?provider=alpha&limit=1')
    expect(filtered.body).toMatchObject({ total_count: 2, links: { next: `${t.url}/api/v1/models?provider=alpha&limit=1&offset=1` } })
    expect((await get('/models?limit=0')).status).toBe(400)
    expect((await get('/models?limit=1001')).status).toBe(400)
    expect((await get('/models?offset=-1')).status).toBe(400)
  })

  it('filters /models and /models/count by input_modalities and output_modalities (comma lists, any of them; all keeps every model)', async () => {
    expect(ids((await get('/models?input_modalities=image')).body)).toEqual(['acme/chat'])
    expect(ids((await get('/models?output_modalities=image')).body)).toEqual(['acme/painter'])
    expect(ids((await get('/models?output_modalities=text')).body)).toEqual(['acme/chat', 'gamma/only'])
    expect(ids((await get('/models?output_modalities=text,image')).body)).toEqual(['acme/chat', 'acme/painter', 'gamma/only'])
    expect(ids((await get('/models?output_modalities=all')).body)).toEqual(['acme/chat', 'acme/painter', 'gamma/only'])
    expect(ids((await get('/models?input_modalities=audio,image&output_modalities=TEXT')).body)).toEqual(['acme/chat'])
    expect((await get('/models/count')).body).toEqual({ data: { count: 3 } })
    expect((await get('/models/count?output_modalities=image')).body).toEqual({ data: { count: 1 } })
    expect((await get('/models/count?input_modalities=image&provider=beta')).body).toEqual({ data: { count: 1 } })
  })

  it('GET /models/{author}/{slug}/endpoints lists one endpoint per provider in OpenRouter’s shape', async () => {
    const { status, body } = await get('/models/acme/chat/endpoints')
    expect(status).toBe(200)
    expect(Object.keys(body.data).sort()).toEqual(['architecture', 'created', 'description', 'endpoints', 'id', 'name'])
    expect(body.data).toMatchObject({
      id: 'acme/chat',
      name: 'Acme Chat',
      created: CREATED,
      description: 'A chat model.',
      architecture: { modality: 'text+image->text', input_modalities: ['text', 'image'], output_modalities: ['text'], tokenizer: 'Other', instruct_type: null },
    })
    expect(body.data.endpoints).toEqual([
      {
        name: 'Alpha | acme/chat',
        model_id: 'acme/chat',
        model_name: 'Acme Chat',
        context_length: 8000,
        pricing: { prompt: '0.000001', completion: '0.000002', input_cache_read: '0.0000005', currency: 'USD', discount: 0 },
        provider_name: 'Alpha',
        tag: 'alpha',
        quantization: 'fp8',
        max_completion_tokens: 1000,
        max_prompt_tokens: null,
        supported_parameters: ['tools', 'tool_choice', 'temperature'],
        status: 0,
        uptime_last_30m: null,
        uptime_last_5m: null,
        uptime_last_1d: null,
        supports_implicit_caching: true,
        supports_tool_choice: { auto: true, none: true, required: true, function: true },
        latency_last_30m: null,
        throughput_last_30m: null,
      },
      {
        name: 'Beta | acme/chat',
        model_id: 'acme/chat',
        model_name: 'Acme Chat',
        context_length: 4000,
        pricing: { prompt: '0.000002', completion: '0.000003', currency: 'USD', discount: 0 },
        provider_name: 'Beta',
        tag: 'beta',
        quantization: null,
        max_completion_tokens: 1000,
        max_prompt_tokens: null,
        supported_parameters: ['temperature'],
        status: 0,
        uptime_last_30m: null,
        uptime_last_5m: null,
        uptime_last_1d: null,
        supports_implicit_caching: false,
        supports_tool_choice: { auto: false, none: false, required: false, function: false },
        latency_last_30m: null,
        throughput_last_30m: null,
      },
    ])
  })

  it('shows the router’s health in each endpoint: uptime, latency and throughput percentiles, and the breaker as status', async () => {
    const health = t.gateway.context.health
    for (const [latencyMs, tokensPerSecond] of [
      [400, 50],
      [100, 80],
      [300, 60],
      [200, 70],
    ]) {
      health.record({ provider: 'alpha', model: 'acme/chat' }, 'org-1', { ok: true, latencyMs, tokensPerSecond })
    }
    health.record({ provider: 'alpha', model: 'acme/chat' }, 'org-1', { ok: false, latencyMs: 5 })
    // Beta fails for two orgs: its breaker opens for everyone (threshold 3).
    for (const org of ['org-1', 'org-2', 'org-1']) health.record({ provider: 'beta', model: 'acme/chat' }, org, { ok: false, latencyMs: 10 })
    const [a, b] = (await get('/models/acme/chat/endpoints')).body.data.endpoints
    expect(a).toMatchObject({
      status: -1,
      uptime_last_30m: 80,
      latency_last_30m: { p50: 200, p75: 300, p90: 400, p99: 400 },
      throughput_last_30m: { p50: 60, p75: 70, p90: 80, p99: 80 },
    })
    expect(b).toMatchObject({ status: -3, uptime_last_30m: 0, latency_last_30m: null, throughput_last_30m: null })
    health.record({ provider: 'beta', model: 'acme/chat' }, 'org-3', { ok: true, latencyMs: 50 })
    expect((await get('/models/acme/chat/endpoints')).body.data.endpoints[1]).toMatchObject({
      status: 0,
      uptime_last_30m: 25,
      latency_last_30m: { p50: 50, p75: 50, p90: 50, p99: 50 },
    })
  })

  it('answers 404 for an unknown or retired model on every model route', async () => {
    for (const path of ['/models/acme/nothing/endpoints', '/models/acme/nothing', '/models/acme%2Fnothing', '/model/acme/nothing']) {
      const { status, body } = await get(path)
      expect([path, status, body.error.type]).toEqual([path, 404, 'not_found'])
      expect(body.error.message).toBe('Model acme/nothing is not available on this gateway (see GET /api/v1/models)')
    }
    for (const path of ['/models/acme/old/endpoints', '/models/acme/old', '/models/acme%2Fold', '/model/acme/old']) {
      const { status, body } = await get(path)
      expect([path, status]).toEqual([path, 404])
      expect(body.error).toMatchObject({
        message: 'Model acme/old was retired by its provider on 2020-01-01; use acme/chat instead',
        metadata: { retired_on: '2020-01-01', replacement: 'acme/chat' },
      })
    }
  })

  it('GET /models/{id} answers OpenAI’s model object with the catalogue’s fields beside it, by path or by encoded id', async () => {
    const listed = (await get('/models')).body.data.find((m: { id: string }) => m.id === 'acme/chat')
    const byPath = await get('/models/acme/chat')
    expect(byPath.status).toBe(200)
    expect(byPath.body).toMatchObject({ id: 'acme/chat', object: 'model', created: CREATED, owned_by: 'acme' })
    expect(byPath.body).toEqual({ ...listed, owned_by: 'acme' })
    const byId = await get('/models/acme%2Fchat')
    expect(byId).toEqual(byPath)
    // OpenRouter's getModel: the same model under data.
    expect((await get('/model/acme/chat')).body).toEqual({ data: listed })
  })

  it('keeps /models/count, /models/user and the endpoints list apart from the model routes', async () => {
    expect((await get('/models/count')).body).toEqual({ data: { count: 3 } })
    const anonymous = await get('/models/user')
    expect([anonymous.status, anonymous.body.error.type]).toEqual([401, 'unauthorized'])
    expect((await get('/models/user', customer.auth)).status).toBe(200)
    expect(Object.keys((await get('/models/acme/chat/endpoints')).body.data)).toContain('endpoints')
    expect((await get('/models/acme/chat')).body.object).toBe('model')
    // Three segments not ending in /endpoints are no route.
    expect((await get('/models/acme/chat/other')).status).toBe(404)
    expect((await get('/models/acme/chat/other')).body.error.message).toMatch(/^No route for GET/)
    const post = await t.request('/api/v1/models/acme/chat', { method: 'POST', headers: json, body: '{}' })
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
    expect((await t.request('/api/v1/models/count', { method: 'DELETE' })).status).toBe(405)
  })

  it('GET /models/user lists what the calling key can be routed to, in /models’ shape', async () => {
    const before = await get('/models/user', customer.auth)
    expect(before.body).toMatchObject({ object: 'list', total_count: 2, links: { next: null } })
    // gamma/only needs the customer's own key for Gamma.
    expect(ids(before.body)).toEqual(['acme/chat', 'acme/painter'])
    expect(ids((await get('/models/user?output_modalities=image', customer.auth)).body)).toEqual(['acme/painter'])
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ key: 'sk-cust-gamma-1234', provider: 'gamma' }),
    })
    expect(created.status).toBe(201)
    expect(ids((await get('/models/user', customer.auth)).body)).toEqual(['acme/chat', 'acme/painter', 'gamma/only'])
    // Another org's key is not helped by that credential.
    const other = await createCustomer(t.gateway, { credits: '1' })
    expect(ids((await get('/models/user', other.auth)).body)).toEqual(['acme/chat', 'acme/painter'])
    const paged = await get('/models/user?limit=1', customer.auth)
    expect(paged.body).toMatchObject({ total_count: 3, links: { next: `${t.url}/api/v1/models/user?limit=1&offset=1` } })
  })

  it('works with the openai SDK: models.retrieve and models.list', async () => {
    const client = openaiClient(t.url, customer.key)
    const model = await client.models.retrieve('acme/chat')
    expect(model).toMatchObject({ id: 'acme/chat', object: 'model', created: CREATED, owned_by: 'acme', name: 'Acme Chat' })
    await expect(client.models.retrieve('acme/nothing')).rejects.toMatchObject({ status: 404 })
    const listed: string[] = []
    for await (const m of client.models.list()) listed.push(m.id)
    expect(listed).toEqual(['acme/chat', 'acme/painter', 'gamma/only'])
  })
})
