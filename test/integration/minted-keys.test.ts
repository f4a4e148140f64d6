import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { sha256Hex } from '../../src/crypto/keys'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const json = { 'content-type': 'application/json' }
const verifier = () => randomBytes(32).toString('base64url')
const s256 = (v: string) => createHash('sha256').update(v).digest('base64url')
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

// 0.000001 USD a prompt token, 0.000002 a completion token (0.86 EUR a USD).
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }

describe('keys minted by keys (POST /auth/keys/code, then /auth/keys) never do more than their parent', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  let clock = Date.parse('2026-11-26T12:00:00.000Z')

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    t = await startGateway({
      clock: () => clock,
      rateLimits: { key: { requests: 5, windowSeconds: 60 } },
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up',
          baseURL: upstream.url,
          apiKey: 'sk-up',
          models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing }],
        }),
      ],
    })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  const createCode = (key: string, extra: Record<string, unknown> = {}) => {
    const v = verifier()
    return t
      .request('/api/v1/auth/keys/code', {
        method: 'POST',
        headers: { ...json, ...bearer(key) },
        body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: s256(v), ...extra }),
      })
      .then(async (res) => ({ res, v, code: res.status < 300 ? ((await res.json()).code as string) : undefined }))
  }
  const exchange = (code: string, v: string) =>
    t.request('/api/v1/auth/keys', { method: 'POST', headers: json, body: JSON.stringify({ code, code_verifier: v }) })
  const mint = async (key: string, extra: Record<string, unknown> = {}) => {
    const { res, v, code } = await createCode(key, extra)
    expect(res.status).toBe(200)
    const issued = await exchange(code!, v)
    expect(issued.status).toBe(200)
    return (await issued.json()).key as string
  }
  const chat = (key: string, maxTokens = 10) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, ...bearer(key) },
      body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: maxTokens, messages: [{ role: 'user', content: 'hi' }] }),
    })
  const record = async (key: string) => (await t.gateway.admin.findUserByKey(key))!.key
  // A new window of the per-key rate limit for every test.
  const nextWindow = () => (clock += 60_000)

  it('a key at its credit limit mints nothing (402), and a minted key’s limit is what its parent has left', async () => {
    nextWindow()
    const customer = await createCustomer(t.gateway, { credits: '5' })
    // One request's hold here: 11 prompt tokens (32 bytes / 3) + 10 completion tokens = 0.00002666 EUR.
    const parent = await t.gateway.admin.issueKey({ userId: customer.user.id, creditLimit: '0.0001' })
    const served = await chat(parent.key)
    expect(served.status).toBe(200)
    const spent = (await served.json()).usage.cost_eur as number
    const child = await mint(parent.key, { limit: 5 })
    expect((await record(child)).credit_limit).toBe((0.0001 - spent).toFixed(12).replace(/0+$/, ''))
    expect((await record(child)).ancestors).toEqual([{ hash: sha256Hex(parent.key), credit_limit: '0.0001' }])

    // The child's spending counts against its parent: together they never pass the parent's 0.0001 EUR.
    let total = spent
    for (const key of [child, parent.key, child, parent.key, child, parent.key]) {
      nextWindow() // this test is about money, not the rate limit
      const res = await chat(key)
      if (res.status === 200) total += (await res.json()).usage.cost_eur
      else expect(res.status).toBe(402)
    }
    expect(total).toBeLessThanOrEqual(0.0001)
    const usedKey = t.gateway.internals.kv.key('credits', 'key', sha256Hex(parent.key), 'used')
    const parentUsed = await t.gateway.internals.atomic.getUnits(usedKey)
    expect(Number(parentUsed) / 1e12).toBeCloseTo(total, 12)

    // Nearly used up: a key minted now gets what is left, which pays for no request.
    for (;;) {
      nextWindow()
      if ((await chat(parent.key, 1)).status !== 200) break
    }
    nextWindow()
    const late = await mint(parent.key, { limit: 5 })
    const left = 0.0001 - Number(await t.gateway.internals.atomic.getUnits(usedKey)) / 1e12
    expect(Number((await record(late)).credit_limit)).toBeCloseTo(left, 12)
    nextWindow()
    expect((await chat(late, 1)).status).toBe(402)
    // Used up to the last unit: the parent mints nothing, and a key it minted before mints nothing either.
    await t.gateway.internals.atomic.addUnits(usedKey, 100_000_000n - (await t.gateway.internals.atomic.getUnits(usedKey)))
    nextWindow()
    const refused = await createCode(parent.key)
    expect(refused.res.status).toBe(402)
    expect((await refused.res.json()).error.type).toBe('insufficient_credits')
    nextWindow()
    expect((await createCode(child)).res.status).toBe(402)
  })

  it('a minted key expires no later than its parent, and a code of an expired parent is void', async () => {
    nextWindow()
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const inAnHour = new Date(clock + 3_600_000).toISOString()
    const child = await mint(customer.key, { expires_at: inAnHour })
    expect((await record(child)).expires_at).toBe(inAnHour)
    const grandchild = await mint(child, { expires_at: new Date(clock + 7_200_000).toISOString() })
    expect((await record(grandchild)).expires_at).toBe(inAnHour)
    const { code, v } = await createCode(child)
    clock += 3_600_000 // the child expires
    expect((await exchange(code!, v)).status).toBe(403)
    expect((await chat(grandchild)).status).toBe(401)
    const past = await createCode(customer.key, { expires_at: new Date(clock - 1000).toISOString() })
    expect(past.res.status).toBe(400)
    expect((await past.res.json()).error.param).toBe('expires_at')
  })

  it('a minted key’s requests count against its parent’s rate limit: 5 a minute in all, however many keys are minted', async () => {
    nextWindow()
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const children = [await mint(customer.key), await mint(customer.key)] // two requests of the parent's window
    const grandchild = await mint(children[0]) // one more, on the child's window and the parent's
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const res = await chat([children[0], children[1], grandchild][i % 3])
      statuses.push(res.status)
      await res.arrayBuffer()
    }
    expect(statuses.filter((s) => s === 200).length).toBe(2) // 5 − 3 code creations
    expect(statuses.filter((s) => s === 429).length).toBe(10)
    expect((await chat(customer.key)).status).toBe(429)
  })

  it('revoking a key voids the codes it created that were not exchanged yet', async () => {
    nextWindow()
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const parent = await t.gateway.admin.issueKey({ userId: customer.user.id })
    const { code, v } = await createCode(parent.key)
    await t.gateway.admin.revokeKey(parent.key)
    const res = await exchange(code!, v)
    expect(res.status).toBe(403)
    expect((await t.gateway.admin.listKeys(customer.user.id)).length).toBe(2)
  })

  it('refuses a limit that is not a positive decimal, naming the field', async () => {
    nextWindow()
    const customer = await createCustomer(t.gateway, { credits: '5' })
    for (const limit of [0, -1, 'abc', '1e3', Number.POSITIVE_INFINITY]) {
      const { res } = await createCode(customer.key, { limit })
      expect(res.status, String(limit)).toBe(400)
      expect((await res.json()).error.param).toBe('limit')
    }
  })
})
