import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey } from '../../src/index'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('GET /api/v1/me', () => {
  let t: TestGateway
  let now = Date.parse('2026-11-25T12:00:00.000Z')
  beforeAll(async () => {
    t = await startGateway({ clock: () => now, keyTtlSeconds: 3600 })
  })
  afterAll(() => t.close())

  it('answers every field of /me (docs/api.md) for a key issued through the admin API', async () => {
    const org = await t.gateway.admin.createOrg({ name: 'Acme Robotics' })
    const user = await t.gateway.admin.createUser({ email: 'Ada@Example.com', orgId: org.id, plan: 'pay_as_you_go' })
    await t.gateway.admin.addCredits(org.id, '25.5')
    await t.gateway.admin.chargeCredits(org.id, '0.000000000123')
    const { key } = await t.gateway.admin.issueKey({ userId: user.id, label: 'laptop' })
    expect(key).toMatch(/^sk-service-v1-[0-9a-f]{64}$/)

    const res = await t.request('/api/v1/me', { headers: { authorization: `Bearer ${key}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/)
    const body = await res.json()
    expect(body).toEqual({
      user_id: user.id,
      email: 'ada@example.com',
      org_name: 'Acme Robotics',
      org_id: org.id,
      plan: 'pay_as_you_go',
      credits: { balance: '25.499999999877', total_credits: '25.5', total_usage: '0.000000000123' },
      // The user's own limits and usage (docs/first-party.md#budgets-for-users-and-end-users): none set.
      limits: {
        credit_limit: null,
        limit_reset: null,
        requests_per_minute: null,
        max_in_flight: null,
        tokens_per_minute: null,
        tokens_per_day: null,
        spend_limit: null,
        spend_window: null,
        usage: '0',
        usage_daily: '0',
        usage_weekly: '0',
        usage_monthly: '0',
        limit_remaining: null,
        requests_this_minute: 0,
        in_flight: null,
      },
    })
    expect(body.org_id).toMatch(UUID)
    expect(Object.keys(body)).toEqual(['user_id', 'email', 'org_name', 'org_id', 'plan', 'credits', 'limits'])
  })

  it('gives users created without an org their own org and the default plan', async () => {
    const { user, auth } = await createCustomer(t.gateway, { email: 'solo@example.com' })
    const body = await (await t.request('/api/v1/me', { headers: auth })).json()
    expect(body.org_name).toBe('solo@example.com')
    expect(body.org_id).toBe(user.org_id)
    expect(body.plan).toBe('free')
    expect(body.credits).toEqual({ balance: '0', total_credits: '0', total_usage: '0' })
  })

  it('answers 401 in the envelope for every bad key', async () => {
    const { key } = await createCustomer(t.gateway)
    const cases: [string, Record<string, string>, RegExp][] = [
      ['missing header', {}, /Missing Authorization header/],
      ['not bearer', { authorization: `Basic ${key}` }, /Malformed/],
      ['empty bearer', { authorization: 'Bearer ' }, /Malformed/],
      ['two tokens', { authorization: `Bearer ${key} extra` }, /Malformed/],
      ['wrong prefix', { authorization: `Bearer sk-other-${key.slice(14)}` }, /Invalid API key/],
      ['short key', { authorization: `Bearer ${key.slice(0, -1)}` }, /Invalid API key/],
      ['uppercase hex', { authorization: `Bearer ${key.slice(0, 14)}${key.slice(14).toUpperCase()}` }, /Invalid API key/],
      ['unknown key', { authorization: `Bearer sk-service-v1-${'0'.repeat(64)}` }, /Invalid API key/],
    ]
    for (const [name, headers, message] of cases) {
      const res = await t.request('/api/v1/me', { headers })
      expect(res.status, name).toBe(401)
      const body = await res.json()
      expect(body.error.code, name).toBe(401)
      expect(body.error.type, name).toBe('unauthorized')
      expect(body.error.message, name).toMatch(message)
      expect(JSON.stringify(body), name).not.toContain(key.slice(14))
    }
  })

  it('accepts the scheme case-insensitively', async () => {
    const { key } = await createCustomer(t.gateway)
    expect((await t.request('/api/v1/me', { headers: { authorization: `bearer ${key}` } })).status).toBe(200)
  })

  it('stops accepting a key once it is revoked, by key or by hash', async () => {
    const { key, user, auth } = await createCustomer(t.gateway)
    const second = await t.gateway.admin.issueKey({ userId: user.id })
    expect((await t.request('/api/v1/me', { headers: auth })).status).toBe(200)
    const revoked = await t.gateway.admin.revokeKey(key)
    expect(revoked.revoked).toBe(true)
    expect((await t.request('/api/v1/me', { headers: auth })).status).toBe(401)
    expect((await t.request('/api/v1/me', { headers: { authorization: `Bearer ${second.key}` } })).status).toBe(200)
    await t.gateway.admin.revokeKey(hashApiKey(second.key))
    expect((await t.request('/api/v1/me', { headers: { authorization: `Bearer ${second.key}` } })).status).toBe(401)
    expect(await t.gateway.admin.findUserByKey(key)).toBeNull()
  })

  it('lists a user’s keys without secrets, with last_used recorded', async () => {
    const { key, user, auth } = await createCustomer(t.gateway)
    await t.request('/api/v1/me', { headers: auth })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const keys = await t.gateway.admin.listKeys(user.id)
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatchObject({ hash: hashApiKey(key), user_id: user.id, label: 'test key', revoked: false, last_used: new Date(now).toISOString() })
    expect(JSON.stringify(keys)).not.toContain(key)
  })

  it('answers 403 for a disabled account and 401 once a key expires', async () => {
    const { user, auth } = await createCustomer(t.gateway)
    await t.gateway.admin.updateUser(user.id, { disabled: true })
    const res = await t.request('/api/v1/me', { headers: auth })
    expect(res.status).toBe(403)
    expect((await res.json()).error.type).toBe('forbidden')
    await t.gateway.admin.updateUser(user.id, { disabled: false })
    expect((await t.request('/api/v1/me', { headers: auth })).status).toBe(200)
    now += 3600 * 1000
    expect((await t.request('/api/v1/me', { headers: auth })).status).toBe(401)
    now -= 3600 * 1000
  })
})
