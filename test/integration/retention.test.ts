import { createHash, randomBytes } from 'node:crypto'
import type { Storage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createGateway, demo, type Gateway } from '../../src/index'
import { sweepExpired } from '../../src/maintenance/sweep'
import { isRedisDriver } from '../../src/stores/atomic-redis'
import { fsKind, memoryKind, redisKind, type StorageKind } from '../helpers/storages'
import { createCustomer, TEST_SECRET } from '../helpers/server'

const DAY = 86_400_000
const json = { 'content-type': 'application/json' }
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

/** Retention (docs/retention.md): the sweep leaves only live records, on every storage. */
function describeRetention(makeKind: () => StorageKind) {
  let kind: StorageKind
  let storage: Storage
  let gateway: Gateway
  let now = 0
  beforeAll(() => {
    kind = makeKind()
    storage = kind.open()
  })
  afterAll(async () => {
    await gateway?.close()
    await kind.cleanup()
  })

  const count = async (prefix: string) => (await storage.getKeys(`gateway:${prefix}:`)).length
  const call = (path: string, init: RequestInit = {}) => gateway.fetch(new Request(`http://gateway.test/api/v1${path}`, init))

  it('removes expired windows, codes, consent answers, counters and old usage, and nothing live', async () => {
    const T0 = Date.parse('2026-01-05T10:00:00.000Z')
    now = T0
    gateway = createGateway({
      storage,
      secret: TEST_SECRET,
      logger: false,
      clock: () => now,
      providers: [demo()],
      rateLimits: { key: { requests: 60, windowSeconds: 1 } },
      retention: { sweepIntervalSeconds: 0 },
      byok: { settlementIntervalSeconds: 0 },
      auth: { resolveUser: (event) => event.req.headers.get('x-test-user') },
    })
    const { ctx, redis } = { ctx: gateway.context, redis: isRedisDriver(storage.getMount('gateway:').driver) }
    const raw = gateway.internals // BYOK settlement records are written directly, as a BYOK request would leave them
    const customer = await createCustomer(gateway, { credits: '10' })
    const user = { 'x-test-user': customer.user.id }
    const chat = async () => {
      const res = await call('/chat/completions', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hello' }] }),
      })
      expect(res.status).toBe(200)
    }
    const createCode = async () => {
      const verifier = randomBytes(32).toString('base64url')
      const res = await call('/auth/keys/code', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: s256(verifier) }),
      })
      expect(res.status).toBe(200)
      return { code: ((await res.json()) as { code: string }).code, verifier }
    }
    const consent = async () => {
      const verifier = randomBytes(32).toString('base64url')
      const begin = await call(`/auth?${new URLSearchParams({ callback_url: 'https://app.example/cb', code_challenge: s256(verifier) })}`, { headers: user })
      const request = new URL(begin.headers.get('location')!, 'http://gateway.test').searchParams.get('request')!
      const answer = await call('/auth/consent', {
        method: 'POST',
        headers: { ...user, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ request, decision: 'approve' }),
      })
      expect(answer.status).toBe(302)
      return { code: new URL(answer.headers.get('location')!).searchParams.get('code')!, verifier }
    }

    // Long ago: 5 chat requests (window T0), 50 codes by key and 2 by consent (window T0+1s), 200 requests over 20 windows.
    for (let i = 0; i < 5; i++) await chat()
    await gateway.admin.chargeCredits(customer.user.org_id, '0.5', 'an old charge') // a ledger entry, kept for ever
    now = T0 + 1000
    for (let i = 0; i < 50; i++) await createCode()
    for (let i = 0; i < 2; i++) await consent()
    for (let i = 0; i < 200; i++) {
      now = T0 + 2000 + i * 100
      expect((await call('/me', { headers: customer.auth })).status).toBe(200)
    }
    // One old usage record was a BYOK request: its settlement claim and a pending fee go with it.
    const oldRecords = await ctx.usage.list(customer.user.org_id)
    expect(oldRecords).toHaveLength(5)
    await raw.kv.set({ at: new Date(T0).toISOString(), fee_eur: '0' }, 'byok-settled', oldRecords[0].id)
    await raw.kv.set({ id: oldRecords[1].id, fee_eur: '0.01' }, 'byok-pending', customer.user.org_id, oldRecords[1].id)
    await raw.atomic.increment(raw.kv.key('byok-requests', customer.user.org_id, '2026-01'), 3)

    // 91 days on: 3 chat requests, 4 codes and 1 consent answer in window T1, one more request in window T1+1s.
    const T1 = T0 + 91 * DAY
    now = T1
    for (let i = 0; i < 3; i++) await chat()
    const liveCodes = [await createCode(), await createCode(), await createCode(), await createCode()]
    liveCodes.push(await consent())
    now = T1 + 1500
    expect((await call('/me', { headers: customer.auth })).status).toBe(200)
    const liveRecords = (await ctx.usage.list(customer.user.org_id)).slice(5)
    await raw.kv.set({ at: new Date(T1).toISOString(), fee_eur: '0' }, 'byok-settled', liveRecords[0].id)
    await raw.kv.set({ id: liveRecords[1].id, fee_eur: '0.01' }, 'byok-pending', customer.user.org_id, liveRecords[1].id)
    await raw.atomic.increment(raw.kv.key('byok-requests', customer.user.org_id, '2026-04'), 2)
    const ledger = await gateway.admin.ledger(customer.user.org_id)
    // The grant, the 5 old requests' charges and the admin charge, older than 90 days, and the 3 live requests' charges.
    expect(ledger.map((e) => Date.parse(e.at))).toEqual([...Array(7).fill(T0), T1, T1, T1])
    expect(
      ledger
        .filter((e) => e.generation_id)
        .map((e) => e.generation_id)
        .sort(),
    ).toEqual([...oldRecords, ...liveRecords].map((r) => r.id).sort())

    expect([
      await count('codes'),
      await count('consent-used'),
      await count('usage'),
      await count('byok-settled'),
      await count('byok-pending'),
      await count('byok-requests'),
    ]).toEqual([57, 3, 8, 2, 2, 2])
    expect([await count('generation-ids'), await count('rollups')]).toEqual([8, 10])
    if (redis) {
      // Redis expires windows (and now codes) by itself: each carries a TTL, and the sweep leaves windows alone.
      const client = storage.getMount('gateway:').driver as unknown as { getInstance(): { pttl(key: string): Promise<number> }; options: { base: string } }
      const raw = (key: string) => `${client.options.base}:${key}`
      // A TTL on each (PTTL -1 is a key without one); -2: it expired by itself between the listing and the question.
      const ttls = async (prefix: string) => Promise.all((await storage.getKeys(prefix)).slice(0, 5).map((key) => client.getInstance().pttl(raw(key))))
      for (const ttl of [...(await ttls('gateway:ratelimit:')), ...(await ttls('gateway:codes:'))]) expect(ttl === -2 || ttl > 0, `PTTL ${ttl}`).toBe(true)
    } else {
      expect(await count('ratelimit')).toBe(24)
    }

    // A bounded run removes at most 10 per kind, oldest windows first; the next run removes the rest.
    const first = await sweepExpired(ctx, { limit: 10 })
    // The old day's rollups: its index and 4 counters (requests, prompt and completion tokens, usage; reasoning and BYOK were 0).
    expect(first).toEqual({
      rate_limit_windows: redis ? 0 : 10,
      codes: 10,
      consent_answers: 2,
      byok_request_counters: 1,
      end_user_counters: 0,
      usage_records: 5,
      generation_ids: 5,
      usage_rollups: 5,
      stored_responses: 0,
      revoked_keys: 0,
      cached_answers: 0,
      byok_claims: 2,
    })
    if (!redis) {
      const starts = (await storage.getKeys('gateway:ratelimit:')).map((k) => Number(k.slice(k.lastIndexOf(':') + 1))).sort((a, b) => a - b)
      expect(starts[0]).toBe(T0 + 10_000) // the 10 oldest (T0, T0+1s, …, T0+9s) are gone
    }
    const second = await gateway.admin.sweep()
    expect(second).toEqual({
      rate_limit_windows: redis ? 0 : 12,
      codes: 42,
      consent_answers: 0,
      byok_request_counters: 0,
      end_user_counters: 0,
      usage_records: 0,
      generation_ids: 0,
      usage_rollups: 0,
      stored_responses: 0,
      revoked_keys: 0,
      cached_answers: 0,
      byok_claims: 0,
    })

    // What is live is left: 2 windows, 5 codes, 1 consent answer, 3 usage records with their BYOK records, 1 counter.
    if (!redis)
      expect((await storage.getKeys('gateway:ratelimit:')).map((k) => Number(k.slice(k.lastIndexOf(':') + 1))).sort((a, b) => a - b)).toEqual([T1, T1 + 1000])
    expect([
      await count('codes'),
      await count('consent-used'),
      await count('usage'),
      await count('byok-settled'),
      await count('byok-pending'),
      await count('byok-requests'),
    ]).toEqual([5, 1, 3, 1, 1, 1])
    expect([await count('generation-ids'), await count('rollups')]).toEqual([3, 5]) // the live day's rollups stay
    expect((await ctx.usage.list(customer.user.org_id)).map((r) => r.id)).toEqual(liveRecords.map((r) => r.id))
    expect(await raw.kv.get('byok-settled', liveRecords[0].id)).not.toBeNull()
    expect(await raw.kv.get('byok-pending', customer.user.org_id, liveRecords[1].id)).not.toBeNull()
    expect(await raw.kv.get('byok-requests', customer.user.org_id, '2026-04')).not.toBeNull()
    expect(await gateway.admin.ledger(customer.user.org_id)).toEqual(ledger)
    // The live window still counts: 2 requests so far in T1+1s (the /me above and this one). Not on Redis: there the
    // sweep leaves windows alone (above), and Redis drops this one 2 s of real time after it began, which the sweeps
    // between (each scans the whole keyspace of a Redis other tests fill too) may outlast on a loaded machine.
    const remaining = (await call('/me', { headers: customer.auth })).headers.get('x-ratelimit-remaining')
    if (!redis) expect(remaining).toBe('58')
    // A live code still exchanges for a key.
    const exchanged = await call('/auth/keys', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code: liveCodes[4].code, code_verifier: liveCodes[4].verifier }),
    })
    expect(exchanged.status).toBe(200)
    // A third run has nothing left to do.
    expect(Object.values(await gateway.admin.sweep()).every((n) => n === 0)).toBe(true)
  })
}

describe('retention: memory', () => describeRetention(memoryKind))
describe('retention: fs', () => describeRetention(fsKind))
describe.skipIf(!process.env.REDIS_URL)('retention: redis (REDIS_URL)', () => describeRetention(() => redisKind(process.env.REDIS_URL!)))

describe('retention: the sweep timer', () => {
  // The in-memory storage answers on promises alone: a few turns of the event loop let a started sweep finish.
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  }

  it('lets other work run while it sweeps, and lists the default storage straight from its map', async () => {
    const gateway = createGateway({ secret: TEST_SECRET, logger: false, byok: { settlementIntervalSeconds: 0 }, retention: { sweepIntervalSeconds: 0 } })
    try {
      // 100,000 ledger entries (never swept), which every listing of the storage passes over.
      const map = (gateway.internals.storage.getMount('').driver as { getInstance(): Map<string, unknown> }).getInstance()
      for (let i = 0; i < 100_000; i++) map.set(`gateway:ledger:org_1:${String(i).padStart(15, '0')}-entry`, '{}')
      let turns = 0
      let sweeping = true
      const turn = () => {
        if (!sweeping) return
        turns++
        setImmediate(turn)
      }
      setImmediate(turn)
      // Yielding after every step (sliceMs 0; 10 ms of work by default): the event loop turned between them.
      const counts = await sweepExpired(gateway.context, { sliceMs: 0 })
      sweeping = false
      expect(turns).toBeGreaterThanOrEqual(10)
      expect(Object.values(counts).reduce((sum, n) => sum + n, 0)).toBe(0)
      expect(map.size).toBeGreaterThanOrEqual(100_000)
      // A listing of a kind: what is below its prefix, as unstorage lists it.
      await gateway.internals.storage.setItem('gateway:codes:abc', { expires_at: 1 })
      expect(await gateway.context.expiring.list('codes')).toEqual(['abc'])
    } finally {
      await gateway.close()
    }
  })

  it('sweeps shortly after start and every interval, and close() clears its timers', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    try {
      const baseline = vi.getTimerCount()
      let now = Date.parse('2026-01-05T10:00:00.000Z')
      const gateway = createGateway({
        secret: TEST_SECRET,
        logger: false,
        clock: () => now,
        byok: { settlementIntervalSeconds: 0 },
        retention: { sweepIntervalSeconds: 60 },
      })
      expect(vi.getTimerCount()).toBe(baseline + 3) // the first sweep, the interval, and the authentication cache's epoch poll
      const codes = gateway.context.codes
      await codes.create({ userId: 'u', challenge: 'c', method: 'S256', callbackOrigin: 'https://app.example' })
      const codeKeys = () => gateway.internals.storage.getKeys('gateway:codes:')
      now += 601_000
      await vi.advanceTimersByTimeAsync(5_000)
      await settle()
      expect(await codeKeys()).toHaveLength(0)
      await codes.create({ userId: 'u', challenge: 'c', method: 'S256', callbackOrigin: 'https://app.example' })
      now += 601_000
      await vi.advanceTimersByTimeAsync(55_000)
      await settle()
      expect(await codeKeys()).toHaveLength(0)
      await gateway.close()
      expect(vi.getTimerCount()).toBe(baseline)
      // 0 turns the sweep off: no timer at all (with the authentication cache off too).
      const off = createGateway({
        secret: TEST_SECRET,
        logger: false,
        byok: { settlementIntervalSeconds: 0 },
        retention: { sweepIntervalSeconds: 0 },
        authCache: { ttlMs: 0 },
      })
      expect(vi.getTimerCount()).toBe(baseline)
      await off.close()
    } finally {
      vi.useRealTimers()
    }
  })

  it('refuses a retention that is not a positive number of days', () => {
    expect(() => createGateway({ secret: TEST_SECRET, logger: false, retention: { usageDays: 0 } })).toThrow(/retention.usageDays/)
    expect(() => createGateway({ secret: TEST_SECRET, logger: false, retention: { sweepIntervalSeconds: -1 } })).toThrow(/retention.sweepIntervalSeconds/)
  })
})
