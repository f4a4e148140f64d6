import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type GatewayOptions, type ProviderModel } from '../../src/index'
import { fromUnits, toUnits } from '../../src/billing/money'
import { cacheKeyOf } from '../../src/cache/key'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { eventually } from '../helpers/eventually'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const models: ProviderModel[] = [
  { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing },
  { id: 'fake/failing', upstreamId: 'failing', pricing },
  { id: 'fake/cut', upstreamId: 'fail-midstream', pricing },
  { id: 'fake/embed', upstreamId: 'embed', pricing, endpoints: ['/embeddings'], embedding: { dimensions: 8 } },
]
const json = { 'content-type': 'application/json' }
const on = { 'x-openrouter-cache': 'true' }
const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'fake/gpt-test',
  max_tokens: 20,
  messages: [{ role: 'user', content }],
  ...extra,
})
type Customer = Awaited<ReturnType<typeof createCustomer>>

let upstream: FakeOpenAI
let clock = Date.now()
const gatewayOptions = (extra: GatewayOptions = {}): GatewayOptions => ({
  clock: () => clock,
  providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })],
  ...extra,
})

beforeAll(async () => {
  upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
  upstream.modes.failing = 'fail-500'
})
afterAll(async () => {
  await upstream?.close()
})

// POSTs a body as a customer to a route of a gateway.
const post = (t: TestGateway, who: Customer, path: string, body: unknown, headers: Record<string, string> = on) =>
  t.request(`/api/v1${path}`, { method: 'POST', headers: { ...who.auth, ...json, ...headers }, body: JSON.stringify(body) })
// Waits until the org's cached bytes exceed `above` (an answer is stored in the background once it went out).
const storedBeyond = (t: TestGateway, who: Customer, above: number) =>
  eventually(
    () => t.gateway.context.responseCache.usedBytes(who.user.org_id),
    (used) => used > above,
  )
const balanceOf = async (t: TestGateway, who: Customer) => (await t.gateway.admin.getCredits(who.user.org_id)).balance

describe('response cache (memory)', () => {
  let t: TestGateway
  let alice: Customer
  let bob: Customer

  beforeAll(async () => {
    t = await startGateway(gatewayOptions())
    alice = await createCustomer(t.gateway, { credits: '10' })
    bob = await createCustomer(t.gateway, { credits: '10' })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('answers a second identical request from the cache: no upstream call, credits unchanged to the unit, a new generation id', async () => {
    const first = await post(t, alice, '/chat/completions', chatBody('whole one'))
    expect(first.status).toBe(200)
    expect(first.headers.get('x-openrouter-cache-status')).toBe('MISS')
    expect(first.headers.get('x-openrouter-cache-ttl')).toBe('300')
    const missed = await first.json()
    expect(Number(missed.usage.cost)).toBeGreaterThan(0)
    await storedBeyond(t, alice, 0)
    const calls = upstream.requests.length
    const balance = await balanceOf(t, alice)

    const second = await post(t, alice, '/chat/completions', chatBody('whole one'))
    expect(second.status).toBe(200)
    expect(second.headers.get('x-openrouter-cache-status')).toBe('HIT')
    const hit = await second.json()
    expect(upstream.requests.length).toBe(calls)
    expect(await balanceOf(t, alice)).toBe(balance)
    expect(hit.id).toMatch(/^gen-/)
    expect(hit.id).not.toBe(missed.id)
    expect(second.headers.get('x-generation-id')).toBe(hit.id)
    expect(hit.choices).toEqual(missed.choices)
    expect(hit.model).toBe(missed.model)
    expect(hit.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0, cost_eur: 0 })

    const stats = await (await t.request(`/api/v1/generation?id=${hit.id}`, { headers: alice.auth })).json()
    expect(stats.data).toMatchObject({ id: hit.id, cache_hit: true, cached_from: missed.id, response_cache_source_id: missed.id, total_cost: 0, usage: 0 })
    const original = await (await t.request(`/api/v1/generation?id=${missed.id}`, { headers: alice.auth })).json()
    expect(original.data).toMatchObject({ cache_hit: false, cached_from: null })
    // Field order does not matter: the body is keyed as canonical JSON.
    const reordered = await post(t, alice, '/chat/completions', { messages: [{ content: 'whole one', role: 'user' }], max_tokens: 20, model: 'fake/gpt-test' })
    expect(reordered.headers.get('x-openrouter-cache-status')).toBe('HIT')
    expect(upstream.requests.length).toBe(calls)
  })

  it('misses for another key of the same user, another org, another body and without the header', async () => {
    const used = await t.gateway.context.responseCache.usedBytes(alice.user.org_id)
    await post(t, alice, '/chat/completions', chatBody('keyed'))
    await storedBeyond(t, alice, used)
    const calls = upstream.requests.length
    const otherKey = await t.gateway.admin.issueKey({ userId: alice.user.id, label: 'second' })
    const second = { ...alice, key: otherKey.key, auth: { authorization: `Bearer ${otherKey.key}` } }
    expect((await post(t, second, '/chat/completions', chatBody('keyed'))).headers.get('x-openrouter-cache-status')).toBe('MISS')
    expect((await post(t, bob, '/chat/completions', chatBody('keyed'))).headers.get('x-openrouter-cache-status')).toBe('MISS')
    expect((await post(t, alice, '/chat/completions', chatBody('keyed', { temperature: 0.5 }))).headers.get('x-openrouter-cache-status')).toBe('MISS')
    const plain = await post(t, alice, '/chat/completions', chatBody('keyed'), {})
    expect(plain.headers.get('x-openrouter-cache-status')).toBeNull()
    expect(upstream.requests.length).toBe(calls + 4)
  })

  it('replays a stream byte for byte, but for the generation id and the usage chunk', async () => {
    const body = chatBody('stream me', { stream: true })
    const first = await post(t, alice, '/chat/completions', body)
    const missId = first.headers.get('x-generation-id')!
    const missText = await first.text()
    expect(missText).toContain(missId)
    expect(missText).toContain('data: [DONE]')
    await eventually(
      async () => (await t.gateway.context.usage.get(alice.user.org_id, missId))?.status,
      (status) => status === 'success',
    )
    await eventually(
      () => t.gateway.context.responseCache.get(alice.user.org_id, cacheKeyOf({ route: '/chat/completions', body, keyHash: alice.record.hash })),
      (entry) => entry !== null,
    )
    const calls = upstream.requests.length
    const second = await post(t, alice, '/chat/completions', body)
    expect(second.headers.get('x-openrouter-cache-status')).toBe('HIT')
    expect(second.headers.get('content-type')).toContain('text/event-stream')
    const hitId = second.headers.get('x-generation-id')!
    const hitText = await second.text()
    expect(upstream.requests.length).toBe(calls)
    expect(hitId).not.toBe(missId)
    // The documented rule: replace the generation id by a mark; every line but the usage chunk is then the same bytes.
    const lines = (text: string, id: string) => text.split(id).join('<id>').split('\n')
    const missLines = lines(missText, missId)
    const hitLines = lines(hitText, hitId)
    expect(hitLines.length).toBe(missLines.length)
    const usageLine = missLines.findIndex((line) => line.includes('"usage":{'))
    expect(usageLine).toBeGreaterThan(0)
    hitLines.forEach((line, i) => {
      if (i !== usageLine) expect(line).toBe(missLines[i])
    })
    expect(JSON.parse(hitLines[usageLine].slice(6)).usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, cost: 0 })
    const stats = await (await t.request(`/api/v1/generation?id=${hitId}`, { headers: alice.auth })).json()
    expect(stats.data).toMatchObject({ cache_hit: true, cached_from: missId, streamed: true })
  })

  it('serves /completions, /messages, /responses and /embeddings from the cache too', async () => {
    const cases: [string, unknown][] = [
      ['/completions', { model: 'fake/gpt-test', prompt: 'complete me', max_tokens: 10 }],
      ['/messages', { model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'message me' }] }],
      ['/responses', { model: 'fake/gpt-test', input: 'respond to me', store: false }],
      ['/embeddings', { model: 'fake/embed', input: ['embed me'] }],
    ]
    for (const [path, body] of cases) {
      const used = await t.gateway.context.responseCache.usedBytes(alice.user.org_id)
      const first = await post(t, alice, path, body)
      expect(first.status, path).toBe(200)
      const firstBody = await first.json()
      await storedBeyond(t, alice, used)
      const calls = upstream.requests.length
      const second = await post(t, alice, path, body)
      expect(second.headers.get('x-openrouter-cache-status'), path).toBe('HIT')
      const hit = await second.json()
      expect(upstream.requests.length, path).toBe(calls)
      const generationId = second.headers.get('x-generation-id')!
      expect(generationId).not.toBe(first.headers.get('x-generation-id'))
      const stats = await (await t.request(`/api/v1/generation?id=${generationId}`, { headers: alice.auth })).json()
      expect(stats.data.cache_hit, path).toBe(true)
      if (path === '/embeddings') expect(hit.data).toEqual(firstBody.data)
    }
  })

  it('does not cache errors, nor a stream cut short', async () => {
    const used = await t.gateway.context.responseCache.usedBytes(bob.user.org_id)
    const failing = { model: 'fake/failing', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }
    const first = await post(t, bob, '/chat/completions', failing)
    expect(first.status).toBeGreaterThanOrEqual(500)
    const calls = upstream.requests.length
    const second = await post(t, bob, '/chat/completions', failing)
    expect(second.status).toBeGreaterThanOrEqual(500)
    expect(upstream.requests.length).toBeGreaterThan(calls)

    const cut = { model: 'fake/cut', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] }
    const streamed = await post(t, bob, '/chat/completions', cut)
    const id = streamed.headers.get('x-generation-id')!
    await streamed.text()
    await eventually(
      async () => (await t.gateway.context.usage.get(bob.user.org_id, id))?.status,
      (status) => status !== undefined,
    )
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await t.gateway.context.responseCache.usedBytes(bob.user.org_id)).toBe(used)
    const again = await post(t, bob, '/chat/completions', cut)
    expect(again.headers.get('x-openrouter-cache-status')).toBe('MISS')
    await again.text()
  })

  it('expires an answer after its TTL (X-OpenRouter-Cache-TTL) and refuses a bad header', async () => {
    const headers = { ...on, 'x-openrouter-cache-ttl': '60' }
    const first = await post(t, bob, '/chat/completions', chatBody('short-lived'), headers)
    expect(first.headers.get('x-openrouter-cache-ttl')).toBe('60')
    await storedBeyond(t, bob, 0)
    expect((await post(t, bob, '/chat/completions', chatBody('short-lived'), headers)).headers.get('x-openrouter-cache-status')).toBe('HIT')
    clock += 61_000
    // Where the storage does not expire records by itself, the sweep removes the expired answer.
    expect((await t.gateway.admin.sweep()).cached_answers).toBeGreaterThanOrEqual(1)
    const calls = upstream.requests.length
    expect((await post(t, bob, '/chat/completions', chatBody('short-lived'), headers)).headers.get('x-openrouter-cache-status')).toBe('MISS')
    expect(upstream.requests.length).toBe(calls + 1)

    const bad = await post(t, bob, '/chat/completions', chatBody('x'), { ...on, 'x-openrouter-cache-ttl': '86401' })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error.message).toContain('x-openrouter-cache-ttl')
    const badSwitch = await post(t, bob, '/chat/completions', chatBody('x'), { 'x-openrouter-cache': 'yes' })
    expect(badSwitch.status).toBe(400)
  })

  it('turns the cache on for an org through the admin API, and a request opts out with X-OpenRouter-Cache: false', async () => {
    const carol = await createCustomer(t.gateway, { credits: '1' })
    await t.gateway.admin.setResponseCache({ orgId: carol.user.org_id }, { enabled: true, ttl_seconds: 120 })
    const first = await post(t, carol, '/chat/completions', chatBody('org default'), {})
    expect(first.headers.get('x-openrouter-cache-status')).toBe('MISS')
    expect(first.headers.get('x-openrouter-cache-ttl')).toBe('120')
    await storedBeyond(t, carol, 0)
    expect((await post(t, carol, '/chat/completions', chatBody('org default'), {})).headers.get('x-openrouter-cache-status')).toBe('HIT')
    const calls = upstream.requests.length
    const out = await post(t, carol, '/chat/completions', chatBody('org default'), { 'x-openrouter-cache': 'false' })
    expect(out.headers.get('x-openrouter-cache-status')).toBeNull()
    expect(upstream.requests.length).toBe(calls + 1)
    // The key's own setting wins over its org's.
    await t.gateway.admin.setResponseCache({ key: carol.key }, { enabled: false })
    expect((await post(t, carol, '/chat/completions', chatBody('org default'), {})).headers.get('x-openrouter-cache-status')).toBeNull()
    await expect(t.gateway.admin.setResponseCache({ orgId: carol.user.org_id }, { enabled: true, ttl_seconds: 0 })).rejects.toThrow('ttl_seconds')
  })
})

describe('response cache limits and fee', () => {
  let t: TestGateway
  let dave: Customer

  beforeAll(async () => {
    t = await startGateway(gatewayOptions({ cache: { enabled: true, hitFee: '0.0001', maxBytesPerOrg: 2000, maxEntryBytes: 1800 } }))
    dave = await createCustomer(t.gateway, { credits: '1' })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('charges the hit fee exactly, through a hold, with a ledger entry', async () => {
    await post(t, dave, '/chat/completions', chatBody('fee'), {})
    const used = await storedBeyond(t, dave, 0)
    expect(used).toBeGreaterThan(1000) // one answer: a second does not fit under the org's 2000 bytes
    const before = await t.gateway.admin.getCredits(dave.user.org_id)
    const hit = await post(t, dave, '/chat/completions', chatBody('fee'), {})
    expect(hit.headers.get('x-openrouter-cache-status')).toBe('HIT')
    expect((await hit.json()).usage).toMatchObject({ cost: 0.0001, cost_eur: 0.0001, cost_currency: 'EUR', prompt_tokens: 0 })
    const after = await t.gateway.admin.getCredits(dave.user.org_id)
    expect(fromUnits(toUnits(before.balance) - toUnits(after.balance))).toBe('0.0001')
    const ledger = await t.gateway.admin.ledger(dave.user.org_id)
    expect(ledger.some((entry) => entry.kind === 'charge' && entry.note?.includes('cache hit') && entry.amount === '0.0001')).toBe(true)
  })

  it('stores nothing past the org bound, nor an answer over the entry bound', async () => {
    const used = await t.gateway.context.responseCache.usedBytes(dave.user.org_id)
    await post(t, dave, '/chat/completions', chatBody('second answer'), {})
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(await t.gateway.context.responseCache.usedBytes(dave.user.org_id)).toBe(used)
    expect((await post(t, dave, '/chat/completions', chatBody('second answer'), {})).headers.get('x-openrouter-cache-status')).toBe('MISS')
    // Another org has its own bound; an answer over 1800 bytes is not cached.
    const erin = await createCustomer(t.gateway, { credits: '1' })
    const large = { model: 'fake/embed', input: Array.from({ length: 30 }, (_, i) => `text ${i}`) }
    const first = await post(t, erin, '/embeddings', large, {})
    expect((await first.text()).length).toBeGreaterThan(1800)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(await t.gateway.context.responseCache.usedBytes(erin.user.org_id)).toBe(0)
    expect((await post(t, erin, '/embeddings', large, {})).headers.get('x-openrouter-cache-status')).toBe('MISS')
    const small = await post(t, erin, '/chat/completions', chatBody('fits'), {})
    expect(small.status).toBe(200)
    expect(await storedBeyond(t, erin, 0)).toBeGreaterThan(0)
  })
})

const REDIS_URL = process.env.REDIS_URL
const DATABASE_URL = process.env.DATABASE_URL
const shared: [string, string | undefined, (url: string) => StorageKind][] = [
  ['Redis', REDIS_URL, redisKind],
  ['PostgreSQL', DATABASE_URL, postgresKind],
]
describe.each(shared)('response cache on %s shared by two instances', (_name, url, makeKind) => {
  let kind: StorageKind
  let a: TestGateway
  let b: TestGateway
  let frank: Customer

  beforeAll(async () => {
    if (!url) return
    kind = makeKind(url)
    a = await startGateway(gatewayOptions({ storage: kind.open(), cache: { maxBytesPerOrg: 5000 } }))
    b = await startGateway(gatewayOptions({ storage: kind.open(), cache: { maxBytesPerOrg: 5000 } }))
    frank = await createCustomer(a.gateway, { credits: '1' })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await kind?.cleanup()
  })

  it.runIf(url)('a hit on one instance of an answer the other cached, billed 0', async () => {
    const first = await post(a, frank, '/chat/completions', chatBody('shared'))
    expect(first.headers.get('x-openrouter-cache-status')).toBe('MISS')
    await first.text()
    await storedBeyond(a, frank, 0)
    const calls = upstream.requests.length
    const balance = await balanceOf(b, frank)
    const second = await post(b, frank, '/chat/completions', chatBody('shared'))
    expect(second.headers.get('x-openrouter-cache-status')).toBe('HIT')
    await second.text()
    expect(upstream.requests.length).toBe(calls)
    expect(await balanceOf(b, frank)).toBe(balance)
    expect(await b.gateway.context.responseCache.usedBytes(frank.user.org_id)).toBe(await a.gateway.context.responseCache.usedBytes(frank.user.org_id))
  })

  it.runIf(url)('racing answers on both instances are stored only while the org bound has room, counted exactly', async () => {
    const grace = await createCustomer(a.gateway, { credits: '1' })
    const bodies = Array.from({ length: 10 }, (_, i) => chatBody(`race ${i}`))
    const answers = await Promise.all(bodies.map((body, i) => post(i % 2 ? b : a, grace, '/chat/completions', body).then((r) => r.text())))
    expect(answers).toHaveLength(10)
    await storedBeyond(a, grace, 0)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const entries = await Promise.all(
      bodies.map((body) =>
        a.gateway.context.responseCache.get(grace.user.org_id, cacheKeyOf({ route: '/chat/completions', body, keyHash: grace.record.hash })),
      ),
    )
    const stored = entries.filter((entry) => entry !== null)
    const used = await b.gateway.context.responseCache.usedBytes(grace.user.org_id)
    expect(stored.length).toBeGreaterThanOrEqual(1)
    expect(used).toBe(stored.reduce((sum, entry) => sum + entry!.bytes, 0))
    expect(used).toBeLessThanOrEqual(5000)
    expect(used + Math.min(...stored.map((entry) => entry!.bytes))).toBeGreaterThan(5000)
  })
})
