import { XMLParser } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo, hostedProvider, knownModels, localProvider, openai } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startGateway, type TestGateway } from '../helpers/server'

describe('the catalogue: /models, /models/count, /providers', () => {
  let t: TestGateway
  let local: FakeOpenAI
  beforeAll(async () => {
    local = await startFakeOpenAI({ models: ['llama3.2:3b', 'qwen2.5:7b'] })
    t = await startGateway({
      providers: [
        openai({ apiKey: 'sk-never-called', baseURL: 'http://127.0.0.1:9/v1' }),
        hostedProvider('fireworks', { baseURL: 'http://127.0.0.1:9/v1' }),
        hostedProvider('together', { baseURL: 'http://127.0.0.1:9/v1' }),
        localProvider({ slug: 'ollama', name: 'Ollama', baseURL: local.url }),
        demo(),
      ],
      modelOverrides: { 'openai/gpt-6-luna': { pricing: { prompt: '0.0000002', completion: '0.0000008', currency: 'USD' } } },
    })
  })
  afterAll(async () => {
    await t.close()
    await local.close()
  })

  const get = async (path: string) => {
    const res = await t.request(path)
    expect(res.status, path).toBe(200)
    return res
  }
  const models = async (query = '') => (await (await get(`/api/v1/models${query}`)).json()).data as any[]

  it('lists every model of every provider, discovered ones included, newest first', async () => {
    const all = await models()
    // Models whose provider retired them are no longer listed (Groq's Llama offers, OpenAI's retired models).
    const served = (m: { expirationDate?: string }) => !m.expirationDate || Date.parse(`${m.expirationDate}T00:00:00Z`) > Date.now()
    const expected = new Set([...knownModels.openai, ...knownModels.fireworks, ...knownModels.together].filter(served).map((m) => m.id))
    expected.add('ollama/llama3.2:3b').add('ollama/qwen2.5:7b').add('demo/echo')
    expect(new Set(all.map((m) => m.id))).toEqual(expected)
    const created = all.map((m) => m.created)
    expect(created).toEqual([...created].sort((a, b) => b - a))
    expect(await (await get('/api/v1/models/count')).json()).toEqual({ data: { count: expected.size } })
    expect(local.requests.filter((r) => r.path === '/v1/models')).toHaveLength(1)
  })

  it('shows each model with every field of docs/catalogue.md', async () => {
    const all = await models()
    const mini = all.find((m) => m.id === 'openai/gpt-6-luna')
    expect(Object.keys(mini).sort()).toEqual([
      'architecture',
      'author',
      'author_info',
      'canonical_slug',
      'context_length',
      'created',
      'default_parameters',
      'description',
      'expiration_date',
      'hugging_face_id',
      'id',
      'knowledge_cutoff',
      'last_updated',
      'links',
      'name',
      'object',
      'per_request_limits',
      'pricing',
      'providers',
      'reasoning',
      'release_date',
      'slug',
      'supported_api_endpoints',
      'supported_parameters',
      'supported_voices',
      'tags',
      'top_provider',
    ])
    expect(mini).toMatchObject({
      object: 'model',
      author: 'openai',
      slug: 'gpt-6-luna',
      context_length: 1050000,
      pricing: { prompt: '0.0000002', completion: '0.0000008', input_cache_read: '0.0000002', request: '0', currency: 'USD', discount: 0 },
      architecture: { modality: 'text+image->text', input_modalities: ['text', 'image'], output_modalities: ['text'] },
      top_provider: { context_length: 1050000, max_completion_tokens: 128000, is_moderated: false },
      providers: [{ name: 'OpenAI', slug: 'openai' }],
      supported_api_endpoints: ['/api/v1/chat/completions'],
      author_info: { slug: 'openai', name: 'OpenAI', website_url: 'https://openai.com' },
    })
    const llama = all.find((m) => m.id === 'meta-llama/llama-3.3-70b-instruct')
    expect(llama.providers).toEqual([
      { name: 'Fireworks', slug: 'fireworks' },
      { name: 'Together', slug: 'together' },
    ])
    expect(llama.pricing.prompt).toBe('0.00000088')
    expect(llama.supported_parameters).toEqual(expect.arrayContaining(['tools', 'top_k', 'repetition_penalty']))
  })

  it('filters by category, supported parameters and provider, and /models/count agrees with the unfiltered list', async () => {
    const programming = await models('?category=Programming')
    expect(programming.length).toBeGreaterThan(0)
    for (const m of programming) expect(m.tags).toContain('programming')
    const withTopK = await models('?supported_parameters=tools,top_k')
    expect(withTopK.map((m) => m.id)).toEqual(['meta-llama/llama-3.3-70b-instruct'])
    const fireworks = await models('?provider=fireworks')
    expect(fireworks.map((m) => m.id).sort()).toEqual(knownModels.fireworks.map((m) => m.id).sort())
    expect(await models('?provider=nobody')).toEqual([])
    expect(await models('?category=programming&provider=together')).toHaveLength(1)
  })

  it('answers an RSS 2.0 feed of the same filtered list, with chat links when asked', async () => {
    const res = await get('/api/v1/models?use_rss=true&provider=fireworks')
    expect(res.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8')
    const feed = new XMLParser({ ignoreAttributes: false }).parse(await res.text())
    expect(feed.rss['@_version']).toBe('2.0')
    const items = [].concat(feed.rss.channel.item)
    const json = await models('?provider=fireworks')
    expect(items.map((i: any) => i.guid['#text'])).toEqual(json.map((m) => m.id))
    expect(items.map((i: any) => i.title)).toEqual(json.map((m) => m.name))
    expect(new Date((items[0] as any).pubDate).getTime() / 1000).toBe(json[0].created)
    expect((items[0] as any).link).toBe(`${t.url}/api/v1/models`)

    const linked = new XMLParser().parse(await (await get('/api/v1/models?use_rss=1&use_rss_chat_links=true&provider=demo')).text())
    expect(linked.rss.channel.item.link).toBe(`${t.url}/?model=demo%2Fecho`)
    const openaiFeed = new XMLParser().parse(await (await get('/api/v1/models?use_rss=true&provider=openai')).text())
    expect([].concat(openaiFeed.rss.channel.item).map((i: any) => i.link)).toContain('https://platform.openai.com/docs/models/gpt-6-luna')
  })

  it('lists the providers as docs/catalogue.md shows them', async () => {
    const { data } = await (await get('/api/v1/providers')).json()
    expect(data.map((p: any) => p.slug)).toEqual(['openai', 'fireworks', 'together', 'ollama', 'demo'])
    expect(data[0]).toEqual({
      id: 'openai',
      name: 'OpenAI',
      slug: 'openai',
      description: 'OpenAI’s GPT and o-series models.',
      model_count: knownModels.openai.length,
      privacy_policy_url: 'https://openai.com/policies/privacy-policy/',
      terms_of_service_url: 'https://openai.com/policies/row-terms-of-use/',
      status_page_url: 'https://status.openai.com/',
      region: null,
      enabled: true,
      headquarters: 'US',
      icon_url: null,
      byok: { supported: true },
      // The preset's documented default (its host file, src/providers/hosts/openai.ts; docs/routing.md "Provider preferences").
      data_policy: expect.objectContaining({
        training: false,
        retains_prompts: true,
        retention_days: 30,
        source: 'https://platform.openai.com/docs/guides/your-data',
        checked: '2026-11-26',
      }),
    })
    expect(data.find((p: any) => p.slug === 'fireworks').data_policy).toMatchObject({ training: false, retains_prompts: false })
    expect(data.find((p: any) => p.slug === 'together').data_policy).toEqual({})
    expect(data.find((p: any) => p.slug === 'ollama')).toMatchObject({ model_count: 2, byok: { supported: false }, region: 'local' })
  })

  it('refuses a configuration whose prices cannot be converted to EUR', async () => {
    const { createGateway } = await import('../../src/index')
    expect(() =>
      createGateway({ logger: false, providers: [openai({ models: [{ id: 'x/y', pricing: { prompt: '1', completion: '1', currency: 'JPY' } }] })] }),
    ).toThrow(/no exchange rate to EUR for JPY/)
  })
})
