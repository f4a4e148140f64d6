import { decodeProtectedHeader } from 'jose'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createGateway, demo, hashApiKey, openaiCompatible, type Gateway } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'
import { decimalText, readSse, roundUnits, units } from '../helpers/sse'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
/** A small JSON number as its plain decimal text (8.6e-7 → "0.00000086"). */
const plain = (n: number) => decimalText(units(n.toFixed(12)))
const SERVICE_ALPHA = 'sk-service-alpha-0000'
const SERVICE_BETA = 'sk-service-beta-0000'

describe('BYOK', () => {
  let alpha: FakeOpenAI
  let beta: FakeOpenAI
  let storage: ReturnType<typeof createStorage>
  let t: TestGateway

  const providers = () => [
    openaiCompatible({
      slug: 'alpha',
      name: 'Alpha',
      baseURL: alpha.url,
      apiKey: SERVICE_ALPHA,
      byokSupported: true,
      models: [
        { id: 'byok/model', upstreamId: 'gpt-test', pricing },
        { id: 'byok/other', upstreamId: 'gpt-test', pricing },
      ],
    }),
    openaiCompatible({
      slug: 'beta',
      name: 'Beta',
      baseURL: beta.url,
      apiKey: SERVICE_BETA,
      byokSupported: true,
      models: [{ id: 'byok/model', upstreamId: 'gpt-test', pricing: { ...pricing, prompt: '0.000005' } }],
    }),
    openaiCompatible({
      slug: 'gamma',
      name: 'Gamma',
      baseURL: alpha.url,
      byokSupported: true,
      models: [{ id: 'byok/gamma-only', upstreamId: 'gpt-test', pricing }],
    }),
    demo(),
  ]

  beforeAll(async () => {
    // The fakes accept the service keys and any key whose behaviour a test sets in keyModes.
    alpha = await startFakeOpenAI({ apiKey: [SERVICE_ALPHA, 'sk-cust-good-1111', 'sk-cust-good-2222', 'sk-cust-rotated-3333'] })
    beta = await startFakeOpenAI({ apiKey: [SERVICE_BETA] })
    storage = createStorage({ driver: memoryDriver() })
    t = await startGateway({ storage, providers: providers(), byok: { freeRequestAllowance: 2, platformFeeRate: '0.05', settlementIntervalSeconds: 0 } })
  })
  afterAll(async () => {
    await t.close()
    await alpha.close()
    await beta.close()
  })

  const call = (auth: Record<string, string>, method: string, path: string, body?: unknown) =>
    t.request(`/api/v1/byok${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : json) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  const chat = async (auth: Record<string, string>, model = 'byok/model', extra: Record<string, unknown> = {}) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...auth, ...json },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello byok' }], ...extra }),
    })
    return { status: res.status, body: await res.json() }
  }
  const lastKeyAt = (fake: FakeOpenAI) => fake.requests.at(-1)!.headers.authorization
  const fresh = async (credits = '5') => createCustomer(t.gateway, { credits })

  it('creates, lists, reads, updates and deletes credentials without ever returning the secret', async () => {
    const c = await fresh()
    const created = await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha', sort_order: 3 })
    expect(created.status).toBe(201)
    const { data } = await created.json()
    expect(data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      provider: 'alpha',
      name: 'Alpha',
      label: 'sk-…1111',
      allowed_api_key_hashes: [],
      allowed_models: [],
      allowed_user_ids: [],
      always_use: false,
      is_required: false,
      is_byok_only: false,
      declared_zdr: null,
      is_fallback: false,
      disabled: false,
      sort_order: 3,
      workspace_id: c.user.org_id,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_used: null,
    })
    const second = (
      await (await call(c.auth, 'POST', '', { key: 'sk-cust-good-2222', provider: 'beta', name: 'Team key', label: 'team', sort_order: 1 })).json()
    ).data
    const list = await (await call(c.auth, 'GET', '')).json()
    expect(list.total_count).toBe(2)
    expect(list.data.map((d: any) => d.id)).toEqual([second.id, data.id])
    expect((await (await call(c.auth, 'GET', '?provider=alpha')).json()).data.map((d: any) => d.id)).toEqual([data.id])
    expect(await (await call(c.auth, 'GET', '?limit=1&offset=1')).json()).toMatchObject({ total_count: 2, data: [{ id: data.id }] })
    expect((await (await call(c.auth, 'GET', `/${data.id.toUpperCase()}`)).json()).data.id).toBe(data.id)
    const patched = await (await call(c.auth, 'PATCH', `/${data.id}`, { disabled: true, allowed_models: ['byok/model'] })).json()
    expect(patched.data).toMatchObject({ disabled: true, allowed_models: ['byok/model'], label: 'sk-…1111', sort_order: 3 })
    expect((await call(c.auth, 'PATCH', `/${data.id}`, {})).status).toBe(200)
    const everything = JSON.stringify([data, second, list, patched])
    expect(everything).not.toContain('good-1111')
    expect(everything).not.toContain('good-2222')
    const deleted = await call(c.auth, 'DELETE', `/${data.id}`)
    expect(await deleted.json()).toEqual({ deleted: true })
    expect((await call(c.auth, 'GET', `/${data.id}`)).status).toBe(404)
    expect((await (await call(c.auth, 'GET', '')).json()).total_count).toBe(1)
  })

  it('validates strictly', async () => {
    const c = await fresh()
    const cases: [string, string, unknown, number, string | undefined][] = [
      ['POST', '', { key: 'sk-x', provider: 'alpha', colour: 'red' }, 400, 'colour'],
      ['POST', '', { key: 'sk-x', provider: 'nobody' }, 400, 'provider'],
      ['POST', '', { key: 'sk-x', provider: 'demo' }, 400, 'provider'],
      ['POST', '', { provider: 'alpha' }, 400, 'key'],
      ['POST', '', { key: 'sk-x', provider: 'alpha', allowed_api_key_hashes: ['nothex'] }, 400, 'allowed_api_key_hashes.0'],
      ['POST', '', { key: 'sk-x', provider: 'alpha', sort_order: 1.5 }, 400, 'sort_order'],
      ['PATCH', '/00000000-0000-0000-0000-000000000000', { provider: 'beta' }, 400, 'provider'],
      ['GET', '?limit=101', undefined, 400, 'limit'],
      ['GET', '/12345678-1234-1234-1234-123456789abc', undefined, 400, 'id'],
      ['GET', '/ffffffff-ffff-ffff-ffff-ffffffffffff', undefined, 404, undefined],
      ['POST', '/test', { key: 'sk-x', provider: 'nobody' }, 400, 'provider'],
    ]
    for (const [method, path, body, status, param] of cases) {
      const res = await call(c.auth, method, path, body)
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status)
      expect((await res.json()).error.param, `${method} ${path}`).toBe(param)
    }
  })

  it('keeps secrets encrypted at rest: a raw dump of the storage holds none, and the record is a JWE under the gateway key', async () => {
    const c = await fresh()
    const secret = 'sk-cust-very-secret-value-9876543210'
    await call(c.auth, 'POST', '', { key: secret, provider: 'alpha' })
    await call(c.auth, 'POST', '', { key: `${secret}-two`, provider: 'beta' })
    const dump: string[] = []
    for (const key of await storage.getKeys()) dump.push(key, JSON.stringify(await storage.getItem(key)), String(await storage.getItemRaw(key)))
    const text = dump.join('\n')
    expect(text).not.toContain('very-secret')
    expect(text).not.toContain('9876543210')
    const record = (await t.gateway.context.byok.records(c.user.org_id))[0]
    expect(decodeProtectedHeader(record.sealed_key)).toMatchObject({ alg: 'dir', enc: 'A256GCM', kid: expect.stringMatching(/^k[0-9a-f]{12}$/) })
    expect(await t.gateway.context.byok.secretOf(record)).toBe(secret)
  })

  it('uses the customer’s key first, marks the usage as BYOK, bills no upstream cost, and records last_used', async () => {
    const c = await fresh()
    const cred = (await (await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha' })).json()).data
    const before = await t.gateway.admin.getCredits(c.user.org_id)
    const { status, body } = await chat(c.auth)
    expect(status).toBe(200)
    expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-good-1111')
    expect(body.provider).toBe('Alpha')
    const { prompt_tokens: p, completion_tokens: n } = body.usage
    const upstream = BigInt(p) * 1_000_000n + BigInt(n) * 2_000_000n
    expect(body.usage).toMatchObject({ is_byok: true, cost: 0, cost_eur: 0 })
    expect(String(body.usage.cost_details.upstream_inference_cost)).toBe(decimalText(upstream))
    expect(await t.gateway.admin.getCredits(c.user.org_id)).toEqual(before)
    const read = (await (await call(c.auth, 'GET', `/${cred.id}`)).json()).data
    expect(read.last_used).toMatch(/^\d{4}-/)
  })

  it('tries credentials by sort_order, skips disabled and filtered ones, and honours allowed_api_key_hashes', async () => {
    const c = await fresh()
    alpha.keyModes['sk-cust-first-aaaa'] = 'gpt-test'
    alpha.keyModes['sk-cust-second-bbbb'] = 'gpt-test'
    alpha.keyModes['sk-cust-disabled-cccc'] = 'gpt-test'
    alpha.keyModes['sk-cust-other-model-dddd'] = 'gpt-test'
    await call(c.auth, 'POST', '', { key: 'sk-cust-second-bbbb', provider: 'alpha', sort_order: 2 })
    await call(c.auth, 'POST', '', { key: 'sk-cust-first-aaaa', provider: 'alpha', sort_order: 1 })
    await call(c.auth, 'POST', '', { key: 'sk-cust-disabled-cccc', provider: 'alpha', sort_order: 0, disabled: true })
    await call(c.auth, 'POST', '', { key: 'sk-cust-other-model-dddd', provider: 'alpha', sort_order: -1, allowed_models: ['byok/other'] })
    await chat(c.auth)
    expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-first-aaaa')
    await chat(c.auth, 'byok/other')
    expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-other-model-dddd')

    // allowed_api_key_hashes: the credential serves the one key of the user whose hash it holds.
    const second = await t.gateway.admin.issueKey({ userId: c.user.id })
    alpha.keyModes['sk-cust-hashed-eeee'] = 'gpt-test'
    await call(c.auth, 'POST', '', {
      key: 'sk-cust-hashed-eeee',
      provider: 'alpha',
      sort_order: -5,
      allowed_api_key_hashes: [hashApiKey(second.key).toUpperCase()],
    })
    await chat({ authorization: `Bearer ${second.key}` })
    expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-hashed-eeee')
    await chat(c.auth)
    expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-first-aaaa')
  })

  it('falls back from a failing customer key to the service key, and uses is_fallback keys only after the service key', async () => {
    const c = await fresh()
    alpha.keyModes['sk-cust-limited-ffff'] = 'fail-429'
    alpha.retryAfter = null
    await call(c.auth, 'POST', '', { key: 'sk-cust-limited-ffff', provider: 'alpha' })
    const sent = alpha.requests.length
    try {
      expect((await chat(c.auth)).body.usage.is_byok).toBe(false)
    } finally {
      alpha.retryAfter = undefined
    }
    // A 429 is retried on the same key (twice, by default), then the service key serves (docs/routing.md).
    const limited = 'Bearer sk-cust-limited-ffff'
    expect(alpha.requests.slice(sent).map((r) => r.headers.authorization)).toEqual([limited, limited, limited, `Bearer ${SERVICE_ALPHA}`])

    const d = await fresh()
    alpha.keyModes['sk-cust-backup-gggg'] = 'gpt-test'
    await call(d.auth, 'POST', '', { key: 'sk-cust-backup-gggg', provider: 'alpha', is_fallback: true })
    expect((await chat(d.auth)).body.usage.is_byok).toBe(false)
    expect(lastKeyAt(alpha)).toBe(`Bearer ${SERVICE_ALPHA}`)
    // When the service key fails, the fallback key takes over.
    alpha.keyModes[SERVICE_ALPHA] = 'fail-500'
    try {
      const { body } = await chat(d.auth, 'byok/model', { provider: { only: ['alpha'] } })
      expect(body.usage.is_byok).toBe(true)
      expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-backup-gggg')
    } finally {
      delete alpha.keyModes[SERVICE_ALPHA]
    }
  })

  it('never uses the service key of a provider for which a credential says always_use', async () => {
    const c = await fresh()
    alpha.keyModes['sk-cust-always-hhhh'] = 'fail-500'
    await call(c.auth, 'POST', '', { key: 'sk-cust-always-hhhh', provider: 'alpha', always_use: true })
    const sent = alpha.requests.length
    const { body } = await chat(c.auth)
    // Alpha is only tried with the customer's key; Beta's service key serves.
    expect(alpha.requests.slice(sent).map((r) => r.headers.authorization)).toEqual(['Bearer sk-cust-always-hhhh'])
    expect(body.provider).toBe('Beta')
    const only = await chat(c.auth, 'byok/model', { provider: { only: ['alpha'] } })
    expect(only.status).toBe(502)
    expect(alpha.requests.slice(sent).map((r) => r.headers.authorization)).not.toContain(`Bearer ${SERVICE_ALPHA}`)
  })

  it("takes and shows OpenRouter's fields: allowed_user_ids, is_required (= always_use), is_byok_only, declared_zdr, workspace_id (the org), nulls as no restriction", async () => {
    const c = await fresh()
    const created = await call(c.auth, 'POST', '', {
      key: 'sk-cust-good-1111',
      provider: 'alpha',
      name: null,
      allowed_models: null,
      allowed_api_key_hashes: null,
      allowed_user_ids: [c.user.id],
      is_required: true,
      declared_zdr: true,
      workspace_id: c.user.org_id,
    })
    expect(created.status).toBe(201)
    const { data } = await created.json()
    expect(data).toMatchObject({
      name: 'Alpha',
      allowed_models: [],
      allowed_api_key_hashes: [],
      allowed_user_ids: [c.user.id],
      always_use: true,
      is_required: true,
      is_byok_only: false,
      declared_zdr: true,
      workspace_id: c.user.org_id,
    })
    const patched = (
      await (await call(c.auth, 'PATCH', `/${data.id}`, { always_use: false, declared_zdr: null, allowed_user_ids: null, is_byok_only: true })).json()
    ).data
    expect(patched).toMatchObject({ always_use: false, is_required: false, declared_zdr: null, allowed_user_ids: [], is_byok_only: true })
    const refusals: [string, string, unknown, string][] = [
      ['POST', '', { key: 'sk-x', provider: 'alpha', always_use: true, is_required: false }, 'is_required'],
      ['POST', '', { key: 'sk-x', provider: 'alpha', workspace_id: '00000000-0000-4000-8000-000000000000' }, 'workspace_id'],
      ['POST', '', { key: 'sk-x', provider: 'alpha', is_byok_only: true, is_fallback: true }, 'is_byok_only'],
      ['PATCH', `/${data.id}`, { is_fallback: true }, 'is_byok_only'],
      ['POST', '', { key: 'sk-x', provider: 'alpha', allowed_user_ids: [''] }, 'allowed_user_ids.0'],
      ['POST', '', { key: 'sk-x', provider: 'alpha', declared_zdr: 'yes' }, 'declared_zdr'],
    ]
    for (const [method, path, body, param] of refusals) {
      const res = await call(c.auth, method, path, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await res.json()).error.param, JSON.stringify(body)).toBe(param)
    }
  })

  it('uses a credential with allowed_user_ids only for the keys of those users of the org', async () => {
    const c = await fresh()
    const colleague = await t.gateway.admin.createUser({ email: `colleague-${Math.random().toString(36).slice(2)}@example.com`, orgId: c.user.org_id })
    const theirs = { authorization: `Bearer ${(await t.gateway.admin.issueKey({ userId: colleague.id })).key}` }
    await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha', allowed_user_ids: [colleague.id] })
    const alphaOnly = { provider: { only: ['alpha'] } }
    const mine = await chat(c.auth, 'byok/model', alphaOnly)
    expect([mine.status, mine.body.usage.is_byok]).toEqual([200, false])
    expect(lastKeyAt(alpha)).toBe(`Bearer ${SERVICE_ALPHA}`)
    const served = await chat(theirs, 'byok/model', alphaOnly)
    expect(served.body.usage.is_byok).toBe(true)
    expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-good-1111')
  })

  it('never uses the service key of a provider for which a credential says is_byok_only, for any model', async () => {
    const c = await fresh()
    // The credential applies only to byok/other, yet Alpha's own key is not used for byok/model either.
    await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha', allowed_models: ['byok/other'], is_byok_only: true })
    const sent = alpha.requests.length
    const { body } = await chat(c.auth, 'byok/model')
    expect(body.provider).toBe('Beta')
    expect(alpha.requests.length).toBe(sent)
    const refused = await chat(c.auth, 'byok/model', { provider: { only: ['alpha'] } })
    expect(refused.status).toBe(503)
    expect(refused.body.error.message).toMatch(/alpha \(byok\/model\): needs your own key/)
    const own = await chat(c.auth, 'byok/other')
    expect([own.status, own.body.usage.is_byok]).toEqual([200, true])
  })

  it('never sends a request asking for zero data retention through a key its customer declared not ZDR (declared_zdr: false)', async () => {
    const zed = await startGateway({
      providers: [
        openaiCompatible({
          slug: 'zed',
          name: 'Zed',
          baseURL: alpha.url,
          apiKey: SERVICE_ALPHA,
          byokSupported: true,
          dataPolicy: { retains_prompts: false, training: false },
          models: [{ id: 'zed/model', upstreamId: 'gpt-test', pricing }],
        }),
      ],
    })
    try {
      const c = await createCustomer(zed.gateway, { credits: '5' })
      const created = await zed.request('/api/v1/byok', {
        method: 'POST',
        headers: { ...c.auth, ...json },
        body: JSON.stringify({ key: 'sk-cust-good-1111', provider: 'zed', declared_zdr: false }),
      })
      expect(created.status).toBe(201)
      const ask = async (extra: Record<string, unknown>) => {
        const res = await zed.request('/api/v1/chat/completions', {
          method: 'POST',
          headers: { ...c.auth, ...json },
          body: JSON.stringify({ model: 'zed/model', messages: [{ role: 'user', content: 'hi' }], ...extra }),
        })
        return (await res.json()).usage.is_byok
      }
      expect(await ask({})).toBe(true)
      expect(await ask({ provider: { zdr: true } })).toBe(false)
      expect(lastKeyAt(alpha)).toBe(`Bearer ${SERVICE_ALPHA}`)
    } finally {
      await zed.close()
    }
  })

  it('serves providers without a service key only with the customer’s key', async () => {
    const c = await fresh()
    const refused = await chat(c.auth, 'byok/gamma-only')
    expect(refused.status).toBe(503)
    expect(refused.body.error.message).toMatch(/gamma \(byok\/gamma-only\): needs your own key/)
    await call(c.auth, 'POST', '', { key: 'sk-cust-good-2222', provider: 'gamma' })
    const served = await chat(c.auth, 'byok/gamma-only')
    expect(served.status).toBe(200)
    expect(served.body.provider).toBe('Gamma')
  })

  it('rotates a credential’s key in place', async () => {
    const c = await fresh()
    const cred = (await (await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha' })).json()).data
    const rotated = (await (await call(c.auth, 'PATCH', `/${cred.id}`, { key: 'sk-cust-rotated-3333' })).json()).data
    expect(rotated).toMatchObject({ id: cred.id, label: 'sk-…3333', created_at: cred.created_at })
    await chat(c.auth)
    expect(lastKeyAt(alpha)).toBe('Bearer sk-cust-rotated-3333')
  })

  it('tests keys with real checks, never storing them, billing nothing, and never echoing the key', async () => {
    const c = await fresh()
    const before = await t.gateway.admin.getCredits(c.user.org_id)
    const good = await (await call(c.auth, 'POST', '/test', { key: 'sk-cust-good-1111', provider: 'alpha' })).json()
    expect(good.data).toMatchObject({ provider: 'alpha', success: true })
    expect(good.data.checks.map((x: any) => [x.target, x.ok])).toEqual([
      ['GET /models', true],
      ['POST /chat/completions (byok/model, 1 token)', true],
    ])
    for (const check of good.data.checks) expect(Number.isInteger(check.latency_ms)).toBe(true)
    const bad = await (await call(c.auth, 'POST', '/test', { key: 'sk-cust-WRONG-key-5555', provider: 'alpha' })).json()
    expect(bad.data.success).toBe(false)
    expect(bad.data.checks.map((x: any) => [x.ok, x.message])).toEqual([
      [false, 'the key was rejected'],
      [false, 'the key was rejected'],
    ])
    expect(JSON.stringify(bad)).not.toContain('WRONG')
    alpha.keyModes['sk-cust-ratelimited-7777'] = 'fail-429'
    const limited = await (await call(c.auth, 'POST', '/test', { key: 'sk-cust-ratelimited-7777', provider: 'alpha' })).json()
    expect(limited.data.checks[1]).toMatchObject({ ok: false, message: 'rate limited, try later' })
    expect((await (await call(c.auth, 'GET', '')).json()).total_count).toBe(0)
    expect(await t.gateway.admin.getCredits(c.user.org_id)).toEqual(before)

    const stored = (await (await call(c.auth, 'POST', '', { key: 'sk-cust-good-2222', provider: 'alpha' })).json()).data
    const storedTest = await (await call(c.auth, 'POST', `/${stored.id}/test`)).json()
    expect(storedTest.data.success).toBe(true)
    expect(alpha.requests.at(-1)!.headers.authorization).toBe('Bearer sk-cust-good-2222')
  })

  it('answers 404 for another org’s credential on every route, and never lists it', async () => {
    const owner = await fresh()
    const stranger = await fresh()
    const cred = (await (await call(owner.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha' })).json()).data
    for (const [method, path, body] of [
      ['GET', `/${cred.id}`],
      ['PATCH', `/${cred.id}`, { disabled: true }],
      ['DELETE', `/${cred.id}`],
      ['POST', `/${cred.id}/test`],
    ] as [string, string, unknown?][]) {
      const res = await call(stranger.auth, method, path, body)
      expect(res.status, `${method} ${path}`).toBe(404)
      const text = await res.text()
      expect(text, `${method} ${path}`).not.toContain('alpha')
    }
    expect(await (await call(stranger.auth, 'GET', '')).json()).toEqual({ data: [], total_count: 0 })
    expect((await (await call(owner.auth, 'GET', `/${cred.id}`)).json()).data.disabled).toBe(false)
    // The stranger's requests never use the owner's key.
    const sent = alpha.requests.length
    expect((await chat(stranger.auth, 'byok/model', { provider: { only: ['alpha'] } })).body.usage.is_byok).toBe(false)
    expect(alpha.requests.slice(sent).map((r) => r.headers.authorization)).toEqual([`Bearer ${SERVICE_ALPHA}`])
  })

  it('routes without listing the storage per request, and sees a change made through another instance', async () => {
    const c = await fresh()
    const cred = (await (await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha' })).json()).data
    expect((await chat(c.auth)).body.usage.is_byok).toBe(true)
    // Listing keys scans every key of the store (a usage record per request among them): not on each request.
    const listings = vi.spyOn(storage, 'getKeys')
    try {
      for (let i = 0; i < 5; i++) {
        const { status, body } = await chat(c.auth)
        expect([status, body.usage.is_byok, lastKeyAt(alpha)]).toEqual([200, true, 'Bearer sk-cust-good-1111'])
      }
      expect(listings).not.toHaveBeenCalled()
      // Another instance over the same storage disables the credential: this one follows at once.
      const other = createGateway({ storage, secret: TEST_SECRET, logger: false, providers: providers() })
      const patched = await other.fetch(
        new Request(`http://x/api/v1/byok/${cred.id}`, { method: 'PATCH', headers: { ...c.auth, ...json }, body: JSON.stringify({ disabled: true }) }),
      )
      expect(patched.status).toBe(200)
      const { body } = await chat(c.auth)
      expect([body.usage.is_byok, lastKeyAt(alpha)]).toEqual([false, `Bearer ${SERVICE_ALPHA}`])
      // The org's index names its credentials: reading them again after the change lists no keys either (the one
      // listing is the new instance's start-up look for credentials of 0.1 to index, not routing).
      expect(listings.mock.calls.map(([base]) => base)).toEqual(['gateway:byok-count:'])
      await other.close()
    } finally {
      listings.mockRestore()
    }
  })

  it('does not read the org’s credentials for a model whose providers take no customer keys', async () => {
    const c = await fresh()
    await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha' })
    const reads = vi.spyOn(storage, 'getItem')
    try {
      expect((await chat(c.auth, 'demo/echo')).status).toBe(200)
      expect(reads.mock.calls.map(([key]) => key).filter((key) => key.includes('byok'))).toEqual([])
      expect((await chat(c.auth)).body.usage.is_byok).toBe(true) // and still does where they matter
      expect(reads.mock.calls.map(([key]) => key).filter((key) => key.includes('byok')).length).toBeGreaterThan(0)
    } finally {
      reads.mockRestore()
    }
  })

  it('reconciles usage figures around the free allowance, and settles fees exactly once under concurrency', async () => {
    const c = await fresh('1')
    await call(c.auth, 'POST', '', { key: 'sk-cust-good-1111', provider: 'alpha' })
    const costs: bigint[] = []
    const fees: string[] = []
    for (let i = 0; i < 4; i++) {
      const { body } = await chat(c.auth, 'byok/model', i === 3 ? { stream: false } : {})
      costs.push(units(String(body.usage.cost_details.upstream_inference_cost)))
      fees.push(plain(body.usage.cost_eur))
    }
    // A streamed BYOK request counts too.
    const streamed = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...c.auth, ...json },
      body: JSON.stringify({ model: 'byok/model', stream: true, messages: [{ role: 'user', content: 'hello byok' }] }),
    })
    const streamedUsage = (await readSse(streamed)).events.at(-2).usage
    costs.push(units(String(streamedUsage.cost_details.upstream_inference_cost)))
    fees.push(plain(streamedUsage.cost_eur))

    // The allowance is 2: the first two are free, the next three owe 5 % of their upstream cost in EUR.
    const eur = costs.map((usd) => roundUnits(usd * 86n, 2))
    const expectedFees = eur.map((e, i) => (i < 2 ? 0n : roundUnits(e * 5n, 2)))
    expect(fees).toEqual(expectedFees.map(decimalText))
    const totalFee = expectedFees.reduce((a, b) => a + b, 0n)

    const usage = async () => (await (await call(c.auth, 'GET', '/usage')).json()).data
    const before = await usage()
    const now = new Date()
    expect(before).toEqual({
      period_start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      period_end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      successful_requests: 5,
      settled_requests: 0,
      pending_settlement_requests: 5,
      free_request_allowance: 2,
      allowance_used: 2,
      allowance_remaining: 0,
      chargeable_requests: 3,
      estimated_upstream_cost_eur: decimalText(eur.reduce((a, b) => a + b, 0n)),
      service_platform_fee_eur: decimalText(totalFee),
      service_platform_fee_charged_eur: '0',
      service_platform_fee_pending_eur: decimalText(totalFee),
      platform_fee_rate: '0.05',
    })
    expect((await t.gateway.admin.getCredits(c.user.org_id)).total_usage).toBe('0')

    // Two gateway instances over the same storage settle at the same time: the fees are charged once.
    const other = createGateway({ storage, secret: TEST_SECRET, logger: false, providers: providers(), byok: { settlementIntervalSeconds: 0 } })
    const results = await Promise.all([t.gateway.admin.settleByokFees(c.user.org_id), other.admin.settleByokFees(), t.gateway.admin.settleByokFees()])
    expect(results.reduce((n, r) => n + r.settled_requests, 0)).toBeGreaterThanOrEqual(5)
    const credits = await t.gateway.admin.getCredits(c.user.org_id)
    expect(credits.total_usage).toBe(decimalText(totalFee))
    const after = await usage()
    expect(after).toMatchObject({
      successful_requests: 5,
      settled_requests: 5,
      pending_settlement_requests: 0,
      service_platform_fee_charged_eur: decimalText(totalFee),
      service_platform_fee_pending_eur: '0',
    })
    expect(after.allowance_used + after.chargeable_requests).toBe(after.successful_requests)
    expect(await t.gateway.admin.settleByokFees(c.user.org_id)).toEqual({ settled_requests: 0, charged_eur: '0' })
    expect((await t.gateway.admin.getCredits(c.user.org_id)).total_usage).toBe(decimalText(totalFee))
    await other.close()
  })
})

describe('rotating the gateway secret', () => {
  it('still decrypts credentials sealed under a previous secret, and seals new ones under the new one', async () => {
    const upstream = await startFakeOpenAI({ apiKey: ['sk-cust-old-1234', 'sk-cust-new-5678', 'sk-svc'] })
    const storage = createStorage({ driver: memoryDriver() })
    const make = (secret: string, previousSecrets: string[] = []): Gateway =>
      createGateway({
        storage,
        secret,
        previousSecrets,
        logger: false,
        providers: [
          openaiCompatible({
            slug: 'alpha',
            name: 'Alpha',
            baseURL: upstream.url,
            apiKey: 'sk-svc',
            byokSupported: true,
            models: [{ id: 'byok/model', upstreamId: 'gpt-test', pricing }],
          }),
        ],
      })
    const oldSecret = 'old-secret-old-secret-old-secret-0001'
    const newSecret = 'new-secret-new-secret-new-secret-0002'
    const before = make(oldSecret)
    const c = await createCustomer(before, { credits: '1' })
    const post = (gateway: Gateway, path: string, body: unknown) =>
      gateway.fetch(new Request(`http://x/api/v1${path}`, { method: 'POST', headers: { ...c.auth, ...json }, body: JSON.stringify(body) }))
    await post(before, '/byok', { key: 'sk-cust-old-1234', provider: 'alpha' })
    const after = make(newSecret, [oldSecret])
    const res = await post(after, '/chat/completions', { model: 'byok/model', messages: [{ role: 'user', content: 'hi' }] })
    expect((await res.json()).usage.is_byok).toBe(true)
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-cust-old-1234')
    await post(after, '/byok', { key: 'sk-cust-new-5678', provider: 'alpha' })
    const kids = (await after.context.byok.records(c.user.org_id)).map((r) => decodeProtectedHeader(r.sealed_key).kid)
    expect(new Set(kids).size).toBe(2)
    // Without the old secret, its records cannot be opened, and the gateway falls back to the service key rather than fail.
    const forgetful = make(newSecret)
    const served = await post(forgetful, '/chat/completions', { model: 'byok/model', messages: [{ role: 'user', content: 'hi' }] })
    expect(served.status).toBe(200)
    await Promise.all([before.close(), after.close(), forgetful.close()])
    await upstream.close()
  })
})
