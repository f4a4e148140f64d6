import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hostedProvider, openai, openaiCompatible, type ProviderModel } from '../../src/index'
import { chatRouting } from '../../src/chat/routing-request'
import { planAttempts } from '../../src/routing/plan'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// provider.zdr, data_collection, quantizations, preferred_min_throughput, preferred_max_latency and sort { by,
// partition } (docs/routing.md "Provider preferences"), with concrete routing outcomes on fake upstreams.

const json = { 'content-type': 'application/json' }
const usd = (prompt: string) => ({ prompt, completion: prompt, currency: 'USD' })

// Four providers of pp/model, cheapest first: trains < silent < logs < zdrco.
const PROVIDERS = {
  trains: { name: 'Trains', price: '0.000001', dataPolicy: { training: true, retains_prompts: true }, quantization: undefined },
  silent: { name: 'Silent', price: '0.000002', dataPolicy: undefined, quantization: 'int4' },
  logs: { name: 'Logs', price: '0.000003', dataPolicy: { training: false, retains_prompts: true, retention_days: 30 }, quantization: 'bf16' },
  zdrco: { name: 'ZDR Co', price: '0.000004', dataPolicy: { training: false, retains_prompts: false }, quantization: 'fp8' },
} as const
type Slug = keyof typeof PROVIDERS

describe('provider preferences', () => {
  const fakes = {} as Record<Slug, FakeOpenAI>
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>

  beforeAll(async () => {
    for (const slug of Object.keys(PROVIDERS) as Slug[]) fakes[slug] = await startFakeOpenAI()
    const offer = (slug: Slug, id: string, price: string = PROVIDERS[slug].price): ProviderModel => ({
      id,
      upstreamId: 'gpt-test',
      pricing: usd(price),
      ...(PROVIDERS[slug].quantization ? { quantization: PROVIDERS[slug].quantization } : {}),
    })
    t = await startGateway({
      health: { failureThreshold: 1_000 },
      providers: (Object.keys(PROVIDERS) as Slug[]).map((slug) =>
        openaiCompatible({
          slug,
          name: PROVIDERS[slug].name,
          baseURL: fakes[slug].url,
          ...(PROVIDERS[slug].dataPolicy ? { dataPolicy: PROVIDERS[slug].dataPolicy } : {}),
          models: [
            offer(slug, 'pp/model'),
            offer(slug, 'pp/timed'),
            ...(slug === 'trains' ? [offer(slug, 'pp/slow')] : []),
            ...(slug === 'silent' ? [offer(slug, 'pp/fast', '0.000009')] : []),
            ...(slug === 'logs' ? [offer(slug, 'pp/cheap', '0.0000005')] : []),
          ],
        }),
      ),
    })
    customer = await createCustomer(t.gateway, { credits: '5' })
  })
  afterAll(async () => {
    await t.close()
    await Promise.all(Object.values(fakes).map((f) => f.close()))
  })

  const chat = async (body: Record<string, unknown>) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'pp/model', messages: [{ role: 'user', content: 'hi' }], ...body }),
    })
    return { status: res.status, body: await res.json() }
  }
  const servedBy = async (body: Record<string, unknown>) => {
    const { status, body: answer } = await chat(body)
    expect(status, JSON.stringify(answer)).toBe(200)
    return `${answer.provider} ${answer.model}`
  }
  const plan = async (provider: unknown, extra: Record<string, unknown> = {}) => {
    const attempts = await planAttempts(
      t.gateway.context,
      chatRouting({ model: 'pp/model', messages: [{ role: 'user', content: 'hi' }], provider, ...extra } as never),
    )
    return attempts.map((a) => (a.entry.id === 'pp/model' ? a.offer.provider.slug : `${a.offer.provider.slug}:${a.entry.id}`))
  }
  const upstreamCalls = () => Object.values(fakes).reduce((n, f) => n + f.requests.length, 0)

  it('routes by price when no preference is given', async () => {
    expect(await plan({})).toEqual(['trains', 'silent', 'logs', 'zdrco'])
    expect(await servedBy({})).toBe('Trains pp/model')
  })

  it('zdr: true keeps only providers whose data policy retains nothing', async () => {
    expect(await plan({ zdr: true })).toEqual(['zdrco'])
    expect(await servedBy({ provider: { zdr: true } })).toBe('ZDR Co pp/model')
    expect(await plan({ zdr: false })).toEqual(['trains', 'silent', 'logs', 'zdrco'])
  })

  it('data_collection "deny" keeps only providers whose policy says they do not train; one without a policy counts as training', async () => {
    expect(await plan({ data_collection: 'deny' })).toEqual(['logs', 'zdrco'])
    expect(await servedBy({ provider: { data_collection: 'deny' } })).toBe('Logs pp/model')
    expect(await plan({ data_collection: 'allow' })).toEqual(['trains', 'silent', 'logs', 'zdrco'])
  })

  it('quantizations keeps the offers served at one of them; an undeclared one is "unknown"', async () => {
    expect(await plan({ quantizations: ['bf16'] })).toEqual(['logs'])
    expect(await plan({ quantizations: ['FP8', 'bf16'] })).toEqual(['logs', 'zdrco'])
    expect(await plan({ quantizations: ['unknown', 'int4'] })).toEqual(['trains', 'silent'])
    expect(await plan({ quantizations: [] })).toEqual(['trains', 'silent', 'logs', 'zdrco'])
    expect(await servedBy({ provider: { quantizations: ['fp8'] } })).toBe('ZDR Co pp/model')
  })

  it('answers 404 naming which preference excluded which provider when none is left, without calling any', async () => {
    const before = upstreamCalls()
    const { status, body } = await chat({ provider: { zdr: true, quantizations: ['bf16'] } })
    expect(status).toBe(404)
    expect(body.error).toMatchObject({ code: 404, type: 'not_found', param: 'provider' })
    expect(body.error.message).toBe(
      "No provider of pp/model matches the request's provider preferences: " +
        'trains (pp/model): excluded by provider.zdr: its data policy lets it retain prompts; ' +
        'silent (pp/model): excluded by provider.zdr: its data policy does not say whether it retains prompts; ' +
        'logs (pp/model): excluded by provider.zdr: its data policy lets it retain prompts; ' +
        'zdrco (pp/model): excluded by provider.quantizations: it serves fp8, not bf16',
    )
    expect(body.error.metadata.models).toEqual(['pp/model'])
    expect(body.error.metadata.excluded.map((e: { provider: string; preference: string }) => `${e.provider}:${e.preference}`)).toEqual([
      'trains:zdr',
      'silent:zdr',
      'logs:zdr',
      'zdrco:quantizations',
    ])
    expect(upstreamCalls()).toBe(before)
    // Across a fallback model too: every offer of every model is named.
    const both = await chat({ models: ['pp/cheap'], provider: { data_collection: 'deny', only: ['silent'] } })
    expect(both.status).toBe(404)
    expect(both.body.error.metadata.excluded).toEqual([
      { provider: 'trains', model: 'pp/model', preference: 'only', reason: 'not in provider.only' },
      {
        provider: 'silent',
        model: 'pp/model',
        preference: 'data_collection',
        reason: 'excluded by provider.data_collection "deny": its data policy does not say whether it trains on prompts',
      },
      { provider: 'logs', model: 'pp/model', preference: 'only', reason: 'not in provider.only' },
      { provider: 'zdrco', model: 'pp/model', preference: 'only', reason: 'not in provider.only' },
      { provider: 'logs', model: 'pp/cheap', preference: 'only', reason: 'not in provider.only' },
    ])
  })

  it('preferred_max_latency (seconds; a number is the p50) puts slower providers last; one not measured yet is kept', async () => {
    const health = t.gateway.context.health
    const record = (slug: Slug, latencies: number[]) => {
      for (const latencyMs of latencies) health.record({ provider: slug, model: 'pp/timed' }, undefined, { ok: true, latencyMs })
    }
    record('trains', [500, 500, 500, 4000]) // p50 0.5 s, p90 4 s
    record('silent', [100, 100, 100, 100])
    record('zdrco', [3000, 3000, 3000, 3000])
    const timed = { model: 'pp/timed' }
    const slugs = async (provider: unknown) => (await plan(provider, timed)).map((s) => s.replace(':pp/timed', ''))
    expect(await slugs({})).toEqual(['trains', 'silent', 'logs', 'zdrco'])
    // A number is the p50: trains' 0.5 s meets 1 s though its p90 (4 s) does not; zdrco (3 s) goes last.
    expect(await slugs({ preferred_max_latency: 1 })).toEqual(['trains', 'silent', 'logs', 'zdrco'])
    expect(await slugs({ preferred_max_latency: 0.3 })).toEqual(['silent', 'logs', 'trains', 'zdrco'])
    expect(await slugs({ preferred_max_latency: { p90: 1 } })).toEqual(['silent', 'logs', 'trains', 'zdrco'])
    expect(await slugs({ preferred_max_latency: { p50: 0.2, p99: null } })).toEqual(['silent', 'logs', 'trains', 'zdrco'])
    // Deprioritised, never excluded: the order still has every provider.
    expect(await slugs({ preferred_max_latency: 0.01 })).toEqual(['logs', 'trains', 'silent', 'zdrco'])
    expect(await servedBy({ model: 'pp/timed', provider: { preferred_max_latency: { p90: 1 } } })).toBe('Silent pp/timed')
  })

  it('preferred_min_throughput (tokens per second) puts slower providers last, by p50 or by the percentiles given', async () => {
    const health = t.gateway.context.health
    const record = (slug: Slug, rates: number[]) => {
      for (const tokensPerSecond of rates) health.record({ provider: slug, model: 'pp/model' }, undefined, { ok: true, latencyMs: 100, tokensPerSecond })
    }
    record('trains', [10, 10, 10, 10])
    record('silent', [20, 200, 200, 200]) // p50, p75, p90, p99: 200 (nearest rank)
    record('logs', [80, 90, 100, 300]) // p50 90, p75 100, p90 and p99 300
    expect(await plan({ preferred_min_throughput: 50 })).toEqual(['silent', 'logs', 'zdrco', 'trains'])
    expect(await plan({ preferred_min_throughput: { p50: 95 } })).toEqual(['silent', 'zdrco', 'trains', 'logs'])
    expect(await plan({ preferred_min_throughput: { p99: 250, p75: null } })).toEqual(['logs', 'zdrco', 'trains', 'silent'])
    expect(await servedBy({ provider: { preferred_min_throughput: 50 } })).toBe('Silent pp/model')
  })

  it('a fallback model whose provider meets the threshold goes before the primary model’s that misses it', async () => {
    const health = t.gateway.context.health
    for (let i = 0; i < 4; i++) {
      health.record({ provider: 'trains', model: 'pp/slow' }, undefined, { ok: true, latencyMs: 5000 })
      health.record({ provider: 'silent', model: 'pp/fast' }, undefined, { ok: true, latencyMs: 200 })
    }
    const request = { model: 'pp/slow', models: ['pp/fast'] }
    const attempts = async (provider: unknown) =>
      (await planAttempts(t.gateway.context, chatRouting({ ...request, messages: [{ role: 'user', content: 'hi' }], provider } as never))).map(
        (a) => `${a.offer.provider.slug}:${a.entry.id}`,
      )
    expect(await attempts({})).toEqual(['trains:pp/slow', 'silent:pp/fast'])
    expect(await attempts({ preferred_max_latency: 2 })).toEqual(['silent:pp/fast', 'trains:pp/slow'])
    expect(await servedBy({ ...request, provider: { preferred_max_latency: 2 } })).toBe('Silent pp/fast')
  })

  it('sort takes OpenRouter’s object: { by } as the string, partition "none" ranks every model’s offers together', async () => {
    const cheapFirst = ['trains', 'silent', 'logs', 'zdrco']
    expect(await plan({ sort: { by: 'price' } })).toEqual(cheapFirst)
    expect(await plan({ sort: { by: 'price', partition: 'model' } }, { models: ['pp/cheap'] })).toEqual([...cheapFirst, 'logs:pp/cheap'])
    expect(await plan({ sort: { by: 'price', partition: 'none' } }, { models: ['pp/cheap'] })).toEqual(['logs:pp/cheap', ...cheapFirst])
    // partition without by changes nothing.
    expect(await plan({ sort: { partition: 'none' } }, { models: ['pp/cheap'] })).toEqual([...cheapFirst, 'logs:pp/cheap'])
    expect(await servedBy({ models: ['pp/cheap'], provider: { sort: { by: 'price', partition: 'none' } } })).toBe('Logs pp/cheap')
    expect(await servedBy({ models: ['pp/cheap'], provider: { sort: 'price' } })).toBe('Trains pp/model')
  })

  it('accepts null for the provider object and each of its fields, as OpenRouter’s SDK sends them', async () => {
    expect(await servedBy({ provider: null })).toBe('Trains pp/model')
    const nulls = {
      order: null,
      only: null,
      ignore: null,
      allow_fallbacks: null,
      sort: null,
      require_parameters: null,
      data_collection: null,
      zdr: null,
      quantizations: null,
      preferred_min_throughput: null,
      preferred_max_latency: null,
      max_price: null,
    }
    expect(await servedBy({ provider: nulls })).toBe('Trains pp/model')
    expect(
      await servedBy({
        provider: { sort: { by: null, partition: null }, max_price: { prompt: null, completion: '10' }, preferred_max_latency: { p50: null } },
      }),
    ).toBe('Trains pp/model')
  })

  it('refuses malformed preferences with 400 naming the field', async () => {
    for (const [provider, param] of [
      [{ sort: 'fastest' }, 'provider.sort'],
      [{ sort: { by: 'price', partition: 'provider' } }, 'provider.sort'],
      [{ zdr: 'yes' }, 'provider.zdr'],
      [{ data_collection: 'maybe' }, 'provider.data_collection'],
      [{ quantizations: 'fp8' }, 'provider.quantizations'],
      [{ preferred_max_latency: -1 }, 'provider.preferred_max_latency'],
      [{ preferred_min_throughput: 'fast' }, 'provider.preferred_min_throughput'],
    ] as const) {
      const { status, body } = await chat({ provider })
      expect([JSON.stringify(provider), status, body.error.type]).toEqual([JSON.stringify(provider), 400, 'invalid_request'])
      expect(body.error.param).toMatch(new RegExp(`^${param.replace('.', '\\.')}`))
    }
  })
})

describe('data policies of the provider presets', () => {
  let t: TestGateway
  beforeAll(async () => {
    t = await startGateway({
      providers: [
        openai({ apiKey: 'sk-never-called', baseURL: 'http://127.0.0.1:9/v1', models: [{ id: 'openai/gpt-test', pricing: usd('0.000001') }] }),
        hostedProvider('fireworks', {
          apiKey: 'fw-never-called',
          baseURL: 'http://127.0.0.1:9/v1',
          models: [{ id: 'openai/gpt-test', pricing: usd('0.000002') }],
        }),
        hostedProvider('deepseek', {
          apiKey: 'ds-never-called',
          baseURL: 'http://127.0.0.1:9/v1',
          models: [{ id: 'openai/gpt-test', pricing: usd('0.0000005') }],
        }),
        // Named like a preset but not the preset: no policy is credited to it.
        openaiCompatible({
          slug: 'groq',
          name: 'Not Groq',
          baseURL: 'http://127.0.0.1:9/v1',
          apiKey: 'x',
          models: [{ id: 'openai/gpt-test', pricing: usd('0.0000001') }],
        }),
      ],
    })
  })
  afterAll(() => t.close())

  const plan = async (provider: unknown) =>
    (await planAttempts(t.gateway.context, chatRouting({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], provider } as never))).map(
      (a) => a.offer.provider.slug,
    )

  it('shows each preset’s documented policy in /providers and routes by it', async () => {
    const providers = (await (await t.request('/api/v1/providers')).json()).data as { slug: string; data_policy: Record<string, unknown> }[]
    const policy = (slug: string) => providers.find((p) => p.slug === slug)!.data_policy
    expect(policy('openai')).toMatchObject({
      training: false,
      retains_prompts: true,
      retention_days: 30,
      source: 'https://platform.openai.com/docs/guides/your-data',
    })
    expect(policy('fireworks')).toMatchObject({ training: false, retains_prompts: false })
    expect(policy('deepseek')).toMatchObject({ training: true, retains_prompts: true })
    expect(policy('groq')).toEqual({})
    expect(await plan({})).toEqual(['groq', 'deepseek', 'openai', 'fireworks'])
    expect(await plan({ data_collection: 'deny' })).toEqual(['openai', 'fireworks'])
    expect(await plan({ zdr: true })).toEqual(['fireworks'])
  })
})
