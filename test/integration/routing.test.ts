import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, openaiCompatible, type ProviderModel, type RoutingEvent } from '../../src/index'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import redisDriver from 'unstorage/drivers/redis'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'
import { decimalText, readSse, units } from '../helpers/sse'

const cheap = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const dear = { prompt: '0.000003', completion: '0.000004', currency: 'USD' }
const json = { 'content-type': 'application/json' }

const FAULTS = ['fail-429', 'fail-500', 'fail-503', 'fail-reset', 'hang', 'fail-badjson', 'fail-malformed', 'fail-midstream'] as const
type Fault = (typeof FAULTS)[number]

// What a fault becomes when no other provider may take over (whole request / stream before any content).
const alone: Record<Fault, { status: number; errorType: string }> = {
  'fail-429': { status: 429, errorType: 'rate_limit_exceeded' },
  'fail-500': { status: 502, errorType: 'provider_unavailable' },
  'fail-503': { status: 502, errorType: 'provider_overloaded' },
  'fail-reset': { status: 502, errorType: 'provider_unavailable' },
  hang: { status: 408, errorType: 'timeout' },
  'fail-badjson': { status: 502, errorType: 'malformed_response' },
  'fail-malformed': { status: 502, errorType: 'malformed_response' },
  'fail-midstream': { status: 502, errorType: 'provider_unavailable' },
}

// Faults retried once on the same provider in the matrix (503 and connection errors; its 429 asks for 2 s, more than
// the matrix's retry.maxDelayMs, so the router moves on at once).
const retried = new Set<Fault>(['fail-503', 'fail-reset', 'fail-midstream'])

describe('routing under faults', () => {
  let primary: FakeOpenAI
  let backup: FakeOpenAI
  let t: TestGateway
  const events: { kind: string; event: RoutingEvent }[] = []
  const baseline = { handles: 0, timers: 0 }
  const count = (...kinds: string[]) => process.getActiveResourcesInfo().filter((r) => kinds.includes(r)).length

  beforeAll(async () => {
    baseline.handles = count('TCPSocketWrap', 'TCPServerWrap')
    baseline.timers = count('Timeout')
    primary = await startFakeOpenAI({ apiKey: 'sk-primary', slowMs: 50 })
    backup = await startFakeOpenAI({ apiKey: 'sk-backup' })
    const model = (fault: string, upstreamId: string, pricing: ProviderModel['pricing']): ProviderModel => ({ id: `fault/${fault}`, upstreamId, pricing })
    t = await startGateway({
      upstreamTimeoutMs: 300,
      keepAliveMs: 5_000,
      health: { failureThreshold: 1_000 }, // the matrix must not open breakers; the breaker has its own test
      retry: { maxRetries: 1, baseDelayMs: 5, maxDelayMs: 1_000 },
      hooks: {
        onAttempt: (event) => events.push({ kind: 'attempt', event }),
        onRetry: (event) => events.push({ kind: 'retry', event }),
        onFallback: (event) => events.push({ kind: 'fallback', event }),
        onSuccess: (event) => events.push({ kind: 'success', event }),
        onFailure: (event) => events.push({ kind: 'failure', event }),
      },
      providers: [
        openaiCompatible({ slug: 'primary', name: 'Primary', baseURL: primary.url, apiKey: 'sk-primary', models: FAULTS.map((f) => model(f, f, cheap)) }),
        openaiCompatible({ slug: 'backup', name: 'Backup', baseURL: backup.url, apiKey: 'sk-backup', models: FAULTS.map((f) => model(f, 'gpt-test', dear)) }),
      ],
    })
  })
  afterAll(async () => {
    await t.close()
    await primary.close()
    await backup.close()
    // Nothing left open: no sockets or servers beyond those before the suite, no request timers.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(count('TCPSocketWrap', 'TCPServerWrap')).toBeLessThanOrEqual(baseline.handles)
    expect(count('Timeout')).toBeLessThanOrEqual(baseline.timers)
  })

  for (const fault of FAULTS) {
    for (const stream of [false, true]) {
      for (const fallback of [true, false]) {
        it(`${fault}, ${stream ? 'streamed' : 'whole'}, fallback ${fallback ? 'allowed' : 'forbidden'}`, async () => {
          const customer = await createCustomer(t.gateway, { credits: '1' })
          const sent = { primary: primary.requests.length, backup: backup.requests.length }
          events.length = 0
          const res = await t.request('/api/v1/chat/completions', {
            method: 'POST',
            headers: { ...customer.auth, ...json },
            body: JSON.stringify({
              model: `fault/${fault}`,
              stream,
              messages: [{ role: 'user', content: 'one two three four five' }],
              provider: { order: ['primary'], ...(fallback ? {} : { allow_fallbacks: false }) },
            }),
          })
          const credits = await t.gateway.admin.getCredits(customer.user.org_id)
          const charged = credits.total_usage
          const attempts = events.filter((e) => e.kind === 'attempt').map((e) => e.event.provider)
          const upstream = { primary: primary.requests.length - sent.primary, backup: backup.requests.length - sent.backup }

          if (stream && fault === 'fail-midstream') {
            // Content reached the client: no fallback, an error chunk, and what was generated is billed.
            expect(res.status).toBe(200)
            const { events: sse } = await readSse(res)
            const error = sse.find((e: any) => e.error)
            expect(error.provider).toBe('Primary')
            expect(error.error.metadata.error_type).toBe('provider_unavailable')
            expect(error.choices[0].finish_reason).toBe('error')
            const usage = sse.at(-2).usage
            expect(usage.estimated).toBe(true)
            expect(attempts).toEqual(['primary'])
            expect(upstream).toEqual({ primary: 1, backup: 0 })
            expect((await t.gateway.admin.getCredits(customer.user.org_id)).total_usage).toBe(decimalText(units(String(usage.cost_eur))))
            return
          }

          // A retried fault calls the primary twice (the retry is an attempt of its own), and says so in a hook.
          const again = retried.has(fault)
          const primaryCalls = again ? ['primary', 'primary'] : ['primary']
          const primaryEvents = again ? ['attempt', 'retry', 'attempt'] : ['attempt']
          if (fallback) {
            expect(res.status).toBe(200)
            const body = stream ? (await readSse(res)).events : [await res.json()]
            const last = stream ? body.at(-2) : body[0]
            expect(body[0].provider).toBe('Backup')
            expect(attempts).toEqual([...primaryCalls, 'backup'])
            expect(events.map((e) => e.kind)).toEqual([...primaryEvents, 'fallback', 'attempt', 'success'])
            expect(events.filter((e) => e.kind !== 'retry').map((e) => e.event.attempt)).toEqual(again ? [1, 2, 2, 3, 3] : [1, 1, 2, 2])
            expect(events[primaryEvents.length].event.error?.error_type).toBe(alone[fault].errorType)
            if (again) expect((events[1].event as RoutingEvent & { delayMs: number }).delayMs).toBeLessThanOrEqual(5)
            expect(upstream).toEqual({ primary: primaryCalls.length, backup: 1 })
            // Only the serving attempt is charged, exactly, at the backup's prices.
            const { prompt_tokens: p, completion_tokens: c, cost_eur } = last.usage
            const usd = BigInt(p) * 3_000_000n + BigInt(c) * 4_000_000n
            expect(String(last.usage.cost)).toBe(decimalText(usd))
            expect(charged).toBe(decimalText(units(String(cost_eur))))
            const records = await t.gateway.context.usage.list(customer.user.org_id)
            expect(records).toHaveLength(1)
            expect(records[0]).toMatchObject({ provider: 'backup', attempts: primaryCalls.length + 1, status: 'success' })
          } else {
            expect(res.status).toBe(alone[fault].status)
            const body = await res.json()
            expect(body.error.metadata).toMatchObject({ provider_name: 'Primary', error_type: alone[fault].errorType })
            expect(attempts).toEqual(primaryCalls)
            expect(events.map((e) => e.kind)).toEqual([...primaryEvents, 'failure'])
            expect(upstream).toEqual({ primary: primaryCalls.length, backup: 0 })
            expect(charged).toBe('0')
          }
        })
      }
    }
  }
})

describe('routing preferences', () => {
  let fakes: Record<'a' | 'b' | 'c', FakeOpenAI>
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>
  beforeAll(async () => {
    fakes = { a: await startFakeOpenAI(), b: await startFakeOpenAI(), c: await startFakeOpenAI() }
    const offer = (prompt: string, extra: Partial<ProviderModel> = {}): ProviderModel[] => [
      { id: 'pref/model', upstreamId: 'gpt-test', pricing: { prompt, completion: prompt, currency: 'USD' }, supportedParameters: ['temperature'], ...extra },
    ]
    t = await startGateway({
      providers: [
        openaiCompatible({ slug: 'a', name: 'A', baseURL: fakes.a.url, models: offer('0.000002') }),
        openaiCompatible({ slug: 'b', name: 'B', baseURL: fakes.b.url, models: offer('0.000001', { supportedParameters: ['temperature', 'tools'] }) }),
        openaiCompatible({ slug: 'c', name: 'C', baseURL: fakes.c.url, models: offer('0.000003') }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '5' })
  })
  afterAll(async () => {
    await t.close()
    await Promise.all(Object.values(fakes).map((f) => f.close()))
  })

  const servedBy = async (extra: Record<string, unknown>) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'pref/model', messages: [{ role: 'user', content: 'hi' }], ...extra }),
    })
    const body = await res.json()
    return res.status === 200 ? body.provider : `${res.status} ${body.error.message}`
  }
  const plan = async (provider: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const { planAttempts } = await import('../../src/routing/plan')
    const { chatRouting } = await import('../../src/chat/routing-request')
    const attempts = await planAttempts(
      t.gateway.context,
      chatRouting({ model: 'pref/model', messages: [{ role: 'user', content: 'hi' }], provider, ...extra } as never),
    )
    return attempts.map((a) => a.offer.provider.slug)
  }

  it('orders by price by default', async () => {
    expect(await plan({})).toEqual(['b', 'a', 'c'])
    expect(await servedBy({})).toBe('B')
  })
  it('puts provider.order first, the rest after unless fallbacks are off', async () => {
    expect(await plan({ order: ['c', 'a'] })).toEqual(['c', 'a', 'b'])
    expect(await plan({ order: ['c', 'a'], allow_fallbacks: false })).toEqual(['c', 'a'])
    expect(await plan({ allow_fallbacks: false })).toEqual(['b'])
    expect(await servedBy({ provider: { order: ['c'] } })).toBe('C')
  })
  it('keeps provider.only and drops provider.ignore', async () => {
    expect(await plan({ only: ['a', 'c'] })).toEqual(['a', 'c'])
    expect(await plan({ ignore: ['b'] })).toEqual(['a', 'c'])
  })
  it('drops providers that lack a used parameter when require_parameters is set', async () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }]
    expect(await plan({ require_parameters: true }, { tools })).toEqual(['b'])
    expect(await plan({}, { tools })).toEqual(['b', 'a', 'c'])
  })
  it('drops providers above max_price (USD per million tokens)', async () => {
    expect(await plan({ max_price: { prompt: 2 } })).toEqual(['b', 'a'])
    expect(await plan({ max_price: { prompt: '1', completion: 1 } })).toEqual(['b'])
  })
  it('sorts by price, latency or throughput when asked', async () => {
    const health = t.gateway.context.health
    // Fill each window (20 outcomes) so that the earlier requests' real timings drop out.
    for (let i = 0; i < 20; i++) {
      health.record({ provider: 'a', model: 'pref/model' }, undefined, { ok: true, latencyMs: 10, tokensPerSecond: 50 })
      health.record({ provider: 'b', model: 'pref/model' }, undefined, { ok: true, latencyMs: 300, tokensPerSecond: 20 })
      health.record({ provider: 'c', model: 'pref/model' }, undefined, { ok: true, latencyMs: 100, tokensPerSecond: 90 })
    }
    expect(await plan({ sort: 'latency' })).toEqual(['a', 'c', 'b'])
    expect(await plan({ sort: 'throughput' })).toEqual(['c', 'a', 'b'])
    expect(await plan({ sort: 'price' })).toEqual(['b', 'a', 'c'])
  })
  it('falls back across the models list after the model’s own providers', async () => {
    const { planAttempts } = await import('../../src/routing/plan')
    const { chatRouting } = await import('../../src/chat/routing-request')
    await expect(planAttempts(t.gateway.context, chatRouting({ model: 'nobody/x', messages: [] } as never))).rejects.toMatchObject({ status: 404 })
  })
  it("answers 404 naming which preference excluded which provider when the request's preferences leave nothing", async () => {
    const answer = await servedBy({ provider: { only: ['a'], ignore: ['a'] } })
    expect(answer).toMatch(
      /^404 No provider of pref\/model matches the request's provider preferences: a \(pref\/model\): ignored by provider.ignore; b \(pref\/model\): not in provider.only; c/,
    )
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }]
    expect(await servedBy({ tools, provider: { require_parameters: true, ignore: ['b'] } })).toMatch(/^404 .*a \(pref\/model\): does not support tools/)
  })
})

describe('the circuit breaker', () => {
  it('skips a provider failing N times for the cool-down, probes it, then uses it again', async () => {
    let now = Date.parse('2026-11-25T12:00:00Z')
    const flaky = await startFakeOpenAI()
    const steady = await startFakeOpenAI()
    const t = await startGateway({
      clock: () => now,
      health: { failureThreshold: 3, cooldownMs: 30_000 },
      retry: { maxRetries: 0 },
      providers: [
        openaiCompatible({ slug: 'flaky', name: 'Flaky', baseURL: flaky.url, models: [{ id: 'cb/model', upstreamId: 'flaky', pricing: cheap }] }),
        openaiCompatible({ slug: 'steady', name: 'Steady', baseURL: steady.url, models: [{ id: 'cb/model', upstreamId: 'gpt-test', pricing: dear }] }),
      ],
    })
    try {
      const customer = await createCustomer(t.gateway, { credits: '5' })
      const ask = async () => {
        const res = await t.request('/api/v1/chat/completions', {
          method: 'POST',
          headers: { ...customer.auth, ...json },
          body: JSON.stringify({ model: 'cb/model', provider: { order: ['flaky'] }, messages: [{ role: 'user', content: 'hi' }] }),
        })
        return (await res.json()).provider
      }
      const flakyCalls = () => flaky.requests.length
      flaky.modes.flaky = 'fail-500'
      // The flaky provider is asked first every time; three failures (each request still served by the steady one) open its breaker.
      for (let i = 0; i < 3; i++) {
        expect(await ask()).toBe('Steady')
        now += 1000
      }
      expect(flakyCalls()).toBe(3)
      const open = t.gateway.admin.health().find((h) => h.provider === 'flaky')!
      expect(open).toMatchObject({ state: 'open', consecutive_failures: 3, failures: 3, requests: 3, retry_at: new Date(now - 1000 + 30_000).toISOString() })
      // While open, the flaky provider is not called at all.
      flaky.modes.flaky = 'gpt-test'
      expect(await ask()).toBe('Steady')
      expect(flakyCalls()).toBe(3)
      // After the cool-down one probe goes through; it succeeds and the provider is used again.
      now += 30_000
      expect(t.gateway.admin.health().find((h) => h.provider === 'flaky')!.state).toBe('half-open')
      expect(await ask()).toBe('Flaky')
      expect(flakyCalls()).toBe(4)
      expect(t.gateway.admin.health().find((h) => h.provider === 'flaky')!.state).toBe('closed')
      expect(await ask()).toBe('Flaky')
      // A failed probe opens the breaker again at once.
      flaky.modes.flaky = 'fail-503'
      for (let i = 0; i < 3; i++) await ask()
      now += 30_000
      expect(await ask()).toBe('Steady')
      expect(t.gateway.admin.health().find((h) => h.provider === 'flaky')!.state).toBe('open')
    } finally {
      await t.close()
      await flaky.close()
      await steady.close()
    }
  })
})

describe('rate limits', () => {
  it('answers the request past the limit with 429, Retry-After and X-RateLimit-* headers', async () => {
    const now = Date.parse('2026-11-25T12:00:10Z')
    const t = await startGateway({ clock: () => now, rateLimits: { key: { requests: 3, windowSeconds: 60 } } })
    try {
      const customer = await createCustomer(t.gateway)
      const statuses: number[] = []
      let last: Response | undefined
      for (let i = 0; i < 4; i++) {
        last = await t.request('/api/v1/me', { headers: customer.auth })
        statuses.push(last.status)
        if (i === 0) expect([last.headers.get('x-ratelimit-limit'), last.headers.get('x-ratelimit-remaining')]).toEqual(['3', '2'])
      }
      expect(statuses).toEqual([200, 200, 200, 429])
      const reset = String(Date.parse('2026-11-25T12:01:00Z') / 1000)
      expect(
        Object.fromEntries(['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map((h) => [h, last!.headers.get(h)])),
      ).toEqual({
        'retry-after': '50',
        'x-ratelimit-limit': '3',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': reset,
      })
      expect((await last!.json()).error).toMatchObject({ code: 429, type: 'rate_limited' })
      // Another key has its own window.
      expect((await t.request('/api/v1/me', { headers: (await createCustomer(t.gateway)).auth })).status).toBe(200)
    } finally {
      await t.close()
    }
  })

  const sharedStorages: [string, () => ReturnType<typeof createStorage>][] = [['memory', () => createStorage({ driver: memoryDriver() })]]
  if (process.env.REDIS_URL) {
    const base = `mg-rl-${process.pid}-${Date.now()}`
    sharedStorages.push(['redis (REDIS_URL)', () => createStorage({ driver: redisDriver({ url: process.env.REDIS_URL, base }) })])
  }
  for (const [name, open] of sharedStorages) {
    it(`holds an org limit across two gateway instances sharing ${name} storage`, async () => {
      const first = open()
      const second = name === 'memory' ? first : open()
      const a = createGateway({ storage: first, secret: TEST_SECRET, logger: false, rateLimits: { org: { requests: 10, windowSeconds: 60 } } })
      const b = createGateway({ storage: second, secret: TEST_SECRET, logger: false, rateLimits: { org: { requests: 10, windowSeconds: 60 } } })
      try {
        const customer = await createCustomer(a)
        const call = (gateway: typeof a) => gateway.fetch(new Request('http://x/api/v1/me', { headers: customer.auth })).then((r) => r.status)
        const statuses = await Promise.all(Array.from({ length: 16 }, (_, i) => call(i % 2 ? a : b)))
        expect(statuses.filter((s) => s === 200)).toHaveLength(10)
        expect(statuses.filter((s) => s === 429)).toHaveLength(6)
      } finally {
        if (name !== 'memory') await first.clear()
        await first.dispose()
        if (second !== first) await second.dispose()
      }
    })
  }
})
