import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const UPSTREAM_KEY = 'sk-up'
const CUSTOMER_UPSTREAM_KEY = 'sk-customer-own'
// 0.000001 USD a prompt token, 0.000002 a completion token; 0.86 EUR a USD: 0.00000086 and 0.00000172 EUR.
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
// A request below: 8 prompt tokens and 4 completion tokens ("Hello from gpt-test: hi") upstream, so
// 8 × 0.00000086 + 4 × 0.00000172 = 0.00001376 EUR.
const COST = 0.00001376

/** The number written in a JSON body, as its exact text. */
const numberIn = (raw: string, field: string) => new RegExp(`"${field}":(-?[0-9.]+)`).exec(raw)?.[1]

describe('GET /api/v1/key: the calling key in OpenRouter’s shape, with its usage per UTC day, week and month', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  // Thursday 26 November 2026, noon UTC: its week began on Monday the 23rd.
  let clock = Date.parse('2026-11-26T12:00:00.000Z')

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: [UPSTREAM_KEY, CUSTOMER_UPSTREAM_KEY] })
    t = await startGateway({
      clock: () => clock,
      rateLimits: { key: { requests: 1000, windowSeconds: 60 } },
      byok: { freeRequestAllowance: 0 },
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up',
          baseURL: upstream.url,
          apiKey: UPSTREAM_KEY,
          byokSupported: true,
          models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing }],
        }),
      ],
    })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  const chat = (key: string) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, ...bearer(key) },
      body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    })
  const served = async (key: string) => {
    const res = await chat(key)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.usage.cost_eur).toBe(COST)
  }
  const keyInfo = async (key: string) => {
    const res = await t.request('/api/v1/key', { headers: bearer(key) })
    expect(res.status).toBe(200)
    const raw = await res.text()
    return { raw, data: JSON.parse(raw).data }
  }

  it('answers every field OpenRouter’s clients read, with concrete values', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const { data } = await keyInfo(customer.key)
    expect(data).toEqual({
      label: 'test key',
      limit: null,
      limit_remaining: null,
      limit_reset: null,
      include_byok_in_limit: false,
      usage: 0,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      byok_usage: 0,
      byok_usage_daily: 0,
      byok_usage_weekly: 0,
      byok_usage_monthly: 0,
      expires_at: null,
      creator_user_id: customer.user.id,
      // The key's tokens, spend and requests limits (docs/limits.md#tokens-spend-and-requests-in-flight): none set.
      tokens_per_minute: null,
      tokens_per_day: null,
      spend_limit: null,
      spend_window: null,
      requests_per_minute: null,
      max_in_flight: null,
      minted_by: null,
      // No built-in rules (docs/policies.md#built-in-rules).
      allowed_models: null,
      allowed_providers: null,
      max_price: null,
      enforce_zdr: false,
      data_collection: null,
      redact: null,
      is_free_tier: false,
      is_management_key: false,
      is_provisioning_key: false,
      organization_id: customer.user.org_id,
      workspace_id: customer.user.org_id,
      allowed_data_regions: ['global'],
      free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
      rate_limit: { requests: 1000, interval: '60s', note: 'Requests this key may make per interval (429 beyond)' },
      // The key's user's limits and the org's end users' (docs/first-party.md#budgets-for-users-and-end-users): none set.
      user_limit: null,
      user_limit_remaining: null,
      user_limit_reset: null,
      user_usage: 0,
      user_requests_per_minute: null,
      user_max_in_flight: null,
      end_user_limits: null,
    })

    // An org that was never given credits is OpenRouter's free tier.
    const free = await createCustomer(t.gateway)
    expect((await keyInfo(free.key)).data.is_free_tier).toBe(true)
  })

  it('counts usage exactly per UTC day, week (from Monday) and month, across days', async () => {
    clock = Date.parse('2026-11-26T12:00:00.000Z')
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const { key, record } = await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'daily', creditLimit: '0.0001', limitReset: 'daily' })

    await served(key)
    await served(key)
    let info = await keyInfo(key)
    expect(numberIn(info.raw, 'usage')).toBe('0.00002752')
    expect(numberIn(info.raw, 'usage_daily')).toBe('0.00002752')
    expect(numberIn(info.raw, 'usage_weekly')).toBe('0.00002752')
    expect(numberIn(info.raw, 'usage_monthly')).toBe('0.00002752')
    expect(numberIn(info.raw, 'limit')).toBe('0.0001')
    expect(numberIn(info.raw, 'limit_remaining')).toBe('0.00007248')
    expect(info.data.limit_reset).toBe('daily')

    // Friday the 27th: a new day, the same week and month.
    clock = Date.parse('2026-11-27T00:00:05.000Z')
    info = await keyInfo(key)
    expect(info.data).toMatchObject({ usage: 0.00002752, usage_daily: 0, usage_weekly: 0.00002752, usage_monthly: 0.00002752, limit_remaining: 0.0001 })
    await served(key)
    info = await keyInfo(key)
    expect(numberIn(info.raw, 'usage')).toBe('0.00004128')
    expect(numberIn(info.raw, 'usage_daily')).toBe('0.00001376')
    expect(numberIn(info.raw, 'usage_weekly')).toBe('0.00004128')
    expect(numberIn(info.raw, 'usage_monthly')).toBe('0.00004128')
    expect(numberIn(info.raw, 'limit_remaining')).toBe('0.00008624')

    // Monday the 30th: a new week, the same month; then 1 December: a new month.
    clock = Date.parse('2026-11-30T08:00:00.000Z')
    expect((await keyInfo(key)).data).toMatchObject({ usage: 0.00004128, usage_daily: 0, usage_weekly: 0, usage_monthly: 0.00004128 })
    clock = Date.parse('2026-12-01T00:00:00.000Z')
    expect((await keyInfo(key)).data).toMatchObject({ usage: 0.00004128, usage_daily: 0, usage_weekly: 0, usage_monthly: 0 })

    // The usage is what the requests were billed, exactly: the key's usage records and the org's credits.
    const records = (await t.gateway.context.usage.list(customer.user.org_id)).filter((r) => r.key_hash === record.hash)
    expect(records.length).toBe(3)
    expect(records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)).toBe(toUnits('0.00004128'))
    expect((await t.gateway.admin.getCredits(customer.user.org_id)).total_usage).toBe('0.00004128')
    clock = Date.parse('2026-11-26T12:00:00.000Z')
  })

  it('a key minted by a key counts in its parent’s usage too', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const parent = await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'parent' })
    const child = await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'child' })
    // Mint by hand: the child's record names its parent, as the code exchange writes it.
    await t.gateway.context.accounts.updateKey(child.record.hash, (r) => ({ ...r, ancestors: [{ hash: parent.record.hash, credit_limit: null }] }))
    await served(child.key)
    expect((await keyInfo(child.key)).data).toMatchObject({ usage: COST, usage_daily: COST })
    expect((await keyInfo(parent.key)).data).toMatchObject({ usage: COST, usage_daily: COST })
  })

  it('BYOK: the platform fee is usage, the upstream cost is byok_usage; include_byok_in_limit counts it against the limit', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...json, ...customer.auth },
      body: JSON.stringify({ provider: 'up', key: CUSTOMER_UPSTREAM_KEY, always_use: true }),
    })
    expect(created.status).toBe(201)
    const { key } = await t.gateway.admin.issueKey({
      userId: customer.user.id,
      label: 'byok',
      creditLimit: '0.00003',
      limitReset: 'daily',
      includeByokInLimit: true,
    })
    const res = await chat(key)
    expect(res.status).toBe(200)
    expect((await res.json()).usage.cost_eur).toBe(0.000000688) // 5 % of 0.00001376
    const info = await keyInfo(key)
    expect(numberIn(info.raw, 'usage')).toBe('0.000000688')
    expect(numberIn(info.raw, 'byok_usage')).toBe('0.00001376')
    expect(numberIn(info.raw, 'byok_usage_daily')).toBe('0.00001376')
    expect(numberIn(info.raw, 'byok_usage_weekly')).toBe('0.00001376')
    expect(numberIn(info.raw, 'byok_usage_monthly')).toBe('0.00001376')
    // 0.00003 − 0.000000688 − 0.00001376
    expect(numberIn(info.raw, 'limit_remaining')).toBe('0.000015552')
    expect(info.data.include_byok_in_limit).toBe(true)
    // A BYOK hold with the upstream cost counted (0.00002666 + 5 %) no longer fits what is left: 402.
    const refused = await chat(key)
    expect(refused.status).toBe(402)
    expect((await refused.json()).error.metadata).toMatchObject({ credit_limit: '0.00003', limit_reset: 'daily', limit_resets_at: '2026-11-27T00:00:00.000Z' })
  })

  it('takes management keys too; a missing, disabled or unknown key answers 401', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const management = await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'manager', management: true })
    expect((await keyInfo(management.key)).data).toMatchObject({ label: 'manager', is_management_key: true, is_provisioning_key: true, usage: 0, limit: null })

    expect((await t.request('/api/v1/key')).status).toBe(401)
    expect((await t.request('/api/v1/key', { headers: bearer(`sk-service-v1-${'0'.repeat(64)}`) })).status).toBe(401)
    await t.gateway.context.accounts.updateKey(customer.record.hash, (r) => ({ ...r, disabled: true }))
    const res = await t.request('/api/v1/key', { headers: customer.auth })
    expect(res.status).toBe(401)
    expect((await res.json()).error.type).toBe('unauthorized')
  })
})
