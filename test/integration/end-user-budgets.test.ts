import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { toUnits } from '../../src/billing/money'
import { endUserSubject } from '../../src/billing/spend-limits'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
// A chat below ("hi", max_tokens 10): 8 prompt tokens and 4 completion tokens upstream.
const COST = 0.00001376

describe('end users (OpenRouter’s `user` field): limits set per org, usage counted per end user (docs/first-party.md#end-users)', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  let clock = Date.parse('2026-11-26T12:00:10.000Z')

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 10 })
    const models: ProviderModel[] = [
      { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing },
      { id: 'fake/slow', upstreamId: 'slow', pricing },
      { id: 'fake/embed', upstreamId: 'emb-fast', pricing: { ...pricing, completion: '0' }, endpoints: ['/embeddings'], embedding: { dimensions: 8 } },
    ]
    t = await startGateway({ clock: () => clock, providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })] })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  const post = (key: string, path: string, body: Record<string, unknown>) =>
    t.request(`/api/v1${path}`, { method: 'POST', headers: { ...json, ...bearer(key), 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) })
  const chat = (key: string, user?: string, model = 'fake/gpt-test') =>
    post(key, '/chat/completions', { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...(user === undefined ? {} : { user }) })
  const messages = (key: string, user: string) =>
    post(key, '/messages', { model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: user } })
  const responses = (key: string, user: string) => post(key, '/responses', { model: 'fake/gpt-test', max_output_tokens: 16, input: 'hi', user })
  const embed = (key: string, user: string) => post(key, '/embeddings', { model: 'fake/embed', input: 'hi', user })

  it('requests per minute count each end user apart, on chat, Messages, Responses and embeddings; requests naming none are not counted', async () => {
    clock = Date.parse('2026-11-26T12:00:10.000Z')
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const org = await t.gateway.admin.setEndUserLimits(customer.user.org_id, { requests_per_minute: 2 })
    expect(org.end_user_limits).toEqual({ requests_per_minute: 2 })

    expect((await chat(customer.key, 'alice')).status).toBe(200)
    expect((await messages(customer.key, 'alice')).status).toBe(200)
    for (const refused of [await chat(customer.key, 'alice'), await responses(customer.key, 'alice'), await embed(customer.key, 'alice')]) {
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('50')
    }
    const error = (await (await chat(customer.key, 'alice')).json()).error
    expect(error.message).toContain("This end user's rate limit of 2 requests per minute is reached")
    expect(error.metadata).toEqual({ limit: 'end_user', limit_type: 'requests_per_minute', requests_per_minute: 2, resets_at: '2026-11-26T12:01:00.000Z' })

    // Bob has his own count; a request naming no end user is the user's own, not limited per end user.
    expect((await responses(customer.key, 'bob')).status).toBe(200)
    expect((await embed(customer.key, 'bob')).status).toBe(200)
    expect((await chat(customer.key, 'bob')).status).toBe(429)
    for (let i = 0; i < 3; i++) expect((await chat(customer.key)).status).toBe(200)

    // Another org's end user of the same name is someone else.
    const other = await createCustomer(t.gateway, { credits: '5' })
    await t.gateway.admin.setEndUserLimits(other.user.org_id, { requests_per_minute: 1 })
    expect((await chat(other.key, 'alice')).status).toBe(200)
    expect((await chat(other.key, 'alice')).status).toBe(429)

    clock = Date.parse('2026-11-26T12:01:00.000Z')
    expect((await chat(customer.key, 'alice')).status).toBe(200)
  })

  it('a monthly credit limit per end user: 402 for the one who spent it, the others still served', async () => {
    clock = Date.parse('2026-11-26T12:00:10.000Z')
    const customer = await createCustomer(t.gateway, { credits: '5' })
    await t.gateway.admin.setEndUserLimits(customer.user.org_id, { credit_limit: '0.00003', limit_reset: 'monthly' })
    const first = await chat(customer.key, 'carol')
    expect(first.status).toBe(200)
    expect((await first.json()).usage.cost_eur).toBe(COST)
    const refused = await chat(customer.key, 'carol')
    expect(refused.status).toBe(402)
    const error = (await refused.json()).error
    expect(error.message).toContain("This end user's credit limit cannot cover this request")
    expect(error.metadata).toMatchObject({
      limit: 'end_user',
      available: '0.00001624',
      credit_limit: '0.00003',
      limit_reset: 'monthly',
      limit_resets_at: '2026-12-01T00:00:00.000Z',
    })
    expect((await chat(customer.key, 'dave')).status).toBe(200)
    // GET /key shows the org's end-user limits.
    const key = (await (await t.request('/api/v1/key', { headers: customer.auth })).json()).data
    expect(key.end_user_limits).toEqual({
      credit_limit: '0.00003',
      limit_reset: 'monthly',
      requests_per_minute: null,
      max_in_flight: null,
      tokens_per_minute: null,
      tokens_per_day: null,
      spend_limit: null,
      spend_window: null,
    })
    // Next month, Carol is served again; removing the limits (null) ends them.
    clock = Date.parse('2026-12-01T00:00:00.000Z')
    expect((await chat(customer.key, 'carol')).status).toBe(200)
    expect((await chat(customer.key, 'carol')).status).toBe(402)
    const org = await t.gateway.admin.setEndUserLimits(customer.user.org_id, null)
    expect(org.end_user_limits).toBeUndefined()
    expect((await chat(customer.key, 'carol')).status).toBe(200)
  })

  it('requests at once per end user: 429 while its cap runs, another end user still served', async () => {
    clock = Date.parse('2026-11-26T12:00:10.000Z')
    const customer = await createCustomer(t.gateway, { credits: '5' })
    await t.gateway.admin.setEndUserLimits(customer.user.org_id, {
      max_in_flight: 1,
      tokens_per_minute: null,
      tokens_per_day: null,
      spend_limit: null,
      spend_window: null,
    })
    let open!: () => void
    upstream.slowGate = new Promise<void>((resolve) => (open = resolve))
    try {
      const sent = upstream.requests.length
      const running = chat(customer.key, 'erin', 'fake/slow')
      await expect.poll(() => upstream.requests.length - sent).toBe(1)
      const refused = await chat(customer.key, 'erin')
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('1')
      expect((await refused.json()).error.metadata).toEqual({ limit: 'end_user', limit_type: 'max_in_flight', max_in_flight: 1 })
      expect((await chat(customer.key, 'frank')).status).toBe(200)
      open()
      expect((await running).status).toBe(200)
    } finally {
      open()
      upstream.slowGate = undefined
    }
    expect((await chat(customer.key, 'erin')).status).toBe(200)
  })

  it('an end-user id longer than 256 characters is a 400 naming the field; an empty one names no end user', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    await t.gateway.admin.setEndUserLimits(customer.user.org_id, { requests_per_minute: 1 })
    const long = 'x'.repeat(257)
    for (const [res, param] of [
      [await chat(customer.key, long), 'user'],
      [await responses(customer.key, long), 'user'],
      [await embed(customer.key, long), 'user'],
    ] as const) {
      expect(res.status).toBe(400)
      expect((await res.json()).error.param).toBe(param)
    }
    const anthropic = await messages(customer.key, long)
    expect(anthropic.status).toBe(400)
    expect((await anthropic.json()).type).toBe('error')
    // 256 characters are taken (and counted: a second request of that end user is over its rate).
    expect((await chat(customer.key, 'y'.repeat(256))).status).toBe(200)
    expect((await chat(customer.key, 'y'.repeat(256))).status).toBe(429)
    for (let i = 0; i < 2; i++) expect((await chat(customer.key, '')).status).toBe(200)
  })

  it('the sweep removes end users’ counters of windows long past, never the counter of all time', async () => {
    clock = Date.parse('2026-11-26T12:00:10.000Z')
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const storage = t.gateway.context.expiring
    await t.gateway.admin.setEndUserLimits(customer.user.org_id, { credit_limit: '1', limit_reset: 'daily', requests_per_minute: 100 })
    expect((await chat(customer.key, 'gina')).status).toBe(200)
    await t.gateway.admin.setEndUserLimits(customer.user.org_id, { credit_limit: '1', limit_reset: null })
    expect((await chat(customer.key, 'gina')).status).toBe(200)
    const mine = async () =>
      (await storage.list('end_user_counters')).filter((k) => k.startsWith(`${customer.user.org_id}:`)).map((k) => k.slice(k.lastIndexOf(':') + 1))
    expect((await mine()).sort()).toEqual(['requests-minute', 'used', 'used-daily'])
    // Within a day of the window's end, nothing of hers goes (the minute's counter goes a minute after its minute).
    clock = Date.parse('2026-11-27T23:59:00.000Z')
    await t.gateway.admin.sweep()
    expect((await mine()).sort()).toEqual(['used', 'used-daily'])
    clock = Date.parse('2026-11-28T00:00:00.000Z')
    await t.gateway.admin.sweep()
    expect(await mine()).toEqual(['used'])
    // The counter of all time still counts the request made under the limit without reset.
    const total = await t.gateway.context.spendCounters.readUsage(endUserSubject(customer.user.org_id, 'gina'), 'total')
    expect(total).toBe(toUnits(String(COST)))
  })

  it('the admin API validates the org’s end-user limits and 404s an unknown org', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const bad = await t.gateway.admin
      .setEndUserLimits(customer.user.org_id, { max_in_flight: 0, tokens_per_minute: null, tokens_per_day: null, spend_limit: null, spend_window: null })
      .catch((e) => e)
    expect(bad.status).toBe(400)
    expect(bad.param).toBe('max_in_flight')
    expect(
      (
        await t.gateway.admin
          .setEndUserLimits('no-such-org', { max_in_flight: 1, tokens_per_minute: null, tokens_per_day: null, spend_limit: null, spend_window: null })
          .catch((e) => e)
      ).status,
    ).toBe(404)
    expect((await t.gateway.admin.getOrg(customer.user.org_id))!.end_user_limits).toBeUndefined()
  })
})
