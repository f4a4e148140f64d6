/**
 * Keys for one request (docs/byok.md#keys-for-one-request): OpenRouter's `X-Provider-API-Keys` header, sent over HTTP
 * as is and by `@openrouter/ai-sdk-provider`'s `api_keys` option (pinned in package.json), against the gateway on
 * 127.0.0.1 with the fake OpenAI upstream (test/fakes/openai.ts). The upstream gets the request's key, the request is
 * billed as BYOK (the platform fee, no upstream cost), and the key is found nowhere afterwards: not in the storage,
 * not in the logs, not in /generation, not in an error.
 */
import { inspect } from 'node:util'
import { createOpenRouter } from '@openrouter/ai-sdk-provider'
import { generateText, streamText } from 'ai'
import { Redis } from 'ioredis'
import { createStorage, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo, openaiCompatible } from '../../src/index'
import { parseProviderKeys } from '../../src/http/provider-keys'
import type { Logger } from '../../src/logger'
import { listKeys } from '../../src/stores/list-keys'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { postgresKind, redisKind, type StorageKind } from '../helpers/storages'
import { decimalText, units } from '../helpers/sse'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'EUR' }
const json = { 'content-type': 'application/json' }
const SERVICE_ALPHA = 'sk-service-alpha-0000'
const STORED_KEY = 'sk-cust-stored-key-4444'
/** The request's own keys: each long and distinctive, so that a scan finds any copy of it, whole or cut at 12 characters. */
const REQUEST_KEY = 'sk-req-good-7f3a9c1e5b2d8f4a6c0e'
const SDK_KEY = 'sk-req-sdk-2b8d4f6a0c1e3a5c7e9b'
const WRONG_KEY = 'sk-req-wrong-9e1c3a5b7d2f4e6a8c0b'
const ALL_KEYS = [REQUEST_KEY, SDK_KEY, WRONG_KEY]
const HEADER = 'X-Provider-API-Keys'

/** The fee at the test's rate: 0.05 × the upstream cost (prices in EUR: the cost is the EUR cost). */
const feeOf = (upstream: bigint) => (upstream * 5n) / 100n
const upstreamCost = (promptTokens: number, completionTokens: number) => BigInt(promptTokens) * units('0.000001') + BigInt(completionTokens) * units('0.000002')

describe('BYOK: keys for one request (X-Provider-API-Keys)', () => {
  let alpha: FakeOpenAI
  let storage: ReturnType<typeof createStorage>
  let t: TestGateway
  const logs: string[] = []
  const logger: Logger = {
    debug: (message, fields) => logs.push(`${message} ${inspect(fields, { depth: 10 })}`),
    info: (message, fields) => logs.push(`${message} ${inspect(fields, { depth: 10 })}`),
    warn: (message, fields) => logs.push(`${message} ${inspect(fields, { depth: 10 })}`),
    error: (message, fields) => logs.push(`${message} ${inspect(fields, { depth: 10 })}`),
  }

  beforeAll(async () => {
    alpha = await startFakeOpenAI({ apiKey: [SERVICE_ALPHA] })
    // The fake answers these keys; any other (WRONG_KEY) gets OpenAI's 401.
    for (const key of [STORED_KEY, REQUEST_KEY, SDK_KEY]) alpha.keyModes[key] = 'gpt-test'
    storage = createStorage({ driver: memoryDriver() })
    t = await startGateway({
      storage,
      logger,
      providers: [
        openaiCompatible({
          slug: 'alpha',
          name: 'Alpha',
          baseURL: alpha.url,
          apiKey: SERVICE_ALPHA,
          byokSupported: true,
          models: [{ id: 'rk/model', upstreamId: 'gpt-test', pricing }],
        }),
        // No service key: only a customer's key can serve it.
        openaiCompatible({
          slug: 'gamma',
          name: 'Gamma',
          baseURL: alpha.url,
          byokSupported: true,
          models: [{ id: 'rk/gamma-only', upstreamId: 'gpt-test', pricing }],
        }),
        demo(),
      ],
      byok: { freeRequestAllowance: 0, platformFeeRate: '0.05', settlementIntervalSeconds: 0 },
    })
  })
  afterAll(async () => {
    await t?.close()
    await alpha?.close()
  })

  const fresh = () => createCustomer(t.gateway, { credits: '5' })
  const chat = async (auth: Record<string, string>, keys: string | undefined, model = 'rk/model', extra: Record<string, unknown> = {}) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...auth, ...json, ...(keys === undefined ? {} : { [HEADER]: keys }) },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello request keys' }], ...extra }),
    })
    return { status: res.status, body: await res.json(), text: '' }
  }
  const keysSince = (from: number) => alpha.requests.slice(from).map((r) => r.headers.authorization)

  it('in process: the headers option carries the call’s own keys, billed as BYOK; a bad one is the same 400', async () => {
    const c = await fresh()
    const client = t.gateway.client({ key: c.key })
    const sent = alpha.requests.length
    const body = { model: 'rk/model', messages: [{ role: 'user' as const, content: 'hello in process' }] }
    const answer = await client.chat.completions.create(body, { headers: { [HEADER]: JSON.stringify({ alpha: REQUEST_KEY }) } })
    expect(keysSince(sent)).toEqual([`Bearer ${REQUEST_KEY}`])
    expect(answer.usage.is_byok).toBe(true)
    const record = await t.gateway.context.usage.get(c.user.org_id, answer.id)
    expect(record).toMatchObject({ is_byok: true, credential_id: 'request' })
    const refused = await client.chat.completions.create(body, { headers: { [HEADER]: '{"nope": "x"}' } }).catch((e) => e)
    expect([refused.status, refused.param]).toEqual([400, HEADER])
    expect(refused.message).not.toContain('"x"')
  })

  it('calls the provider with the request’s key, bills the platform fee as BYOK, and /generation says so', async () => {
    const c = await fresh()
    const before = await t.gateway.admin.getCredits(c.user.org_id)
    const sent = alpha.requests.length
    const { status, body } = await chat(c.auth, JSON.stringify({ alpha: REQUEST_KEY }))
    expect(status).toBe(200)
    expect(keysSince(sent)).toEqual([`Bearer ${REQUEST_KEY}`])
    const upstream = upstreamCost(body.usage.prompt_tokens, body.usage.completion_tokens)
    expect(upstream).toBeGreaterThan(0n)
    expect(body.usage).toMatchObject({ is_byok: true })
    expect(String(body.usage.cost_details.upstream_inference_cost)).toBe(decimalText(upstream))
    expect(String(body.usage.cost_eur)).toBe(decimalText(feeOf(upstream)))
    // No upstream cost is charged to credits: the fee is pending until settled.
    expect(await t.gateway.admin.getCredits(c.user.org_id)).toEqual(before)

    const generation = await (await t.request(`/api/v1/generation?id=${body.id}`, { headers: c.auth })).json()
    expect(generation.data).toMatchObject({ id: body.id, is_byok: true, provider_name: 'Alpha' })
    expect(String(generation.data.upstream_inference_cost)).toBe(decimalText(upstream))
    expect(JSON.stringify(generation)).not.toContain('sk-req')
    const record = await t.gateway.context.usage.get(c.user.org_id, body.id)
    expect(record).toMatchObject({ is_byok: true, credential_id: 'request', byok_counted: true, byok_free: false })

    // The calling key's counters: its BYOK usage is the upstream cost, its usage the fee (docs/keys.md).
    const key = (await (await t.request('/api/v1/key', { headers: c.auth })).json()).data
    expect([String(key.byok_usage), String(key.usage)]).toEqual([decimalText(upstream), decimalText(feeOf(upstream))])

    // The month's BYOK figures count it as a chargeable request with its fee pending.
    const usage = await (await t.request('/api/v1/byok/usage', { headers: c.auth })).json()
    expect(usage.data).toMatchObject({ successful_requests: 1, chargeable_requests: 1 })
    expect(usage.data.service_platform_fee_pending_eur).toBe(decimalText(feeOf(upstream)))
    expect(usage.data.estimated_upstream_cost_eur).toBe(decimalText(upstream))

    // Without the header, the same customer is served with the service key again: the key was for that request only.
    const after = alpha.requests.length
    const plain = await chat(c.auth, undefined)
    expect(plain.body.usage.is_byok).toBe(false)
    expect(keysSince(after)).toEqual([`Bearer ${SERVICE_ALPHA}`])
  })

  it('is honoured on the other routes that serve a model: Anthropic’s /messages, streamed', async () => {
    const c = await fresh()
    const sent = alpha.requests.length
    const res = await t.request('/api/v1/messages', {
      method: 'POST',
      headers: { ...c.auth, ...json, [HEADER]: JSON.stringify({ alpha: REQUEST_KEY }) },
      body: JSON.stringify({ model: 'rk/model', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'over messages' }] }),
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('message_stop')
    expect(keysSince(sent)).toEqual([`Bearer ${REQUEST_KEY}`])
    const [record] = await t.gateway.admin.usage(c.user.org_id)
    expect(record).toMatchObject({ is_byok: true, credential_id: 'request' })
  })

  it('wins over the org’s stored credential for that provider, for that request only', async () => {
    const c = await fresh()
    const stored = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...c.auth, ...json },
      body: JSON.stringify({ key: STORED_KEY, provider: 'alpha' }),
    })
    expect(stored.status).toBe(201)
    const sent = alpha.requests.length
    expect((await chat(c.auth, JSON.stringify({ alpha: REQUEST_KEY }))).body.usage.is_byok).toBe(true)
    expect((await chat(c.auth, undefined)).body.usage.is_byok).toBe(true)
    expect(keysSince(sent)).toEqual([`Bearer ${REQUEST_KEY}`, `Bearer ${STORED_KEY}`])
  })

  it('serves a provider that has no service key, which otherwise needs a stored credential', async () => {
    const c = await fresh()
    const without = await chat(c.auth, undefined, 'rk/gamma-only')
    expect(without.status).toBe(503)
    expect(without.body.error.message).toMatch(/gamma \(rk\/gamma-only\): needs your own key/)
    const sent = alpha.requests.length
    const { status, body } = await chat(c.auth, JSON.stringify({ gamma: REQUEST_KEY }), 'rk/gamma-only')
    expect(status).toBe(200)
    expect(body.usage.is_byok).toBe(true)
    expect(keysSince(sent)).toEqual([`Bearer ${REQUEST_KEY}`])
    // A key for a provider the model is not served by changes nothing (gamma's key for alpha's model).
    const other = alpha.requests.length
    expect((await chat(c.auth, JSON.stringify({ gamma: REQUEST_KEY }))).body.usage.is_byok).toBe(false)
    expect(keysSince(other)).toEqual([`Bearer ${SERVICE_ALPHA}`])
  })

  it('@openrouter/ai-sdk-provider’s api_keys: generateText and streamText reach the upstream with that key, billed as BYOK', async () => {
    const c = await fresh()
    const openrouter = createOpenRouter({ apiKey: c.key, baseURL: `${t.url}/api/v1`, api_keys: { alpha: SDK_KEY } })
    const before = await t.gateway.admin.getCredits(c.user.org_id)
    const sent = alpha.requests.length
    const whole = await generateText({ model: openrouter('rk/model'), prompt: 'Whole, please', maxRetries: 0 })
    expect(whole.text).toBe('Hello from gpt-test: Whole, please')
    const usage = (whole.providerMetadata!.openrouter as any).usage
    const upstream = upstreamCost(usage.promptTokens, usage.completionTokens)
    expect(usage.cost).toBe(Number(decimalText(feeOf(upstream))))

    const streamed = streamText({ model: openrouter('rk/model'), prompt: 'Streamed, please', maxRetries: 0 })
    let text = ''
    for await (const piece of streamed.textStream) text += piece
    expect(text).toBe('Hello from gpt-test: Streamed, please')
    const streamedUsage = ((await streamed.providerMetadata)!.openrouter as any).usage
    expect(streamedUsage.cost).toBe(Number(decimalText(feeOf(upstreamCost(streamedUsage.promptTokens, streamedUsage.completionTokens)))))

    expect(keysSince(sent)).toEqual([`Bearer ${SDK_KEY}`, `Bearer ${SDK_KEY}`])
    expect(alpha.requests.slice(sent).every((r) => r.headers['x-provider-api-keys'] === undefined)).toBe(true)
    expect(await t.gateway.admin.getCredits(c.user.org_id)).toEqual(before)
    const records = await t.gateway.admin.usage(c.user.org_id)
    expect(records.map((r) => [r.is_byok, r.credential_id])).toEqual([
      [true, 'request'],
      [true, 'request'],
    ])
  })

  it('refuses a malformed header with a 400 naming it, calling nobody and repeating no key', async () => {
    const c = await fresh()
    const cases: [string, RegExp][] = [
      [`not json ${REQUEST_KEY}`, /not JSON/],
      [JSON.stringify([REQUEST_KEY]), /expected an object/],
      ['null', /expected an object/],
      [JSON.stringify({ alpha: 42 }), /key for alpha must be a non-empty string/],
      [JSON.stringify({ alpha: '' }), /key for alpha must be a non-empty string/],
      [JSON.stringify({ alpha: `${REQUEST_KEY}\u0001` }), /key for alpha must be a non-empty string without control characters/],
      [JSON.stringify({ [REQUEST_KEY.toUpperCase()]: 'x' }), /not a provider slug/],
      [JSON.stringify({ nobody: REQUEST_KEY }), /no provider nobody on this gateway/],
      [JSON.stringify({ demo: REQUEST_KEY }), /demo does not accept customers' own keys/],
      [JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, 'k']))), /at most 50 providers/],
      [JSON.stringify({ alpha: 'k'.repeat(8200) }), /at most 8192 bytes/],
    ]
    const sent = alpha.requests.length
    for (const [header, message] of cases) {
      const { status, body } = await chat(c.auth, header)
      expect(status, header.slice(0, 60)).toBe(400)
      expect(body.error.param).toBe(HEADER)
      expect(body.error.message).toMatch(message)
      expect(JSON.stringify(body)).not.toContain(REQUEST_KEY.slice(0, 12))
      expect(JSON.stringify(body).toLowerCase()).not.toContain(REQUEST_KEY.slice(0, 12).toLowerCase())
    }
    expect(alpha.requests.length).toBe(sent)
    // An empty object names no provider: served as without the header.
    expect((await chat(c.auth, '{}')).status).toBe(200)
  })

  it('answers a key the provider refuses (401) as a failing stored credential is answered, never showing the key', async () => {
    // Alpha has a service key: as from a stored key it refuses, the request falls back to it (docs/byok.md).
    const c = await fresh()
    const sent = alpha.requests.length
    const fellBack = await chat(c.auth, JSON.stringify({ alpha: WRONG_KEY }))
    expect(fellBack.status).toBe(200)
    expect(fellBack.body.usage.is_byok).toBe(false)
    expect(keysSince(sent)).toEqual([`Bearer ${WRONG_KEY}`, `Bearer ${SERVICE_ALPHA}`])

    // Gamma has none: the answer is the one a stored credential with that key gets, the key redacted from it.
    const withStored = await fresh()
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...withStored.auth, ...json },
      body: JSON.stringify({ key: WRONG_KEY, provider: 'gamma' }),
    })
    expect(created.status).toBe(201)
    const storedFailure = await chat(withStored.auth, undefined, 'rk/gamma-only')
    const paid = (await t.gateway.admin.getCredits(c.user.org_id)).total_usage
    const requestFailure = await chat(c.auth, JSON.stringify({ gamma: WRONG_KEY }), 'rk/gamma-only')
    expect(storedFailure.status).toBe(502)
    expect(storedFailure.body.error.metadata).toMatchObject({ provider_name: 'Gamma', error_type: 'authentication' })
    expect(requestFailure.status).toBe(storedFailure.status)
    const shape = (b: any) => ({ ...b.error, metadata: { ...b.error.metadata, request_id: undefined, generation_id: undefined } })
    expect(shape(requestFailure.body)).toEqual(shape(storedFailure.body))
    expect(JSON.stringify(requestFailure.body)).not.toContain(WRONG_KEY.slice(0, 12))
    // Neither org paid anything for its failed request.
    expect((await t.gateway.admin.getCredits(c.user.org_id)).total_usage).toBe(paid)
    expect((await t.gateway.admin.getCredits(withStored.user.org_id)).total_usage).toBe('0')
  })

  it('leaves no trace of any request key: not in the storage (keys or values), not in the logs', async () => {
    const dump: string[] = []
    for (const key of await storage.getKeys()) dump.push(key, JSON.stringify(await storage.getItem(key)), String(await storage.getItemRaw(key)))
    const text = `${dump.join('\n')}\n${logs.join('\n')}`
    expect(dump.length).toBeGreaterThan(10)
    // The logs did see those requests: the fallback from the refused key names it by its stand-in, never by the key.
    expect(logs.some((line) => line.includes('alpha:byok:request failed for rk/model; trying alpha'))).toBe(true)
    for (const key of ALL_KEYS) {
      expect(text).not.toContain(key)
      expect(text).not.toContain(key.slice(0, 12))
    }
    // Whatever would print the keys a request gave (a log of its caller, a JSON dump) shows their providers only.
    const keys = parseProviderKeys(JSON.stringify({ alpha: REQUEST_KEY }))!
    expect([inspect(keys, { depth: 10, showHidden: true }), inspect(keys.keyFor('alpha')), JSON.stringify({ keys })].join(' ')).not.toContain('sk-req')
    expect(JSON.stringify({ keys })).toBe('{"keys":{"providers":["alpha"]}}')
    expect(keys.keyFor('alpha')!.secret()).toBe(REQUEST_KEY)
  })
})

/**
 * Two gateway instances over one Redis or PostgreSQL storage, each serving concurrent requests with their own keys:
 * every request is billed as BYOK once (the month's figures reconcile to the fees), and the shared storage holds no
 * request key afterwards (every key and value scanned).
 */
function describeShared(name: string, makeKind: () => StorageKind) {
  describe(`keys for one request on ${name}, two instances`, () => {
    const KEYS = Array.from({ length: 6 }, (_, i) => `sk-req-shared-${i}-5d1f3b7a9c2e4f6a`)
    let kind: StorageKind
    let upstream: FakeOpenAI
    let first: TestGateway
    let second: TestGateway

    beforeAll(async () => {
      upstream = await startFakeOpenAI({ apiKey: [SERVICE_ALPHA] })
      for (const key of KEYS) upstream.keyModes[key] = 'gpt-test'
      kind = makeKind()
      const options = () => ({
        storage: kind.open(),
        providers: [
          openaiCompatible({
            slug: 'alpha',
            name: 'Alpha',
            baseURL: upstream.url,
            apiKey: SERVICE_ALPHA,
            byokSupported: true,
            models: [{ id: 'rk/model', upstreamId: 'gpt-test', pricing }],
          }),
        ],
        byok: { freeRequestAllowance: 0, platformFeeRate: '0.05', settlementIntervalSeconds: 0 },
      })
      first = await startGateway(options())
      second = await startGateway(options())
    })
    afterAll(async () => {
      await first?.close()
      await second?.close()
      await upstream?.close()
      await kind?.cleanup()
    })

    it('bills each concurrent request once as BYOK, and stores none of the keys', async () => {
      const c = await createCustomer(first.gateway, { credits: '5' })
      const before = await first.gateway.admin.getCredits(c.user.org_id)
      const answers = await Promise.all(
        KEYS.flatMap((key, i) =>
          [first, second].map(async (gateway) => {
            const res = await gateway.request('/api/v1/chat/completions', {
              method: 'POST',
              headers: { ...c.auth, ...json, [HEADER]: JSON.stringify({ alpha: key }) },
              body: JSON.stringify({ model: 'rk/model', messages: [{ role: 'user', content: `shared ${i}` }] }),
            })
            return { status: res.status, body: await res.json() }
          }),
        ),
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
      expect(answers.every((a) => a.body.usage.is_byok)).toBe(true)
      const sentKeys = upstream.requests.map((r) => r.headers.authorization).sort()
      expect(sentKeys).toEqual(KEYS.flatMap((key) => [`Bearer ${key}`, `Bearer ${key}`]).sort())
      const upstreamTotal = answers.reduce((sum, a) => sum + upstreamCost(a.body.usage.prompt_tokens, a.body.usage.completion_tokens), 0n)
      const feeTotal = answers.reduce((sum, a) => sum + units(String(a.body.usage.cost_eur)), 0n)
      expect(feeTotal).toBe(answers.reduce((sum, a) => sum + feeOf(upstreamCost(a.body.usage.prompt_tokens, a.body.usage.completion_tokens)), 0n))
      // Seen from the other instance: every request counted once, its fee pending; the credits untouched.
      const usage = await (await second.request('/api/v1/byok/usage', { headers: c.auth })).json()
      expect(usage.data).toMatchObject({ successful_requests: KEYS.length * 2, chargeable_requests: KEYS.length * 2 })
      expect(usage.data.estimated_upstream_cost_eur).toBe(decimalText(upstreamTotal))
      expect(usage.data.service_platform_fee_pending_eur).toBe(decimalText(feeTotal))
      expect(await second.gateway.admin.getCredits(c.user.org_id)).toEqual(before)

      const dump = kind.name === 'redis' ? await redisDump(process.env.REDIS_URL!) : await storageDump(kind.open())
      expect(dump.length).toBeGreaterThan(10)
      const text = dump.join('\n')
      // The scan sees this org's records (its usage, its pending fees), and no key among them.
      expect(text).toContain(c.user.org_id)
      expect(text).toContain('byok-pending')
      expect(text).not.toContain('sk-req-shared')
      for (const key of KEYS) expect(text).not.toContain(key.slice(-16))
    })
  })
}

/** Every key and value of a storage, as text. */
async function storageDump(storage: Storage): Promise<string[]> {
  const dump: string[] = []
  for (const key of await listKeys(storage, '')) dump.push(key, JSON.stringify(await storage.getItem(key)))
  return dump
}

/**
 * Every key and value this process's test storages hold in Redis (their bases start `mg-test-<pid>-`), read raw: the
 * atomic engine keeps hashes and sorted sets beside unstorage's strings.
 */
async function redisDump(url: string): Promise<string[]> {
  const redis = new Redis(url)
  try {
    const dump: string[] = []
    for (const key of await redis.keys(`mg-test-${process.pid}-*`)) {
      const type = await redis.type(key)
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? await redis.hgetall(key)
            : type === 'set'
              ? await redis.smembers(key)
              : type === 'zset'
                ? await redis.zrange(key, 0, -1, 'WITHSCORES')
                : type === 'list'
                  ? await redis.lrange(key, 0, -1)
                  : `(${type})`
      dump.push(key, JSON.stringify(value))
    }
    return dump
  } finally {
    redis.disconnect()
  }
}

describe.skipIf(!process.env.REDIS_URL)('redis (REDIS_URL)', () => describeShared('redis', () => redisKind(process.env.REDIS_URL!)))
describe.skipIf(!process.env.DATABASE_URL)('postgres (DATABASE_URL)', () => describeShared('postgres', () => postgresKind(process.env.DATABASE_URL!)))
