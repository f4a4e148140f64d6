import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
// 0.000001 USD a prompt token, 0.000002 a completion token; 0.86 EUR a USD: 0.00000086 and 0.00000172 EUR.
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const chatModels: ProviderModel[] = ['gpt-test', 'slow', 'fail-500'].map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing, maxCompletionTokens: 1000 }))
const embedModel: ProviderModel = { id: 'fake/embed', upstreamId: 'embed', pricing, endpoints: ['/embeddings'], embedding: { dimensions: 8 } }
// A chat below ("hi", max_tokens 10) holds 11 prompt tokens (32 bytes of messages / 3) + 10 completion tokens = 21
// tokens, and 0.00002666 EUR; the provider reports 8 prompt and 4 completion tokens: 12 tokens, 0.00001376 EUR.
const HOLD_TOKENS = 21
const TOKENS = 12n

describe('tokens, spend and requests in flight for keys, users and orgs (docs/limits.md#tokens-spend-and-requests-in-flight)', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  // Thursday 26 November 2026, 12:00:30 UTC: 30 s left in the minute.
  const START = Date.parse('2026-11-26T12:00:30.000Z')
  let clock = START

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 10 })
    t = await startGateway({
      clock: () => clock,
      providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models: [...chatModels, embedModel] })],
    })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  const chat = (key: string, options: { model?: string; stream?: boolean } = {}) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, ...bearer(key) },
      body: JSON.stringify({ model: options.model ?? 'fake/gpt-test', max_tokens: 10, stream: options.stream, messages: [{ role: 'user', content: 'hi' }] }),
    })
  const served = async (res: Response) => {
    expect(res.status).toBe(200)
    return res.headers.get('content-type')?.startsWith('text/event-stream') ? readSse(res) : res.json()
  }
  const call = (key: string, method: string, path: string, body?: unknown) =>
    t.request(`/api/v1${path}`, {
      method,
      headers: { ...bearer(key), ...(body === undefined ? {} : json) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  /** A customer with credits and a management key of its org. */
  const customerWithManager = async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const manager = (await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'manager', management: true })).key
    return { customer, manager }
  }
  const keyTokens = (hash: string, window: 'minute' | 'day', start: number) => t.gateway.context.spendCounters.readTokens({ kind: 'key', hash }, window, start)

  it('a key’s tokens per minute (POST /keys): held at prompt estimate + max_tokens, counted at the provider’s usage, 429 on chat whole and streamed, and the next minute starts over', async () => {
    clock = START
    const { manager } = await customerWithManager()
    const res = await call(manager, 'POST', '/keys', { name: 'tpm', tokens_per_minute: 50 })
    expect(res.status).toBe(201)
    const created = await res.json()
    expect(created.data).toMatchObject({
      tokens_per_minute: 50,
      tokens_per_day: null,
      spend_limit: null,
      spend_window: null,
      requests_per_minute: null,
      max_in_flight: null,
    })
    const key: string = created.key
    const hash: string = created.data.hash
    // GET /key shows the calling key's limits.
    expect((await (await call(key, 'GET', '/key')).json()).data).toMatchObject({ tokens_per_minute: 50, max_in_flight: null })
    // 12 counted a request: 0 + 21, 12 + 21, 24 + 21 fit in 50; 36 + 21 does not.
    await served(await chat(key))
    await served(await chat(key, { stream: true }))
    await served(await chat(key))
    const minute = Date.parse('2026-11-26T12:00:00.000Z')
    expect(await keyTokens(hash, 'minute', minute)).toBe(3n * TOKENS)
    for (const stream of [false, true]) {
      const refused = await chat(key, { stream })
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('30')
      const error = (await refused.json()).error
      expect(error.type).toBe('rate_limited')
      expect(error.message).toBe(
        "This API key's limit of 50 tokens per minute cannot take this request: it may use up to 21 tokens (its prompt and its most completion tokens), and 14 are left in this minute: try again in 30 s.",
      )
      expect(error.metadata).toEqual({
        limit: 'key',
        limit_type: 'tokens_per_minute',
        tokens_per_minute: 50,
        requested_tokens: HOLD_TOKENS,
        available_tokens: 14,
        resets_at: '2026-11-26T12:01:00.000Z',
      })
    }
    // Refusals count nothing; the next minute starts over.
    expect(await keyTokens(hash, 'minute', minute)).toBe(3n * TOKENS)
    clock = Date.parse('2026-11-26T12:01:05.000Z')
    await served(await chat(key, { stream: true }))
    expect(await keyTokens(hash, 'minute', Date.parse('2026-11-26T12:01:00.000Z'))).toBe(TOKENS)
    // A request no provider served counts no tokens, and gives back its hold.
    expect((await chat(key, { model: 'fake/fail-500' })).status).toBeGreaterThanOrEqual(500)
    expect(await keyTokens(hash, 'minute', Date.parse('2026-11-26T12:01:00.000Z'))).toBe(TOKENS)
    await served(await chat(key))
    await served(await chat(key))
    expect(await keyTokens(hash, 'minute', Date.parse('2026-11-26T12:01:00.000Z'))).toBe(3n * TOKENS)
    clock = START
  })

  it('the 429 in each API’s error shape: /messages (Anthropic’s rate_limit_error), /responses (OpenAI’s) and /embeddings', async () => {
    clock = START
    const customer = await createCustomer(t.gateway, { credits: '5' })
    // 5 tokens a minute: less than any of these requests may use.
    await t.gateway.admin.setKeyLimits(customer.record.hash, { tokens_per_minute: 5 })
    const sent = upstream.requests.length
    const messages = await t.request('/api/v1/messages', {
      method: 'POST',
      headers: { ...json, 'x-api-key': customer.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(messages.status).toBe(429)
    expect(messages.headers.get('retry-after')).toBe('30')
    const anthropic = await messages.json()
    expect(anthropic.type).toBe('error')
    expect(anthropic.error.type).toBe('rate_limit_error')
    expect(anthropic.error.message).toContain("This API key's limit of 5 tokens per minute cannot take this request")
    expect(anthropic.error.message).toContain('lower max_tokens')
    expect(anthropic.error.metadata).toMatchObject({
      limit: 'key',
      limit_type: 'tokens_per_minute',
      tokens_per_minute: 5,
      resets_at: '2026-11-26T12:01:00.000Z',
    })

    const responses = await t.request('/api/v1/responses', {
      method: 'POST',
      headers: { ...json, ...bearer(customer.key) },
      body: JSON.stringify({ model: 'fake/gpt-test', input: 'hi', max_output_tokens: 16 }),
    })
    expect(responses.status).toBe(429)
    expect(responses.headers.get('retry-after')).toBe('30')
    const openai = (await responses.json()).error
    expect(openai.type).toBe('rate_limit_error')
    expect(openai.code).toBe('rate_limited')
    expect(openai.metadata).toMatchObject({ limit: 'key', limit_type: 'tokens_per_minute', tokens_per_minute: 5, available_tokens: 5 })

    const embeddings = await t.request('/api/v1/embeddings', {
      method: 'POST',
      headers: { ...json, ...bearer(customer.key) },
      body: JSON.stringify({ model: 'fake/embed', input: 'hello there' }),
    })
    expect(embeddings.status).toBe(429)
    expect(embeddings.headers.get('retry-after')).toBe('30')
    const error = (await embeddings.json()).error
    expect(error.type).toBe('rate_limited')
    // An input string holds its UTF-8 bytes as tokens at most: 11.
    expect(error.metadata).toEqual({
      limit: 'key',
      limit_type: 'tokens_per_minute',
      tokens_per_minute: 5,
      requested_tokens: 11,
      available_tokens: 5,
      resets_at: '2026-11-26T12:01:00.000Z',
    })
    // Nothing was sent to the provider.
    expect(upstream.requests.length).toBe(sent)
  })

  // Each limit, once one request used it up, refuses the next with its 429 in every API's shape, whole and streamed.
  const used: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    ['tokens_per_minute', { tokens_per_minute: 30 }, { tokens_per_minute: 30, resets_at: '2026-11-26T12:01:00.000Z' }, '30'],
    ['tokens_per_day', { tokens_per_day: 30 }, { tokens_per_day: 30, resets_at: '2026-11-27T00:00:00.000Z' }, '43170'],
    ['spend_limit', { spend_limit: '0.00004', spend_window: 'minute' }, { spend_limit: '0.00004', spend_window: 'minute', available: '0.00002624' }, '30'],
    ['requests_per_minute', { requests_per_minute: 1 }, { requests_per_minute: 1, resets_at: '2026-11-26T12:01:00.000Z' }, '30'],
  ]
  for (const [limitType, limits, metadata, retryAfter] of used)
    it(`a key's ${limitType}, used up, refuses chat, /messages and /responses, whole and streamed, each in its shape with Retry-After`, async () => {
      clock = START
      const customer = await createCustomer(t.gateway, { credits: '5' })
      await t.gateway.admin.setKeyLimits(customer.record.hash, limits)
      await served(await chat(customer.key))
      const sent = upstream.requests.length
      const expected = { limit: 'key', limit_type: limitType, ...metadata }
      for (const stream of [false, true]) {
        const whole = await chat(customer.key, { stream })
        expect(whole.status).toBe(429)
        expect(whole.headers.get('retry-after')).toBe(retryAfter)
        const error = (await whole.json()).error
        expect(error).toMatchObject({ code: 429, type: 'rate_limited', metadata: expected })

        const messages = await t.request('/api/v1/messages', {
          method: 'POST',
          headers: { ...json, 'x-api-key': customer.key, 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }] }),
        })
        expect(messages.status).toBe(429)
        expect(messages.headers.get('retry-after')).toBe(retryAfter)
        const anthropic = await messages.json()
        expect(anthropic).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', metadata: expected } })
        expect(anthropic.request_id).toEqual(expect.any(String))

        const responses = await t.request('/api/v1/responses', {
          method: 'POST',
          headers: { ...json, ...bearer(customer.key) },
          body: JSON.stringify({ model: 'fake/gpt-test', input: 'hi', max_output_tokens: 16, stream }),
        })
        expect(responses.status).toBe(429)
        expect(responses.headers.get('retry-after')).toBe(retryAfter)
        expect((await responses.json()).error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', param: null, metadata: expected })
      }
      // Nothing refused reached the provider.
      expect(upstream.requests.length).toBe(sent)
    })

  it('embeddings count the provider’s reported tokens', async () => {
    clock = START
    const customer = await createCustomer(t.gateway, { credits: '5' })
    await t.gateway.admin.setKeyLimits(customer.record.hash, { tokens_per_day: 1000 })
    const res = await t.request('/api/v1/embeddings', {
      method: 'POST',
      headers: { ...json, ...bearer(customer.key) },
      body: JSON.stringify({ model: 'fake/embed', input: ['hello there', 'general kenobi'] }),
    })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.usage.prompt_tokens).toBeGreaterThan(0)
    expect(await keyTokens(customer.record.hash, 'day', Date.parse('2026-11-26T00:00:00.000Z'))).toBe(BigInt(body.usage.prompt_tokens))
  })

  it('a key’s spend per minute (PATCH /keys/{hash}): 429 naming spend_limit once the minute’s spending and the request’s most cost pass it', async () => {
    clock = START
    const { customer, manager } = await customerWithManager()
    const patched = await call(manager, 'PATCH', `/keys/${customer.record.hash}`, { spend_limit: '0.00005', spend_window: 'minute' })
    expect(patched.status).toBe(200)
    expect((await patched.json()).data).toMatchObject({ spend_limit: '0.00005', spend_window: 'minute' })
    // Each request holds 0.00002666 and costs 0.00001376: two fit, the third would pass 0.00005.
    await served(await chat(customer.key))
    await served(await chat(customer.key, { stream: true }))
    const refused = await chat(customer.key)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('30')
    expect((await refused.json()).error.metadata).toEqual({
      limit: 'key',
      limit_type: 'spend_limit',
      spend_limit: '0.00005',
      spend_window: 'minute',
      required: '0.00002666',
      available: '0.00002248',
      resets_at: '2026-11-26T12:01:00.000Z',
    })
    expect(await t.gateway.context.spendCounters.readSpent({ kind: 'key', hash: customer.record.hash }, 'minute', Date.parse('2026-11-26T12:00:00.000Z'))).toBe(
      27_520_000n,
    )
    clock = Date.parse('2026-11-26T12:01:00.000Z')
    await served(await chat(customer.key))
    // Per hour instead: the hour's counter starts from what this window spends.
    clock = Date.parse('2026-11-26T12:01:10.000Z')
    const hourly = await call(manager, 'PATCH', `/keys/${customer.record.hash}`, { spend_limit: '0.00003', spend_window: 'hour' })
    expect((await hourly.json()).data).toMatchObject({ spend_limit: '0.00003', spend_window: 'hour' })
    await served(await chat(customer.key))
    const hourRefused = await chat(customer.key)
    expect(hourRefused.status).toBe(429)
    // 58 minutes 50 seconds to the hour's end.
    expect(hourRefused.headers.get('retry-after')).toBe('3530')
    expect((await hourRefused.json()).error.metadata).toMatchObject({
      limit: 'key',
      limit_type: 'spend_limit',
      spend_window: 'hour',
      resets_at: '2026-11-26T13:00:00.000Z',
    })
    // Removed: no limit.
    const removed = await call(manager, 'PATCH', `/keys/${customer.record.hash}`, { spend_limit: null })
    expect((await removed.json()).data).toMatchObject({ spend_limit: null, spend_window: null })
    await served(await chat(customer.key))
    clock = START
  })

  it('an org’s requests in flight and tokens per day (admin.setOrgLimits) bound all its keys', async () => {
    clock = START
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const second = (await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'second' })).key
    const org = await t.gateway.admin.setOrgLimits(customer.user.org_id, { max_in_flight: 1, tokens_per_day: 40 })
    expect(org.traffic_limits).toEqual({ max_in_flight: 1, tokens_per_day: 40 })
    let open!: () => void
    upstream.slowGate = new Promise<void>((resolve) => (open = resolve))
    try {
      const running = chat(customer.key, { model: 'fake/slow' })
      await expect.poll(() => upstream.requests.filter((r) => r.body?.model === 'slow').length > 0).toBe(true)
      const refused = await chat(second, { stream: true })
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('1')
      const error = (await refused.json()).error
      expect(error.message).toBe('This organisation already has 1 requests running, the most it may have at once: try again when one ends.')
      expect(error.metadata).toEqual({ limit: 'org', limit_type: 'max_in_flight', max_in_flight: 1 })
      open()
      await served(await running)
    } finally {
      open()
      upstream.slowGate = undefined
    }
    // 12 counted of 40 today: 12 + 21 fit, 24 + 21 do not, whichever key.
    await served(await chat(second))
    const refused = await chat(customer.key)
    expect(refused.status).toBe(429)
    // 11 h 59 min 30 s to midnight UTC.
    expect(refused.headers.get('retry-after')).toBe('43170')
    expect((await refused.json()).error.metadata).toEqual({
      limit: 'org',
      limit_type: 'tokens_per_day',
      tokens_per_day: 40,
      requested_tokens: HOLD_TOKENS,
      available_tokens: 16,
      resets_at: '2026-11-27T00:00:00.000Z',
    })
    clock = Date.parse('2026-11-27T00:00:01.000Z')
    await served(await chat(customer.key))
    // null removes them all.
    expect((await t.gateway.admin.setOrgLimits(customer.user.org_id, null)).traffic_limits).toBeUndefined()
    clock = START
  })

  it('a user’s tokens per minute (PATCH /users/{id}) bound its keys; GET /me shows it', async () => {
    clock = START
    const { customer, manager } = await customerWithManager()
    const res = await call(manager, 'PATCH', `/users/${customer.user.id}`, { tokens_per_minute: 30 })
    expect(res.status).toBe(200)
    expect((await res.json()).data.limits).toMatchObject({ tokens_per_minute: 30, tokens_per_day: null })
    await served(await chat(customer.key))
    const refused = await chat(customer.key)
    expect(refused.status).toBe(429)
    expect((await refused.json()).error.metadata).toEqual({
      limit: 'user',
      limit_type: 'tokens_per_minute',
      tokens_per_minute: 30,
      requested_tokens: HOLD_TOKENS,
      available_tokens: 18,
      resets_at: '2026-11-26T12:01:00.000Z',
    })
    expect((await (await call(customer.key, 'GET', '/me')).json()).limits).toMatchObject({ tokens_per_minute: 30 })
  })

  it('a key’s requests per minute and requests in flight (POST /keys)', async () => {
    clock = START
    const { manager } = await customerWithManager()
    const created = await (await call(manager, 'POST', '/keys', { name: 'rpm', requests_per_minute: 2, max_in_flight: 5 })).json()
    await served(await chat(created.key))
    await served(await chat(created.key))
    const refused = await chat(created.key)
    expect(refused.status).toBe(429)
    expect((await refused.json()).error.metadata).toEqual({
      limit: 'key',
      limit_type: 'requests_per_minute',
      requests_per_minute: 2,
      resets_at: '2026-11-26T12:01:00.000Z',
    })
  })

  it('a key’s limits bound the keys it minted: their tokens count in its window too, fresh when its limits change', async () => {
    clock = START
    const customer = await createCustomer(t.gateway, { credits: '5' })
    await t.gateway.admin.setKeyLimits(customer.record.hash, { tokens_per_minute: 40 })
    const v = randomBytes(32).toString('base64url')
    const code = await t.request('/api/v1/auth/keys/code', {
      method: 'POST',
      headers: { ...json, ...bearer(customer.key) },
      body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: createHash('sha256').update(v).digest('base64url') }),
    })
    expect(code.status).toBe(200)
    const issued = await t.request('/api/v1/auth/keys', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code: (await code.json()).code, code_verifier: v }),
    })
    expect(issued.status).toBe(200)
    const child: string = (await issued.json()).key
    // 12 counted by the parent's key, then 12 + 21 fit in 40 through the child; 24 + 21 do not, through either.
    await served(await chat(customer.key))
    await served(await chat(child))
    expect(await keyTokens(customer.record.hash, 'minute', Date.parse('2026-11-26T12:00:00.000Z'))).toBe(2n * TOKENS)
    for (const key of [child, customer.key]) {
      const refused = await chat(key)
      expect(refused.status).toBe(429)
      expect((await refused.json()).error.metadata).toMatchObject({
        limit: 'key',
        limit_type: 'tokens_per_minute',
        tokens_per_minute: 40,
        available_tokens: 16,
      })
    }
    // The parent's limit raised: the child sees it at once.
    await t.gateway.admin.setKeyLimits(customer.record.hash, { tokens_per_minute: 100 })
    await served(await chat(child))
  })

  it('bad limits are a 400 naming the field, on every way in', async () => {
    const { customer, manager } = await customerWithManager()
    const bad: [Record<string, unknown>, string][] = [
      [{ tokens_per_minute: 0 }, 'tokens_per_minute'],
      [{ tokens_per_day: 1.5 }, 'tokens_per_day'],
      [{ tokens_per_day: 20_000_000_000 }, 'tokens_per_day'],
      [{ spend_limit: 'abc' }, 'spend_limit'],
      [{ spend_window: 'week' }, 'spend_window'],
      [{ max_in_flight: -1 }, 'max_in_flight'],
    ]
    for (const [body, param] of bad) {
      for (const [method, path, extra] of [
        ['POST', '/keys', { name: 'bad' }],
        ['PATCH', `/keys/${customer.record.hash}`, {}],
        ['PATCH', `/users/${customer.user.id}`, {}],
      ] as const) {
        const res = await call(manager, method, path, { ...extra, ...body })
        expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400)
        expect((await res.json()).error.param).toBe(param)
      }
    }
    // Zero spend is not a limit: the key routes' schema takes it, the check refuses it.
    const zero = await call(manager, 'PATCH', `/keys/${customer.record.hash}`, { spend_limit: '0' })
    expect(zero.status).toBe(400)
    expect((await zero.json()).error.param).toBe('spend_limit')
    await expect(t.gateway.admin.setOrgLimits(customer.user.org_id, { tokens_per_minute: 0 })).rejects.toMatchObject({
      status: 400,
      param: 'tokens_per_minute',
    })
    await expect(t.gateway.admin.setKeyLimits(customer.record.hash, { nope: 1 } as never)).rejects.toMatchObject({ status: 400, param: 'nope' })
  })
})
