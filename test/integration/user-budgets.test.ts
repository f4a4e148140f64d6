import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
// 0.000001 USD a prompt token, 0.000002 a completion token; 0.86 EUR a USD: 0.00000086 and 0.00000172 EUR.
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
// A request below: 8 prompt tokens and 4 completion tokens upstream: 8 × 0.00000086 + 4 × 0.00000172 EUR.
const COST = '0.00001376'

describe('a user’s limits: credit limit with reset, requests per minute, requests at once (docs/first-party.md)', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  // Thursday 26 November 2026, 12:00:30 UTC.
  let clock = Date.parse('2026-11-26T12:00:30.000Z')

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 10 })
    const models = ['gpt-test', 'slow'].map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing }))
    t = await startGateway({ clock: () => clock, providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })] })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  const chat = (key: string, model = 'fake/gpt-test') =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, ...bearer(key) },
      body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    })
  const me = async (key: string) => {
    const res = await t.request('/api/v1/me', { headers: bearer(key) })
    expect(res.status).toBe(200)
    return (await res.json()).limits
  }
  /** A user with credits and two keys (the keys have no limits: the user's decide). */
  const twoKeys = async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const second = await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'second' })
    return { customer, keys: [customer.key, second.key] }
  }

  it('a daily credit limit refuses with 402 naming the user’s limit once spent, across the user’s keys, and starts over the next day', async () => {
    clock = Date.parse('2026-11-26T12:00:30.000Z')
    const { customer, keys } = await twoKeys()
    await t.gateway.admin.setUserLimits(customer.user.id, { credit_limit: '0.00005', limit_reset: 'daily' })
    const first = await chat(keys[0])
    expect(first.status).toBe(200)
    expect((await first.json()).usage.cost_eur).toBe(Number(COST))
    expect((await chat(keys[1])).status).toBe(200)
    // 0.00005 − 2 × 0.00001376 = 0.00002248 left: less than a request's hold.
    const refused = await chat(keys[0])
    expect(refused.status).toBe(402)
    const error = (await refused.json()).error
    expect(error.type).toBe('insufficient_credits')
    expect(error.message).toContain("This user's credit limit cannot cover this request")
    expect(error.metadata).toMatchObject({
      limit: 'user',
      available: '0.00002248',
      credit_limit: '0.00005',
      limit_reset: 'daily',
      limit_resets_at: '2026-11-27T00:00:00.000Z',
    })
    expect(await me(keys[1])).toEqual({
      credit_limit: '0.00005',
      limit_reset: 'daily',
      requests_per_minute: null,
      max_in_flight: null,
      tokens_per_minute: null,
      tokens_per_day: null,
      spend_limit: null,
      spend_window: null,
      usage: '0.00002752',
      usage_daily: '0.00002752',
      usage_weekly: '0.00002752',
      usage_monthly: '0.00002752',
      limit_remaining: '0.00002248',
      requests_this_minute: 0,
      in_flight: null,
    })
    const key = (await (await t.request('/api/v1/key', { headers: bearer(keys[0]) })).json()).data
    expect(key).toMatchObject({ limit: null, user_limit: 0.00005, user_limit_remaining: 0.00002248, user_limit_reset: 'daily', user_usage: 0.00002752 })
    expect(key).toMatchObject({ user_requests_per_minute: null, user_max_in_flight: null, end_user_limits: null })

    // The next UTC day, the daily limit starts over; the weekly and monthly usage go on.
    clock = Date.parse('2026-11-27T00:00:01.000Z')
    expect((await chat(keys[1])).status).toBe(200)
    expect(await me(keys[0])).toMatchObject({ usage_daily: COST, usage_weekly: '0.00004128', limit_remaining: '0.00003624' })
  })

  it('a credit limit without reset is all the user may spend; removing it (null) serves again at once', async () => {
    clock = Date.parse('2026-11-26T12:00:30.000Z')
    const { customer, keys } = await twoKeys()
    await t.gateway.admin.setUserLimits(customer.user.id, { credit_limit: 0.00003 })
    expect((await chat(keys[0])).status).toBe(200)
    const refused = await chat(keys[1])
    expect(refused.status).toBe(402)
    expect((await refused.json()).error.metadata).toMatchObject({ limit: 'user', credit_limit: '0.00003', available: '0.00001624' })
    const user = await t.gateway.admin.setUserLimits(customer.user.id, { credit_limit: null })
    expect(user.credit_limit).toBeUndefined()
    expect((await chat(keys[1])).status).toBe(200)
    expect(await me(keys[1])).toMatchObject({ credit_limit: null, limit_remaining: null, usage: '0.00002752' })
  })

  it('requests per minute: the UTC minute admits that many, then 429 with Retry-After until the next minute', async () => {
    clock = Date.parse('2026-11-26T12:00:30.000Z')
    const { customer, keys } = await twoKeys()
    await t.gateway.admin.setUserLimits(customer.user.id, { requests_per_minute: 2 })
    expect((await chat(keys[0])).status).toBe(200)
    expect((await chat(keys[1])).status).toBe(200)
    const refused = await chat(keys[0])
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('30')
    const error = (await refused.json()).error
    expect(error.type).toBe('rate_limited')
    expect(error.metadata).toEqual({ limit: 'user', limit_type: 'requests_per_minute', requests_per_minute: 2, resets_at: '2026-11-26T12:01:00.000Z' })
    expect(await me(keys[0])).toMatchObject({ requests_per_minute: 2, requests_this_minute: 2 })
    clock = Date.parse('2026-11-26T12:01:00.000Z')
    expect((await chat(keys[0])).status).toBe(200)
    expect(await me(keys[0])).toMatchObject({ requests_this_minute: 1 })
  })

  it('requests at once: 429 with Retry-After while the cap’s requests run, served again once one ends', async () => {
    clock = Date.parse('2026-11-26T12:00:30.000Z')
    const { customer, keys } = await twoKeys()
    await t.gateway.admin.setUserLimits(customer.user.id, { max_in_flight: 2 })
    let open!: () => void
    upstream.slowGate = new Promise<void>((resolve) => (open = resolve))
    try {
      const sent = upstream.requests.length
      const running = [chat(keys[0], 'fake/slow'), chat(keys[1], 'fake/slow')]
      await expect.poll(() => upstream.requests.length - sent).toBe(2)
      expect(await me(keys[0])).toMatchObject({ max_in_flight: 2, in_flight: 2 })
      const refused = await chat(keys[0])
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('1')
      expect((await refused.json()).error.metadata).toEqual({ limit: 'user', limit_type: 'max_in_flight', max_in_flight: 2 })
      open()
      for (const res of await Promise.all(running)) expect(res.status).toBe(200)
    } finally {
      open()
      upstream.slowGate = undefined
    }
    expect(await me(keys[0])).toMatchObject({ in_flight: 0 })
    expect((await chat(keys[0])).status).toBe(200)
  })

  it('PATCH /users/{id} with a management key sets them (at once, past the authentication cache); bad values are 400', async () => {
    clock = Date.parse('2026-11-26T12:00:30.000Z')
    const { customer, keys } = await twoKeys()
    const manager = (await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'manager', management: true })).key
    const patch = (id: string, body: unknown, key = manager) =>
      t.request(`/api/v1/users/${id}`, { method: 'PATCH', headers: { ...json, ...bearer(key) }, body: JSON.stringify(body) })
    // Resolved once, so the key is in the authentication cache when the limits change.
    expect((await chat(keys[0])).status).toBe(200)

    const res = await patch(customer.user.id, { credit_limit: '1.50', limit_reset: 'weekly', requests_per_minute: 1, max_in_flight: 3 })
    expect(res.status).toBe(200)
    expect((await res.json()).data).toEqual({
      id: customer.user.id,
      email: customer.user.email,
      org_id: customer.user.org_id,
      plan: customer.user.plan,
      disabled: false,
      limits: {
        credit_limit: '1.5',
        limit_reset: 'weekly',
        requests_per_minute: 1,
        max_in_flight: 3,
        tokens_per_minute: null,
        tokens_per_day: null,
        spend_limit: null,
        spend_window: null,
        usage: COST,
        usage_daily: COST,
        usage_weekly: COST,
        usage_monthly: COST,
        limit_remaining: '1.49998624',
        requests_this_minute: 0,
        in_flight: 0,
      },
    })
    // Requests count in their minute while the user has a rate (the one above did not): one more, then 429.
    expect((await chat(keys[1])).status).toBe(200)
    expect((await chat(keys[0])).status).toBe(429)

    for (const [body, param] of [
      [{ requests_per_minute: 0 }, 'requests_per_minute'],
      [{ max_in_flight: 1.5 }, 'max_in_flight'],
      [{ credit_limit: '-1' }, 'credit_limit'],
      [{ credit_limit: '0' }, 'credit_limit'],
      [{ limit_reset: 'hourly' }, 'limit_reset'],
      [{ burst: 3 }, 'burst'],
    ] as const) {
      const bad = await patch(customer.user.id, body)
      expect(bad.status, JSON.stringify(body)).toBe(400)
      const error = (await bad.json()).error
      expect(error.type).toBe('invalid_request')
      expect(error.param ?? error.message, JSON.stringify(body)).toContain(param)
    }
    // Unchanged by the refused ones; null removes one.
    const cleared = await patch(customer.user.id, { requests_per_minute: null })
    expect((await cleared.json()).data.limits).toMatchObject({ credit_limit: '1.5', requests_per_minute: null, max_in_flight: 3, requests_this_minute: 1 })
    expect((await chat(keys[1])).status).toBe(200)

    // Another org's user is 404; an API key (not a management key) is refused.
    const other = await createCustomer(t.gateway, { credits: '1' })
    expect((await patch(other.user.id, { max_in_flight: 1 })).status).toBe(404)
    expect((await patch('no-such-user', { max_in_flight: 1 })).status).toBe(404)
    expect((await patch(customer.user.id, { max_in_flight: 1 }, keys[0])).status).toBe(403)
    expect((await t.gateway.admin.getUser(other.user.id))!.max_in_flight).toBeUndefined()
  })

  it('the admin API validates: a bad value throws a 400 naming it, an unknown user a 404', async () => {
    const { customer } = await twoKeys()
    const cases: [Record<string, unknown>, string][] = [
      [{ credit_limit: 'ten' }, 'credit_limit'],
      [{ requests_per_minute: -2 }, 'requests_per_minute'],
      [{ limit_reset: 'yearly' }, 'limit_reset'],
      [{ max_in_flight: 2_000_000 }, 'max_in_flight'],
    ]
    for (const [limits, param] of cases) {
      const error = await t.gateway.admin.setUserLimits(customer.user.id, limits as never).catch((e) => e)
      expect(error.status).toBe(400)
      expect(error.param).toBe(param)
    }
    expect((await t.gateway.admin.setUserLimits('missing', { max_in_flight: 1 }).catch((e) => e)).status).toBe(404)
    const user = await t.gateway.admin.setUserLimits(customer.user.id, { credit_limit: '2.50', limit_reset: 'monthly', requests_per_minute: 30 })
    expect(user).toMatchObject({ credit_limit: '2.5', limit_reset: 'monthly', requests_per_minute: 30, email: customer.user.email, plan: customer.user.plan })
    expect(await t.gateway.admin.getUser(customer.user.id)).toEqual(user)
  })
})
