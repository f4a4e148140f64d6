import { createHash, randomBytes } from 'node:crypto'
import { OpenRouter } from '@openrouter/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { memoryKind, redisKind, type StorageKind } from '../helpers/storages'

const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
// 0.000001 USD a prompt token, 0.000002 a completion token; 0.86 EUR a USD: 0.00000086 and 0.00000172 EUR.
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const models: ProviderModel[] = ['gpt-test', 'slow'].map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing, maxCompletionTokens: 1000 }))
// A chat request below holds 11 prompt tokens (32 bytes / 3) × 0.00000086 + 10 completion tokens × 0.00000172 =
// 0.00002666 EUR, and is billed 8 prompt and 4 completion tokens ("Hello from gpt-test: hi"): 0.00001376 EUR.
const HOLD = '0.00002666'
const COST = '0.00001376'

type Customer = Awaited<ReturnType<typeof createCustomer>>

describe('API key management (GET|POST /keys, GET|PATCH|DELETE /keys/{hash}) with a management key', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  // Thursday 26 November 2026, noon UTC.
  let clock = Date.parse('2026-11-26T12:00:00.000Z')
  let owner: Customer
  let manager: string
  let other: Customer
  let otherManager: string

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    t = await startGateway({ clock: () => clock, providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })] })
    owner = await createCustomer(t.gateway, { credits: '5' })
    manager = (await t.gateway.admin.issueKey({ userId: owner.user.id, label: 'manager', management: true })).key
    other = await createCustomer(t.gateway, { credits: '5' })
    otherManager = (await t.gateway.admin.issueKey({ userId: other.user.id, label: 'other manager', management: true })).key
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  const call = (key: string, method: string, path: string, body?: unknown) =>
    t.request(`/api/v1${path}`, {
      method,
      headers: { ...bearer(key), ...(body === undefined ? {} : json) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  const chat = (key: string) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, ...bearer(key) },
      body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    })
  const create = async (body: Record<string, unknown>, key = manager) => {
    const res = await call(key, 'POST', '/keys', body)
    expect(res.status).toBe(201)
    return (await res.json()) as { key: string; data: any }
  }

  it('POST /keys answers the new key once, with its record in OpenRouter’s shape; it works at once', async () => {
    const created = await create({ name: 'Production', limit: 5, limit_reset: 'daily', include_byok_in_limit: true, expires_at: '2027-12-31T23:59:59Z' })
    expect(created.key).toMatch(/^sk-service-v1-[0-9a-f]{64}$/)
    expect(created.data).toEqual({
      hash: sha256(created.key),
      name: 'Production',
      label: 'Production',
      disabled: false,
      limit: 5,
      limit_remaining: 5,
      limit_reset: 'daily',
      include_byok_in_limit: true,
      usage: 0,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      byok_usage: 0,
      byok_usage_daily: 0,
      byok_usage_weekly: 0,
      byok_usage_monthly: 0,
      expires_at: '2027-12-31T23:59:59.000Z',
      creator_user_id: owner.user.id,
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
      created_at: '2026-11-26T12:00:00.000Z',
      updated_at: null,
      external_user: null,
      workspace_id: owner.user.org_id,
      user_id: owner.user.id,
      last_used: null,
    })
    const served = await chat(created.key)
    expect(served.status).toBe(200)
    expect((await served.json()).usage.cost_eur).toBe(Number(COST))
    // The key is never stored: GET shows the record, with the spending, and no key.
    const read = await call(manager, 'GET', `/keys/${created.data.hash}`)
    expect(read.status).toBe(200)
    const data = (await read.json()).data
    expect(data).toMatchObject({ hash: created.data.hash, usage: Number(COST), usage_daily: Number(COST), limit_remaining: 4.99998624 })
    expect(JSON.stringify(data)).not.toContain(created.key)

    // Defaults: no limit, no reset, no expiry; a limit as a decimal string; a member of the org as its creator.
    const plain = await create({ name: 'Plain' })
    expect(plain.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null, include_byok_in_limit: false, expires_at: null })
    const member = await t.gateway.admin.createUser({ email: `member-${Date.now()}@example.com`, orgId: owner.user.org_id })
    expect((await create({ name: 'Exact', limit: '0.1', creator_user_id: member.id })).data).toMatchObject({
      limit: 0.1,
      limit_remaining: 0.1,
      creator_user_id: member.id,
    })
  })

  it('POST /keys refuses what it cannot honour with 400, naming the field', async () => {
    const refused = async (body: unknown, param: string) => {
      const res = await call(manager, 'POST', '/keys', body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await res.json()).error.param).toBe(param)
    }
    await refused({}, 'name')
    await refused({ name: '  ' }, 'name')
    await refused({ name: 'x', limit: -1 }, 'limit')
    await refused({ name: 'x', limit: '1e3' }, 'limit')
    await refused({ name: 'x', limit: '0.0000000000001' }, 'limit')
    await refused({ name: 'x', limit_reset: 'hourly' }, 'limit_reset')
    await refused({ name: 'x', expires_at: '2027-12-31T23:59Z' }, 'expires_at')
    await refused({ name: 'x', expires_at: '2027-12-31T23:59:59+02:00' }, 'expires_at')
    await refused({ name: 'x', expires_at: '2026-11-26T11:59:59Z' }, 'expires_at')
    await refused({ name: 'x', creator_user_id: other.user.id }, 'creator_user_id')
    await refused({ name: 'x', workspace: 'w' }, 'workspace')
  })

  it('GET /keys lists the org’s API keys newest first (never management keys nor another org’s), 100 a page from offset', async () => {
    const customer = await createCustomer(t.gateway, { credits: '1' })
    const boss = (await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'boss', management: true })).key
    const hashes = [customer.record.hash]
    for (let i = 0; i < 101; i++) {
      clock += 1000
      hashes.push((await t.gateway.admin.issueKey({ userId: customer.user.id, label: `key ${i}` })).record.hash)
    }
    const page = async (query: string) => {
      const res = await call(boss, 'GET', `/keys${query}`)
      expect(res.status).toBe(200)
      return (await res.json()).data as any[]
    }
    const first = await page('')
    expect(first.length).toBe(100)
    expect(first.map((k) => k.hash)).toEqual(hashes.slice(2).reverse())
    expect(first[0]).toMatchObject({ name: 'key 100', disabled: false, usage: 0, workspace_id: customer.user.org_id })
    expect((await page('?offset=100')).map((k) => k.hash)).toEqual([hashes[1], hashes[0]])
    expect(await page('?offset=102')).toEqual([])
    expect((await call(boss, 'GET', '/keys?offset=-1')).status).toBe(400)
    expect((await call(boss, 'GET', '/keys?include_disabled=maybe')).status).toBe(400)

    // Disabled (and revoked) keys only with include_disabled=true.
    expect((await call(boss, 'PATCH', `/keys/${hashes[101]}`, { disabled: true })).status).toBe(200)
    await t.gateway.admin.revokeKey(hashes[100])
    expect((await page('')).map((k) => k.hash)).toEqual(hashes.slice(0, 100).reverse())
    const all = await page('?include_disabled=true')
    expect(all.slice(0, 2).map((k) => [k.hash, k.disabled])).toEqual([
      [hashes[101], true],
      [hashes[100], true],
    ])
  })

  it('GET, PATCH and DELETE /keys/{hash}: another org’s key, a management key or an unknown hash is 404; a malformed hash 400', async () => {
    const theirs = await t.gateway.admin.issueKey({ userId: other.user.id, label: 'theirs' })
    const managerHash = sha256(manager)
    for (const hash of [theirs.record.hash, managerHash, 'f'.repeat(64)]) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'taken' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await call(manager, method, `/keys/${hash}`, body)
        expect(res.status, `${method} ${hash}`).toBe(404)
        expect((await res.json()).error.type).toBe('not_found')
      }
    }
    // The other org's own management key does reach it; and the key was not changed by the refused calls.
    expect((await (await call(otherManager, 'GET', `/keys/${theirs.record.hash}`)).json()).data).toMatchObject({ name: 'theirs', disabled: false })
    expect((await chat(theirs.key)).status).toBe(200)
    expect((await call(manager, 'GET', '/keys/not-a-hash')).status).toBe(400)
  })

  it('PATCH /keys/{hash} changes name, limit, reset and BYOK rule; disabled → 401 on use, enabled again → served; a revoked key stays revoked (409)', async () => {
    const { key, data } = await create({ name: 'Before' })
    clock += 60_000
    const patch = async (body: unknown) => {
      const res = await call(manager, 'PATCH', `/keys/${data.hash}`, body)
      expect(res.status, JSON.stringify(body)).toBe(200)
      return (await res.json()).data
    }
    expect(await patch({ name: 'After', limit: '2.5', limit_reset: 'weekly', include_byok_in_limit: true })).toMatchObject({
      name: 'After',
      label: 'After',
      limit: 2.5,
      limit_remaining: 2.5,
      limit_reset: 'weekly',
      include_byok_in_limit: true,
      updated_at: new Date(clock).toISOString(),
    })
    expect(await patch({ limit: null, limit_reset: null })).toMatchObject({
      limit: null,
      limit_remaining: null,
      limit_reset: null,
      include_byok_in_limit: true,
    })

    expect(await patch({ disabled: true })).toMatchObject({ disabled: true })
    const refused = await chat(key)
    expect(refused.status).toBe(401)
    expect((await refused.json()).error.type).toBe('unauthorized')
    expect((await t.request('/api/v1/key', { headers: bearer(key) })).status).toBe(401)
    expect(await patch({ disabled: false })).toMatchObject({ disabled: false })
    expect((await chat(key)).status).toBe(200)

    await t.gateway.admin.revokeKey(key)
    const conflict = await call(manager, 'PATCH', `/keys/${data.hash}`, { disabled: false })
    expect(conflict.status).toBe(409)
    expect((await chat(key)).status).toBe(401)
    expect((await call(manager, 'PATCH', `/keys/${data.hash}`, { limit: -2 })).status).toBe(400)
    expect((await call(manager, 'PATCH', `/keys/${data.hash}`, { hash: 'x' })).status).toBe(400)
  })

  it('DELETE /keys/{hash}: { deleted: true }; the key answers 401 and is gone from the routes', async () => {
    const { key, data } = await create({ name: 'Doomed' })
    expect((await chat(key)).status).toBe(200)
    const res = await call(manager, 'DELETE', `/keys/${data.hash}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ deleted: true })
    expect((await chat(key)).status).toBe(401)
    expect((await call(manager, 'GET', `/keys/${data.hash}`)).status).toBe(404)
    expect((await call(manager, 'DELETE', `/keys/${data.hash}`)).status).toBe(404)
    const listed = (await (await call(manager, 'GET', '/keys?include_disabled=true')).json()).data as any[]
    expect(listed.map((k) => k.hash)).not.toContain(data.hash)
  })

  it('an expired key answers 401 like a revoked one', async () => {
    const { key } = await create({ name: 'Brief', expires_at: new Date(clock + 60_000).toISOString() })
    expect((await chat(key)).status).toBe(200)
    clock += 61_000
    const res = await chat(key)
    expect(res.status).toBe(401)
    expect((await res.json()).error.type).toBe('unauthorized')
  })

  it('403 between kinds: API keys cannot manage keys, management keys can do nothing else', async () => {
    const { data } = await create({ name: 'Target' })
    for (const [method, path, body] of [
      ['GET', '/keys', undefined],
      ['POST', '/keys', { name: 'x' }],
      ['GET', `/keys/${data.hash}`, undefined],
      ['PATCH', `/keys/${data.hash}`, { name: 'x' }],
      ['DELETE', `/keys/${data.hash}`, undefined],
    ] as const) {
      const res = await call(owner.key, method, path, body)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect((await res.json()).error).toMatchObject({ type: 'forbidden', message: 'Managing API keys needs a management key' })
    }
    const callback = {
      callback_url: 'https://app.example/cb',
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    }
    for (const [method, path, body] of [
      ['GET', '/me', undefined],
      ['POST', '/chat/completions', { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'hi' }] }],
      ['GET', '/byok', undefined],
      ['GET', '/byok/usage', undefined],
      ['POST', '/auth/keys/code', callback],
    ] as const) {
      const res = await call(manager, method, path, body)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect((await res.json()).error.type).toBe('forbidden')
    }
    // A management key has no credit limit.
    await expect(t.gateway.admin.issueKey({ userId: owner.user.id, management: true, creditLimit: '1' })).rejects.toMatchObject({ status: 400 })
  })

  it('OpenRouter’s own SDK (@openrouter/sdk) manages keys and reads GET /key unchanged', async () => {
    const sdk = new OpenRouter({ apiKey: manager, serverURL: `${t.url}/api/v1` })
    const current = await sdk.apiKeys.getCurrentKeyMetadata()
    expect(current.data).toMatchObject({
      label: 'manager',
      isManagementKey: true,
      isProvisioningKey: true,
      limit: null,
      usage: 0,
      organizationId: owner.user.org_id,
    })

    const created = await sdk.apiKeys.create({
      requestBody: { name: 'From the SDK', limit: 3, limitReset: 'monthly', includeByokInLimit: true, expiresAt: new Date('2027-12-31T23:59:59Z') },
    })
    expect(created.key).toMatch(/^sk-service-v1-/)
    expect(created.data).toMatchObject({
      hash: sha256(created.key),
      name: 'From the SDK',
      limit: 3,
      limitRemaining: 3,
      limitReset: 'monthly',
      includeByokInLimit: true,
      disabled: false,
      workspaceId: owner.user.org_id,
    })
    expect(created.data.expiresAt).toEqual(new Date('2027-12-31T23:59:59Z'))
    expect((await chat(created.key)).status).toBe(200)

    const got = await sdk.apiKeys.get({ hash: created.data.hash })
    expect(got.data).toMatchObject({ usage: Number(COST), usageDaily: Number(COST), limitRemaining: 2.99998624 })
    const listed = await sdk.apiKeys.list({ offset: 0, includeDisabled: false })
    expect(listed.data.map((k) => k.hash)).toContain(created.data.hash)
    const updated = await sdk.apiKeys.update({ hash: created.data.hash, requestBody: { name: 'Renamed', disabled: true, limit: null, limitReset: null } })
    expect(updated.data).toMatchObject({ name: 'Renamed', disabled: true, limit: null, limitReset: null })
    expect((await chat(created.key)).status).toBe(401)
    expect(await sdk.apiKeys.delete({ hash: created.data.hash })).toEqual({ deleted: true })

    const own = await new OpenRouter({ apiKey: owner.key, serverURL: `${t.url}/api/v1` }).apiKeys.getCurrentKeyMetadata()
    expect(own.data).toMatchObject({ label: 'test key', isManagementKey: false, creatorUserId: owner.user.id })
  })

  it('limit_reset daily: at most `limit` a UTC day (402 past it, naming when it starts over), allowed again the next day', async () => {
    clock = Date.parse('2026-11-26T22:00:00.000Z')
    // Two requests fit (each holds 0.00002666 and is billed 0.00001376): 0.00005 − 0.00002752 < one hold.
    const { key, data } = await create({ name: 'Daily', limit: 0.00005, limit_reset: 'daily' })
    expect((await chat(key)).status).toBe(200)
    expect((await chat(key)).status).toBe(200)
    clock = Date.parse('2026-11-26T23:59:59.000Z')
    const refused = await chat(key)
    expect(refused.status).toBe(402)
    const error = (await refused.json()).error
    expect(error.type).toBe('insufficient_credits')
    expect(error.message).toContain('its daily limit starts over at 2026-11-27T00:00:00.000Z')
    expect(error.metadata).toMatchObject({
      required: HOLD,
      available: '0.00002248',
      credit_limit: '0.00005',
      limit_reset: 'daily',
      limit_resets_at: '2026-11-27T00:00:00.000Z',
    })

    clock = Date.parse('2026-11-27T00:00:00.000Z')
    expect((await chat(key)).status).toBe(200)
    const read = (await (await call(manager, 'GET', `/keys/${data.hash}`)).json()).data
    expect(read).toMatchObject({ usage: 0.00004128, usage_daily: 0.00001376, usage_weekly: 0.00004128, limit_remaining: 0.00003624 })
    clock = Date.parse('2026-11-26T12:00:00.000Z')
  })
})

/** Two gateway instances over one storage: a key's daily limit holds against concurrent requests on both. */
function describeConcurrency(name: string, makeKind: () => StorageKind) {
  describe(`${name}: two instances over one storage never overspend a daily limit`, () => {
    let kind: StorageKind
    let upstream: FakeOpenAI
    let a: TestGateway
    let b: TestGateway
    let clock = Date.parse('2026-11-26T12:00:00.000Z')

    beforeAll(async () => {
      kind = makeKind()
      upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 300 })
      const options = () => ({
        storage: kind.open(),
        clock: () => clock,
        providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })],
      })
      a = await startGateway(options())
      b = await startGateway(options())
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
      await upstream?.close()
      await kind?.cleanup()
    })

    it(`${name}: 30 concurrent requests against a daily limit of three holds: the day's usage never passes it, exactly billed`, async () => {
      const customer = await createCustomer(a.gateway, { credits: '5' })
      const manager = (await a.gateway.admin.issueKey({ userId: customer.user.id, management: true })).key
      // 0.0001 covers three holds of 0.00002666 (0.00007998), not four.
      const created = await b.request('/api/v1/keys', {
        method: 'POST',
        headers: { ...json, ...bearer(manager) },
        body: JSON.stringify({ name: 'Shared', limit: '0.0001', limit_reset: 'daily' }),
      })
      expect(created.status).toBe(201)
      const { key, data } = await created.json()
      const body = JSON.stringify({ model: 'fake/slow', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? a : b).request('/api/v1/chat/completions', { method: 'POST', headers: { ...json, ...bearer(key) }, body }),
        ),
      )
      const statuses = answers.map((res) => res.status)
      const served = answers.filter((res) => res.status === 200)
      expect(
        statuses.every((s) => s === 200 || s === 402),
        statuses.join(','),
      ).toBe(true)
      // Every request overlaps the first three (each takes 300 ms upstream): three are served, whatever the load.
      expect(served.length).toBeGreaterThanOrEqual(3)
      // Each is billed 8 prompt and 4 completion tokens ("Hello from slow: hi"): 0.00001376. Even with earlier ones billed
      // before later ones arrive, a seventh's hold no longer fits: 6 × 0.00001376 + 0.00002666 > 0.0001.
      expect(served.length).toBeLessThanOrEqual(6)
      await Promise.all(answers.map((res) => res.json()))

      const read = async (g: TestGateway) => (await (await g.request(`/api/v1/keys/${data.hash}`, { headers: bearer(manager) })).json()).data
      const spent = toUnits(COST) * BigInt(served.length)
      for (const g of [a, b]) {
        const info = await read(g)
        expect(toUnits(String(info.usage_daily))).toBe(spent)
        expect(toUnits(String(info.usage))).toBe(spent)
        expect(toUnits(String(info.usage_daily))).toBeLessThanOrEqual(toUnits('0.0001'))
      }
      const records = (await a.gateway.context.usage.list(customer.user.org_id)).filter((r) => r.key_hash === data.hash)
      expect(records.length).toBe(served.length)
      expect(records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)).toBe(spent)
      expect(toUnits((await a.gateway.admin.getCredits(customer.user.org_id)).total_usage)).toBe(spent)

      // The next UTC day it serves again, on either instance.
      clock = Date.parse('2026-11-27T00:00:01.000Z')
      const next = await a.request('/api/v1/chat/completions', { method: 'POST', headers: { ...json, ...bearer(key) }, body })
      expect(next.status).toBe(200)
      await next.json()
      expect((await read(b)).usage_daily).toBe(Number(COST))
    })

    it(`${name}: concurrent PATCHes of different fields on both instances never undo each other`, async () => {
      const customer = await createCustomer(a.gateway, { credits: '1' })
      const manager = (await a.gateway.admin.issueKey({ userId: customer.user.id, management: true })).key
      for (let round = 0; round < 5; round++) {
        const { record } = await a.gateway.admin.issueKey({ userId: customer.user.id, label: `round ${round}` })
        const patch = (g: TestGateway, body: unknown) =>
          g.request(`/api/v1/keys/${record.hash}`, { method: 'PATCH', headers: { ...json, ...bearer(manager) }, body: JSON.stringify(body) })
        const answers = await Promise.all([
          patch(a, { name: `renamed ${round}` }),
          patch(b, { disabled: true }),
          patch(a, { limit: 3 }),
          patch(b, { limit_reset: 'monthly' }),
          patch(a, { include_byok_in_limit: true }),
        ])
        expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200])
        const stored = (await a.gateway.context.accounts.getKey(record.hash))!
        expect(stored).toMatchObject({
          label: `renamed ${round}`,
          disabled: true,
          credit_limit: '3',
          limit_reset: 'monthly',
          include_byok_in_limit: true,
          revoked: false,
        })
      }
    })
  })
}

describeConcurrency('memory', memoryKind)
const REDIS_URL = process.env.REDIS_URL
if (REDIS_URL) describeConcurrency('redis', () => redisKind(REDIS_URL))
else describe.skip('redis (set REDIS_URL to run)', () => it('two instances over Redis', () => {}))
