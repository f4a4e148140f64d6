import { afterEach, describe, expect, it } from 'vitest'
import { openaiCompatible, type GatewayOptions, type RoutingEvent } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, readSse, units } from '../helpers/sse'

// The router under faults (docs/routing.md): the breaker's probe, a single provider that keeps being tried, one
// org's failures kept to that org, and retries of the same provider, each with exact credits.

const cheap = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const dear = { prompt: '0.000003', completion: '0.000004', currency: 'USD' }
const json = { 'content-type': 'application/json' }
const SERVICE_KEY = 'sk-service-flaky'
type Customer = Awaited<ReturnType<typeof createCustomer>>

interface Setup {
  t: TestGateway
  flaky: FakeOpenAI
  steady: FakeOpenAI
  clock: { now: number }
  events: { kind: string; event: RoutingEvent & { delayMs?: number } }[]
  customer(): Promise<Customer>
  /** One chat request of `cb/model` (the flaky provider first): status, parsed body, serving provider. */
  ask(
    customer: Customer,
    options?: { content?: string; stream?: boolean; signal?: AbortSignal },
  ): Promise<{ status: number; body: any; provider?: string; ms: number; headers: Headers }>
  /** The flaky provider's health entry (service key unless a credential is named). */
  flakyHealth(credential?: string): ReturnType<TestGateway['gateway']['admin']['health']>[number] | undefined
  /** Asserts the org paid exactly the sum of its answers' cost_eur and holds nothing. */
  assertExactCredits(customer: Customer): Promise<void>
}

const opened: Setup[] = []
afterEach(async () => {
  for (const s of opened.splice(0)) {
    await s.t.close()
    await s.flaky.close()
    await s.steady.close()
  }
})

async function setup(options: { several: boolean } & Pick<GatewayOptions, 'health' | 'retry' | 'requestTimeoutMs' | 'upstreamTimeoutMs'>): Promise<Setup> {
  const flaky = await startFakeOpenAI({ apiKey: SERVICE_KEY, slowMs: 150 })
  const steady = await startFakeOpenAI()
  const clock = { now: Date.parse('2026-11-26T12:00:00Z') }
  const events: Setup['events'] = []
  const push = (kind: string) => (event: RoutingEvent) => events.push({ kind, event })
  const { several, ...rest } = options
  const t = await startGateway({
    clock: () => clock.now,
    upstreamTimeoutMs: 300,
    ...rest,
    hooks: { onAttempt: push('attempt'), onRetry: push('retry'), onFallback: push('fallback'), onSuccess: push('success'), onFailure: push('failure') },
    providers: [
      openaiCompatible({
        slug: 'flaky',
        name: 'Flaky',
        baseURL: flaky.url,
        apiKey: SERVICE_KEY,
        byokSupported: true,
        models: [{ id: 'cb/model', upstreamId: 'flaky', pricing: cheap }],
      }),
      ...(several
        ? [openaiCompatible({ slug: 'steady', name: 'Steady', baseURL: steady.url, models: [{ id: 'cb/model', upstreamId: 'gpt-test', pricing: dear }] })]
        : []),
    ],
  })
  const paid = new Map<string, bigint>()
  const s: Setup = {
    t,
    flaky,
    steady,
    clock,
    events,
    customer: () => createCustomer(t.gateway, { credits: '5' }),
    async ask(customer, { content = 'one two three', stream = false, signal } = {}) {
      const started = performance.now()
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        signal,
        body: JSON.stringify({ model: 'cb/model', stream, messages: [{ role: 'user', content }], provider: { order: ['flaky'] } }),
      })
      let body: any
      let usage: any
      if (stream && res.status === 200) {
        body = (await readSse(res)).events
        usage = body.at(-2)?.usage
      } else {
        body = await res.json()
        usage = body.usage
      }
      const ms = performance.now() - started
      if (usage?.cost_eur !== undefined) paid.set(customer.user.org_id, (paid.get(customer.user.org_id) ?? 0n) + units(String(usage.cost_eur)))
      return { status: res.status, body, provider: stream ? body[0]?.provider : body.provider, ms, headers: res.headers }
    },
    flakyHealth: (credential = 'service') => t.gateway.admin.health().find((h) => h.provider === 'flaky' && h.credential === credential),
    async assertExactCredits(customer) {
      const ctx = t.gateway.context
      const credits = await t.gateway.admin.getCredits(customer.user.org_id)
      expect(credits.total_usage).toBe(decimalText(paid.get(customer.user.org_id) ?? 0n))
      const principal = (await t.gateway.admin.findUserByKey(customer.key))!
      await expect.poll(() => ctx.holds.held(budgetsOf(ctx, principal).budgets[0], Date.now())).toBe(0n)
    },
  }
  opened.push(s)
  return s
}

describe('the breaker’s probe', () => {
  for (const several of [false, true]) {
    const candidates = several ? 'several candidates' : 'one candidate'
    // Opens flaky's breaker for everyone: failures from two orgs, then the cool-down passes (half-open).
    const openThenHalfOpen = async () => {
      const s = await setup({ several, health: { failureThreshold: 2, cooldownMs: 30_000 }, retry: { maxRetries: 0 } })
      const [a, b] = [await s.customer(), await s.customer()]
      s.flaky.modes.flaky = 'fail-500'
      for (const customer of [a, b]) {
        const answer = await s.ask(customer)
        expect(answer.status).toBe(several ? 200 : 502)
        if (several) expect(answer.provider).toBe('Steady')
      }
      expect(s.flakyHealth()).toMatchObject({ state: 'open', open_for: 'everyone', consecutive_failures: 2, probing: false })
      if (several) {
        // While it is open, flaky is skipped: another way is left.
        delete s.flaky.modes.flaky
        expect((await s.ask(a)).provider).toBe('Steady')
        expect(s.flaky.requests).toHaveLength(2)
      }
      s.clock.now += 30_000
      expect(s.flakyHealth()!.state).toBe('half-open')
      return { s, a, b }
    }

    it(`success closes the breaker (${candidates})`, async () => {
      const { s, a, b } = await openThenHalfOpen()
      delete s.flaky.modes.flaky
      const probe = await s.ask(a)
      expect([probe.status, probe.provider]).toEqual([200, 'Flaky'])
      expect(s.flakyHealth()).toMatchObject({ state: 'closed', open_for: null, consecutive_failures: 0, probing: false })
      expect((await s.ask(b)).provider).toBe('Flaky')
      await s.assertExactCredits(a)
      await s.assertExactCredits(b)
    })

    it(`a 400 ends the probe without a verdict, and the next request probes again (${candidates})`, async () => {
      const { s, a, b } = await openThenHalfOpen()
      s.flaky.modes.flaky = 'fail-400'
      const calls = s.flaky.requests.length
      const probe = await s.ask(a)
      // The request's own error is answered as it is: no fallback, no failure counted against the provider.
      expect(probe.status).toBe(400)
      expect(probe.body.error.metadata).toMatchObject({ provider_name: 'Flaky', error_type: 'invalid_request' })
      expect(s.flaky.requests.length).toBe(calls + 1)
      expect(s.flakyHealth()).toMatchObject({ state: 'half-open', probing: false, consecutive_failures: 2 })
      delete s.flaky.modes.flaky
      const next = await s.ask(b)
      expect([next.status, next.provider]).toEqual([200, 'Flaky'])
      expect(s.flakyHealth()!.state).toBe('closed')
      await s.assertExactCredits(a)
      await s.assertExactCredits(b)
    })

    it(`a client that leaves releases the probe (${candidates})`, async () => {
      const { s, a, b } = await openThenHalfOpen()
      s.flaky.modes.flaky = 'hang'
      const calls = s.flaky.requests.length
      const leaving = new AbortController()
      const probe = s.ask(a, { signal: leaving.signal }).catch((error: Error) => error)
      await expect.poll(() => s.flaky.requests.length).toBe(calls + 1)
      expect(s.flakyHealth()!.probing).toBe(true)
      if (several) {
        // One probe at a time: meanwhile another request is served by the other provider.
        expect((await s.ask(b)).provider).toBe('Steady')
        expect(s.flaky.requests.length).toBe(calls + 1)
      }
      leaving.abort()
      expect(await probe).toBeInstanceOf(Error)
      await expect.poll(() => s.flakyHealth()!.probing).toBe(false)
      expect(s.flakyHealth()).toMatchObject({ state: 'half-open', consecutive_failures: 2 })
      delete s.flaky.modes.flaky
      const next = await s.ask(b)
      expect([next.status, next.provider]).toEqual([200, 'Flaky'])
      expect(s.flakyHealth()!.state).toBe('closed')
      await s.assertExactCredits(a)
      await s.assertExactCredits(b)
    })

    it(`a timeout opens the breaker again (${candidates})`, async () => {
      const { s, a, b } = await openThenHalfOpen()
      s.flaky.modes.flaky = 'hang'
      const probe = await s.ask(a)
      if (several) expect([probe.status, probe.provider]).toEqual([200, 'Steady'])
      else expect([probe.status, probe.body.error?.metadata?.error_type]).toEqual([408, 'timeout'])
      expect(s.flakyHealth()).toMatchObject({ state: 'open', probing: false, consecutive_failures: 3, retry_at: new Date(s.clock.now + 30_000).toISOString() })
      delete s.flaky.modes.flaky
      const calls = s.flaky.requests.length
      const next = await s.ask(b)
      if (several) {
        expect(next.provider).toBe('Steady')
        expect(s.flaky.requests.length).toBe(calls)
      } else {
        // The only way to serve the model is tried anyway, and its success closes the breaker.
        expect([next.status, next.provider]).toEqual([200, 'Flaky'])
        expect(s.flaky.requests.length).toBe(calls + 1)
        expect(s.flakyHealth()!.state).toBe('closed')
      }
      await s.assertExactCredits(a)
      await s.assertExactCredits(b)
    })
  }
})

describe('a model with a single provider', () => {
  it('gets a real try on every request after N upstream failures, and a slow answer is taken', async () => {
    const s = await setup({ several: false, health: { failureThreshold: 3, cooldownMs: 30_000 }, retry: { maxRetries: 0 } })
    const [a, b] = [await s.customer(), await s.customer()]
    s.flaky.modes.flaky = 'fail-500'
    for (let i = 0; i < 6; i++) {
      const answer = await s.ask(i % 2 ? b : a, { stream: i === 5 })
      expect(answer.status).toBe(502)
      expect(answer.body.error.metadata.error_type).toBe('provider_unavailable')
    }
    expect(s.flaky.requests).toHaveLength(6)
    expect(s.flakyHealth()).toMatchObject({ state: 'open', open_for: 'everyone', consecutive_failures: 6 })
    // Within the cool-down, the upstream recovers (slowly): the next request is served by it, streamed or whole.
    s.flaky.modes.flaky = 'slow'
    const whole = await s.ask(a)
    expect([whole.status, whole.provider]).toEqual([200, 'Flaky'])
    expect(whole.ms).toBeGreaterThanOrEqual(150)
    expect(s.flakyHealth()).toMatchObject({ state: 'closed', consecutive_failures: 0 })
    const streamed = await s.ask(b, { stream: true })
    expect([streamed.status, streamed.provider, streamed.body.at(-1)]).toEqual([200, 'Flaky', '[DONE]'])
    await s.assertExactCredits(a)
    await s.assertExactCredits(b)
  })
})

describe('one org’s failures', () => {
  it('open the breaker for that org only when its prompts fail', async () => {
    const s = await setup({ several: true, health: { failureThreshold: 3, cooldownMs: 30_000 }, retry: { maxRetries: 0 } })
    const [a, b] = [await s.customer(), await s.customer()]
    s.flaky.promptModes.poison = 'fail-500'
    for (let i = 0; i < 3; i++) expect((await s.ask(a, { content: 'poison prompt' })).provider).toBe('Steady')
    expect(s.flakyHealth()).toMatchObject({ state: 'open', open_for: a.user.org_id, consecutive_failures: 3 })
    // The failing org is routed around flaky; the other is not affected at all.
    const calls = s.flaky.requests.length
    expect((await s.ask(a)).provider).toBe('Steady')
    expect(s.flaky.requests.length).toBe(calls)
    for (let i = 0; i < 3; i++) expect((await s.ask(b)).provider).toBe('Flaky')
    expect(s.flaky.requests.length).toBe(calls + 3)
    // The provider served someone: its breaker is closed again, for the first org too.
    expect(s.flakyHealth()).toMatchObject({ state: 'closed', open_for: null })
    expect((await s.ask(a)).provider).toBe('Flaky')
    await s.assertExactCredits(a)
    await s.assertExactCredits(b)
  })

  it('with its own key rejected cool down that credential only, never the service key', async () => {
    const s = await setup({ several: false, health: { failureThreshold: 3, cooldownMs: 30_000 }, retry: { maxRetries: 0 } })
    const [a, b] = [await s.customer(), await s.customer()]
    s.flaky.keyModes['sk-customer-revoked'] = 'fail-401'
    const created = await s.t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...a.auth, ...json },
      body: JSON.stringify({ provider: 'flaky', key: 'sk-customer-revoked' }),
    })
    expect(created.status).toBe(201)
    const credential = (await created.json()).data.id as string
    const bearers = () => s.flaky.requests.map((r) => String(r.headers.authorization).replace('Bearer ', ''))
    // Org a's own key is tried first and refused; the service key serves instead.
    for (let i = 0; i < 3; i++) expect(await s.ask(a)).toMatchObject({ status: 200, provider: 'Flaky' })
    expect(bearers()).toEqual(['sk-customer-revoked', SERVICE_KEY, 'sk-customer-revoked', SERVICE_KEY, 'sk-customer-revoked', SERVICE_KEY])
    expect(s.flakyHealth(credential)).toMatchObject({ state: 'open', open_for: a.user.org_id, consecutive_failures: 3 })
    expect(s.flakyHealth()).toMatchObject({ state: 'closed', failures: 0, consecutive_failures: 0 })
    // While the credential cools down it is skipped (the service key is left); other orgs never notice.
    expect(await s.ask(a)).toMatchObject({ status: 200, provider: 'Flaky' })
    expect(await s.ask(b)).toMatchObject({ status: 200, provider: 'Flaky' })
    expect(bearers().slice(6)).toEqual([SERVICE_KEY, SERVICE_KEY])
    await s.assertExactCredits(a)
    await s.assertExactCredits(b)
  })
})

describe('retries of the same provider', () => {
  const delays = (s: Setup) => s.events.filter((e) => e.kind === 'retry').map((e) => e.event.delayMs!)

  it('retries a 503 twice with full-jitter backoff, then is served, counting every call', async () => {
    const s = await setup({ several: false, retry: { maxRetries: 2, baseDelayMs: 80, maxDelayMs: 5_000 } })
    const a = await s.customer()
    s.flaky.retryAfter = null
    s.flaky.script.flaky = ['fail-503', 'fail-503']
    const answer = await s.ask(a)
    expect([answer.status, answer.provider]).toEqual([200, 'Flaky'])
    expect(s.flaky.requests).toHaveLength(3)
    expect(s.events.map((e) => e.kind)).toEqual(['attempt', 'retry', 'attempt', 'retry', 'attempt', 'success'])
    expect(s.events.filter((e) => e.kind === 'attempt').map((e) => [e.event.attempt, e.event.retry])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
    ])
    const [first, second] = delays(s)
    expect(first).toBeGreaterThanOrEqual(0)
    expect(first).toBeLessThanOrEqual(80)
    expect(second).toBeGreaterThanOrEqual(0)
    expect(second).toBeLessThanOrEqual(160)
    const [t0, t1, t2] = s.flaky.arrivals
    expect(t1 - t0).toBeGreaterThanOrEqual(first - 2)
    expect(t2 - t1).toBeGreaterThanOrEqual(second - 2)
    const [record] = await s.t.gateway.context.usage.list(a.user.org_id)
    expect(record).toMatchObject({ provider: 'flaky', attempts: 3, status: 'success' })
    // Two failures then a success: the provider is healthy.
    expect(s.flakyHealth()).toMatchObject({ state: 'closed', failures: 2, requests: 3, consecutive_failures: 0 })
    await s.assertExactCredits(a)
  })

  it('retries connection errors and 429s too, never a 500 or a 400', async () => {
    const s = await setup({ several: false, retry: { maxRetries: 2, baseDelayMs: 5 } })
    const a = await s.customer()
    s.flaky.retryAfter = null
    s.flaky.script.flaky = ['fail-reset', 'fail-429']
    expect(await s.ask(a, { stream: true })).toMatchObject({ status: 200, provider: 'Flaky' })
    expect(s.flaky.requests).toHaveLength(3)
    for (const fault of ['fail-500', 'fail-400']) {
      s.flaky.script.flaky = [fault]
      const before = s.flaky.requests.length
      expect((await s.ask(a)).status).toBe(fault === 'fail-500' ? 502 : 400)
      expect(s.flaky.requests.length).toBe(before + 1)
    }
    await s.assertExactCredits(a)
  })

  it('moves on to the next provider once the retries are spent', async () => {
    const s = await setup({ several: true, retry: { maxRetries: 2, baseDelayMs: 5 } })
    const a = await s.customer()
    s.flaky.retryAfter = null
    s.flaky.modes.flaky = 'fail-503'
    const answer = await s.ask(a)
    expect([answer.status, answer.provider]).toEqual([200, 'Steady'])
    expect(s.flaky.requests).toHaveLength(3)
    expect(s.events.map((e) => e.kind)).toEqual(['attempt', 'retry', 'attempt', 'retry', 'attempt', 'fallback', 'attempt', 'success'])
    expect((await s.t.gateway.context.usage.list(a.user.org_id))[0]).toMatchObject({ provider: 'steady', attempts: 4 })
    await s.assertExactCredits(a)
  })

  it('fails with the provider’s error when its retries are spent and it is the only one, charging nothing', async () => {
    const s = await setup({ several: false, retry: { maxRetries: 2, baseDelayMs: 5 } })
    const a = await s.customer()
    s.flaky.retryAfter = null
    s.flaky.modes.flaky = 'fail-503'
    const answer = await s.ask(a)
    expect([answer.status, answer.body.error.metadata.error_type]).toEqual([502, 'provider_overloaded'])
    expect(s.flaky.requests).toHaveLength(3)
    expect(s.events.at(-1)).toMatchObject({ kind: 'failure', event: { attempt: 3, retry: 2 } })
    expect(await s.t.gateway.context.usage.list(a.user.org_id)).toHaveLength(0)
    await s.assertExactCredits(a)
  })

  it('waits for a Retry-After that fits in the deadline', async () => {
    const s = await setup({ several: true, requestTimeoutMs: 5_000, retry: { maxRetries: 2, baseDelayMs: 5 } })
    const a = await s.customer()
    s.flaky.retryAfter = '0.4'
    s.flaky.script.flaky = ['fail-429']
    const answer = await s.ask(a)
    expect([answer.status, answer.provider]).toEqual([200, 'Flaky'])
    expect(delays(s)).toEqual([400])
    const [t0, t1] = s.flaky.arrivals
    expect(t1 - t0).toBeGreaterThanOrEqual(398)
    await s.assertExactCredits(a)
  })

  it('does not wait for a Retry-After past the deadline (or above retry.maxDelayMs): the next provider serves, or the 429 is answered at once', async () => {
    for (const several of [true, false]) {
      const s = await setup({ several, requestTimeoutMs: 1_500, retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 60_000 } })
      const a = await s.customer()
      s.flaky.retryAfter = '5'
      s.flaky.modes.flaky = 'fail-429'
      const answer = await s.ask(a)
      expect(answer.ms).toBeLessThan(1_000)
      expect(s.flaky.requests).toHaveLength(1)
      expect(delays(s)).toEqual([])
      if (several) expect([answer.status, answer.provider]).toEqual([200, 'Steady'])
      else {
        expect([answer.status, answer.body.error.metadata.error_type]).toEqual([429, 'rate_limit_exceeded'])
        expect(answer.headers.get('retry-after')).toBe('5')
      }
      await s.assertExactCredits(a)
    }
    const s = await setup({ several: true, requestTimeoutMs: 60_000, retry: { maxRetries: 2, maxDelayMs: 1_000 } })
    const a = await s.customer()
    s.flaky.retryAfter = '2'
    s.flaky.script.flaky = ['fail-429']
    expect(await s.ask(a)).toMatchObject({ status: 200, provider: 'Steady' })
    expect(s.flaky.requests).toHaveLength(1)
  })

  it('stops retrying when the client leaves during the wait, holding nothing', async () => {
    const s = await setup({ several: false, retry: { maxRetries: 2 } })
    const a = await s.customer()
    s.flaky.retryAfter = '1'
    s.flaky.modes.flaky = 'fail-429'
    const leaving = new AbortController()
    const answer = s.ask(a, { signal: leaving.signal }).catch((error: Error) => error)
    await expect.poll(() => s.events.some((e) => e.kind === 'retry')).toBe(true)
    leaving.abort()
    expect(await answer).toBeInstanceOf(Error)
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect(s.flaky.requests).toHaveLength(1)
    await s.assertExactCredits(a)
  })
})
