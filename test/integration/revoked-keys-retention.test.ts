/**
 * Revoked and deleted keys are removed by the retention sweep (issue 28, item 10; docs/retention.md#revoked-and-deleted-keys):
 * `retention.revokedKeysDays` after a key was revoked (or deleted), its record goes with everything kept about it (its
 * list entries, minted-by entries, last use, spending counters) and its entry in the index of revoked keys; it still
 * answers 401, and so do the keys it minted; live keys and the org's count of live keys are untouched. Two instances
 * sweep at once over memory, Redis and PostgreSQL.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Storage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type GatewayOptions } from '../../src/index'
import { demo } from '../../src/providers/demo'
import type { ApiKeyRecord } from '../../src/stores/account-types'
import { entryName } from '../../src/stores/key-list'
import { eventually } from '../helpers/eventually'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const DAY = 86_400_000
const HOUR = 3_600_000
const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** What every client of the gateway does: chat, mint a key through a code, manage keys with a management key. */
function clientOf(t: TestGateway) {
  const code = async (key: string) => {
    const verifier = randomBytes(32).toString('base64url')
    const res = await t.request('/api/v1/auth/keys/code', {
      method: 'POST',
      headers: { ...json, ...bearer(key) },
      body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: createHash('sha256').update(verifier).digest('base64url') }),
    })
    expect(res.status).toBe(200)
    return { code: (await res.json()).code as string, verifier }
  }
  const exchange = (made: { code: string; verifier: string }) =>
    t.request('/api/v1/auth/keys', { method: 'POST', headers: json, body: JSON.stringify({ code: made.code, code_verifier: made.verifier }) })
  return {
    me: async (key: string) => (await t.request('/api/v1/me', { headers: bearer(key) })).status,
    chat: async (key: string) => {
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...json, ...bearer(key) },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hello' }] }),
      })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    },
    code,
    exchange,
    mint: async (key: string) => {
      const res = await exchange(await code(key))
      expect(res.status).toBe(200)
      return (await res.json()).key as string
    },
    manage: (manager: string, method: string, path: string, body?: unknown) =>
      t.request(`/api/v1${path}`, { method, headers: { ...bearer(manager), ...json }, body: body === undefined ? undefined : JSON.stringify(body) }),
    create: async (manager: string, body: Record<string, unknown>) => {
      const res = await t.request('/api/v1/keys', { method: 'POST', headers: { ...bearer(manager), ...json }, body: JSON.stringify(body) })
      expect(res.status).toBe(201)
      return (await res.json()).key as string
    },
  }
}

/** The hashes `GET /keys` lists (every page), with `include_disabled=true` or not. */
async function listed(t: TestGateway, manager: string, all: boolean): Promise<string[]> {
  const res = await clientOf(t).manage(manager, 'GET', `/keys${all ? '?include_disabled=true' : ''}`)
  expect(res.status).toBe(200)
  return ((await res.json()).data as { hash: string }[]).map((k) => k.hash)
}

/** The storage keys (of any kind) whose names contain `hash`, sorted. */
async function keysNaming(storage: Storage, hash: string): Promise<string[]> {
  return (await storage.getKeys('')).filter((key) => key.includes(hash)).sort()
}

/**
 * A view of a storage whose writes of keys matching `pattern` wait while it is held (as writes that a slow network
 * delays): they land when released. Everything else (its driver, so its locks) is the storage's own.
 */
function heldWrites(storage: Storage, pattern: RegExp) {
  let gate: Promise<void> | undefined
  let release = () => {}
  let waiting = 0
  const view: Storage = Object.create(storage)
  view.setItem = (async (key: string, ...rest: unknown[]) => {
    if (gate && pattern.test(key)) {
      waiting++
      await gate
    }
    return (storage.setItem as (...args: unknown[]) => Promise<void>)(key, ...rest)
  }) as Storage['setItem']
  return {
    storage: view,
    hold: () => {
      gate = new Promise((resolve) => (release = resolve))
    },
    release: () => {
      gate = undefined
      release()
    },
    waiting: () => waiting,
  }
}

function describeRemoval(name: string, makeKind: () => StorageKind) {
  describe(`${name}: two instances, revoked and deleted keys are removed after retention.revokedKeysDays`, () => {
    let kind: StorageKind
    let storage: Storage
    let a: TestGateway
    let b: TestGateway
    const T0 = Date.parse('2026-03-02T09:00:00.000Z')
    let clock = T0

    beforeAll(async () => {
      kind = makeKind()
      storage = kind.open()
      const options = (): GatewayOptions => ({
        storage: kind.open(),
        clock: () => clock,
        providers: [demo()],
        keys: { maxPerOrg: 10 },
        authCache: { ttlMs: 0 },
        byok: { settlementIntervalSeconds: 0 },
        retention: { sweepIntervalSeconds: 0, revokedKeysDays: 30 },
      })
      a = await startGateway(options())
      b = await startGateway(options())
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
      await kind?.cleanup()
    })

    it('removes each key with every record about it, once, when it is due; they still answer 401; live keys and the cap are untouched', async () => {
      const [ca, cb] = [clientOf(a), clientOf(b)]
      const owner = await createCustomer(a.gateway, { credits: '10' })
      const org = owner.user.org_id
      const manager = (await b.gateway.admin.issueKey({ userId: owner.user.id, label: 'manager', management: true })).key
      // Keys made every way: POST /keys (one with a credit limit), and minted through codes on both instances.
      const revoked = await ca.create(manager, { name: 'revoked', limit: 1 })
      const deleted = await cb.create(manager, { name: 'deleted' })
      const kept = await ca.create(manager, { name: 'kept' })
      const parent = await cb.create(manager, { name: 'parent', limit: 2 })
      const child = await ca.mint(parent)
      const leftover = await cb.mint(parent)
      const grandchild = await cb.mint(child)
      expect(await a.gateway.context.accounts.liveKeyCount(org)).toBe(9)
      // Each spends: counters, holds and last use are kept about it.
      for (const [i, key] of [owner.key, revoked, deleted, kept, parent, child, leftover, grandchild].entries()) await (i % 2 ? cb : ca).chat(key)

      await a.gateway.admin.revokeKey(revoked) // revoked, not deleted
      clock = T0 + HOUR
      expect((await cb.manage(manager, 'DELETE', `/keys/${sha256(deleted)}`)).status).toBe(200)
      expect((await ca.manage(manager, 'DELETE', `/keys/${sha256(parent)}`)).status).toBe(200) // and the keys it minted are revoked
      // As if the revocation that should have reached `leftover` had failed (a storage error): it is still live, and
      // counted, though refused (its parent is deleted).
      const { kv, atomic } = a.gateway.internals
      const restored = (await atomic.update<ApiKeyRecord>(kv.key('keys', sha256(leftover)), (r) => ({ ...r!, revoked: false, revoked_at: null })))!
      await kv.set({ hash: restored.hash }, 'key-list', org, 'enabled', entryName(restored))
      await atomic.update<{ live: number }>(kv.key('key-count', org), (count) => ({ live: count!.live + 1 }))
      for (const entry of await kv.list('revoked-keys')) if (entry.endsWith(restored.hash)) await kv.remove('revoked-keys', entry)

      const doomed = [revoked, deleted, parent, child, grandchild]
      const live = [owner.key, kept]
      expect(await a.gateway.context.accounts.liveKeyCount(org)).toBe(4) // owner, manager, kept, leftover
      expect(new Set(await listed(a, manager, true))).toEqual(new Set([owner.key, revoked, kept, child, leftover, grandchild].map(sha256)))
      // Every doomed key has its record, its last use and its spending counter, and more.
      for (const key of doomed) {
        const named = await keysNaming(storage, sha256(key))
        expect(named).toEqual(
          expect.arrayContaining([`gateway:keys:${sha256(key)}`, `gateway:key-used:${sha256(key)}`, `gateway:credits:key:${sha256(key)}:used`]),
        )
        expect(named.length).toBeGreaterThanOrEqual(5)
      }
      const liveBefore = await Promise.all(live.map((key) => keysNaming(storage, sha256(key))))

      // A minute before the first is due (the revoked one, 30 days after it was revoked): nothing goes.
      clock = T0 + 30 * DAY - 60_000
      expect((await a.gateway.admin.sweep()).revoked_keys).toBe(0)
      expect((await b.gateway.admin.sweep()).revoked_keys).toBe(0)
      for (const key of doomed) expect(await keysNaming(storage, sha256(key))).toContain(`gateway:keys:${sha256(key)}`)

      // Past all: both instances sweep at once; each key is removed once.
      clock = T0 + 30 * DAY + 2 * HOUR
      const [sa, sb] = await Promise.all([a.gateway.admin.sweep(), b.gateway.admin.sweep()])
      expect(sa.revoked_keys + sb.revoked_keys).toBe(5)
      for (const key of doomed) expect(await keysNaming(storage, sha256(key))).toEqual([])
      // They answer 401 on both instances, and the management routes know none of them.
      for (const c of [ca, cb]) expect(await Promise.all(doomed.map((key) => c.me(key)))).toEqual([401, 401, 401, 401, 401])
      for (const key of doomed) expect((await cb.manage(manager, 'GET', `/keys/${sha256(key)}`)).status).toBe(404)
      expect((await ca.manage(manager, 'PATCH', `/keys/${sha256(child)}`, { name: 'back?' })).status).toBe(404)
      // The leftover, minted by a key that is gone, is refused, and was revoked by the sweep: counted out once.
      expect(await ca.me(leftover)).toBe(401)
      expect((await a.gateway.context.accounts.getKey(sha256(leftover)))!.revoked).toBe(true)
      expect(await b.gateway.context.accounts.liveKeyCount(org)).toBe(3) // owner, manager, kept
      expect((await listed(b, manager, false)).sort()).toEqual([owner.key, kept].map(sha256).sort())
      expect(new Set(await listed(b, manager, true))).toEqual(new Set([owner.key, kept, leftover].map(sha256)))
      // Live keys are untouched: they work, and every record about them is still there.
      for (const c of [ca, cb]) expect(await Promise.all(live.map((key) => c.me(key)))).toEqual([200, 200])
      expect(await Promise.all(live.map((key) => keysNaming(storage, sha256(key))))).toEqual(liveBefore)
      expect(await ca.me(manager)).toBe(403) // a management key, live: it reaches only the key routes

      // The cap still counts right: exactly 7 more keys fit in 10.
      const more = await Promise.all(Array.from({ length: 9 }, (_, i) => (i % 2 ? cb : ca).manage(manager, 'POST', '/keys', { name: `more ${i}` })))
      expect(more.map((res) => res.status).sort()).toEqual([201, 201, 201, 201, 201, 201, 201, 403, 403])
      await Promise.all(more.map((res) => res.arrayBuffer()))
      expect(await a.gateway.context.accounts.liveKeyCount(org)).toBe(10)
      // Counted again from the records (as for an org whose keys predate the cap): the same 10.
      await storage.removeItem(`gateway:key-count:${org}`)
      await expect(b.gateway.admin.issueKey({ userId: owner.user.id })).rejects.toMatchObject({ status: 403 })
      expect(await b.gateway.context.accounts.liveKeyCount(org)).toBe(10)

      // The leftover goes 30 days after the sweep revoked it; then nothing of the removed keys is left anywhere.
      clock = T0 + 60 * DAY + 3 * HOUR
      const [la, lb] = await Promise.all([a.gateway.admin.sweep(), b.gateway.admin.sweep()])
      expect(la.revoked_keys + lb.revoked_keys).toBe(1)
      expect(await keysNaming(storage, sha256(leftover))).toEqual([])
      expect(await storage.getKeys('gateway:revoked-keys:')).toEqual([])
      expect(await storage.getKeys('gateway:minted-by:')).toEqual([])
      expect(await ca.me(leftover)).toBe(401)
      expect((await a.gateway.admin.sweep()).revoked_keys).toBe(0)
    })

    it('with revokedKeysDays 0, sweeps on both instances racing late writes about the keys leave nothing of them', async () => {
      // Two more instances over the same storage, removing revoked keys at the next sweep. Instance A's writes of list
      // entries and last uses can be held, so that they land after B's sweep removed their key.
      const late = heldWrites(kind.open(), /^gateway:(key-list|key-used):/)
      const zero = (storage: Storage): GatewayOptions => ({
        storage,
        clock: () => clock,
        providers: [demo()],
        authCache: { ttlMs: 0 },
        byok: { settlementIntervalSeconds: 0 },
        retention: { sweepIntervalSeconds: 0, revokedKeysDays: 0 },
      })
      const [za, zb] = [await startGateway(zero(late.storage)), await startGateway(zero(kind.open()))]
      try {
        const [ca, cb] = [clientOf(za), clientOf(zb)]
        const owner = await createCustomer(zb.gateway)
        const manager = (await zb.gateway.admin.issueKey({ userId: owner.user.id, management: true })).key
        const keys = await Promise.all(Array.from({ length: 16 }, () => cb.create(manager, { name: 'gone' })))
        late.hold()
        // Used on A (its last use is written off the request's path: held), then revoked on B.
        expect(await Promise.all(keys.slice(0, 8).map((key) => ca.me(key)))).toEqual(Array(8).fill(200))
        await Promise.all(keys.map((key) => zb.gateway.admin.revokeKey(key)))
        // Renamed on both instances: on B at once; on A each rename changes the record, writes its entry in the index
        // again, and waits to write its list entry.
        const rename = (c: ReturnType<typeof clientOf>, key: string) => c.manage(manager, 'PATCH', `/keys/${sha256(key)}`, { name: 'renamed' })
        const renamesOnA = keys.map((key) => rename(ca, key))
        expect((await Promise.all(keys.map((key) => rename(cb, key)))).map((res) => res.status)).toEqual(Array(16).fill(200))
        // 8 last uses, 16 list entries, and the manager's first use on A.
        expect(
          await eventually(
            async () => late.waiting(),
            (n) => n === 8 + 16 + 1,
          ),
        ).toBe(8 + 16 + 1)
        // Both instances sweep: every key goes. Then A's held writes land.
        const sweeps = await Promise.all([zb, za].map((t) => t.gateway.admin.sweep()))
        expect(sweeps[0].revoked_keys + sweeps[1].revoked_keys).toBe(16)
        late.release()
        expect((await Promise.all(renamesOnA)).map((res) => res.status)).toEqual(Array(16).fill(200))
        await new Promise((resolve) => setTimeout(resolve, 100)) // the last uses' writes (off the requests' paths) too
        // Nothing about the keys is left: what landed after their removal was removed by the instance that wrote it.
        for (const key of keys) expect(await keysNaming(storage, sha256(key))).toEqual([])
        expect(await storage.getKeys('gateway:revoked-keys:')).toEqual([])
        expect((await storage.getKeys(`gateway:key-list:${owner.user.org_id}:`)).map((k) => k.slice(-64))).toEqual([owner.record.hash, owner.record.hash])
        expect((await zb.gateway.admin.sweep()).revoked_keys).toBe(0)
        for (const c of [ca, cb]) expect(await Promise.all(keys.map((key) => c.me(key)))).toEqual(Array(16).fill(401))
        expect(await zb.gateway.context.accounts.liveKeyCount(owner.user.org_id)).toBe(2)
      } finally {
        late.release()
        await za.close()
        await zb.close()
      }
    })
  })
}

describeRemoval('memory', memoryKind)
const REDIS_URL = process.env.REDIS_URL
const DATABASE_URL = process.env.DATABASE_URL
if (REDIS_URL) describeRemoval('redis', () => redisKind(REDIS_URL))
else describe.skip('redis (set REDIS_URL to run)', () => it('two instances over Redis', () => {}))
if (DATABASE_URL) describeRemoval('postgres', () => postgresKind(DATABASE_URL))
else describe.skip('postgres (set DATABASE_URL to run)', () => it('two instances over PostgreSQL', () => {}))

describe('retention.revokedKeysDays: its default, 0, and keys revoked before the index', () => {
  const kind = memoryKind()
  let clock = Date.parse('2026-05-04T12:00:00.000Z')
  afterAll(() => kind.cleanup())
  const start = (retention: GatewayOptions['retention']) =>
    startGateway({
      storage: kind.open(),
      clock: () => clock,
      providers: [demo()],
      byok: { settlementIntervalSeconds: 0 },
      retention: { sweepIntervalSeconds: 0, ...retention },
    })

  it('is retention.usageDays by default', async () => {
    const t = await start({ usageDays: 10 })
    try {
      expect(t.gateway.context.options.retention.revokedKeysDays).toBe(10)
      const owner = await createCustomer(t.gateway)
      const gone = (await t.gateway.admin.issueKey({ userId: owner.user.id })).key
      await t.gateway.admin.revokeKey(gone)
      clock += 10 * DAY - 1000
      expect((await t.gateway.admin.sweep()).revoked_keys).toBe(0)
      expect(await t.gateway.context.accounts.getKey(gone)).not.toBeNull()
      clock += 1000
      expect((await t.gateway.admin.sweep()).revoked_keys).toBe(1)
      expect(await t.gateway.context.accounts.getKey(gone)).toBeNull()
      expect(await clientOf(t).me(gone)).toBe(401)
      expect(await clientOf(t).me(owner.key)).toBe(200)
    } finally {
      await t.close()
    }
  })

  it('0 removes at the next sweep; a code its key made before it was deleted is still refused after', async () => {
    const t = await start({ revokedKeysDays: 0 })
    try {
      const c = clientOf(t)
      const owner = await createCustomer(t.gateway)
      const manager = (await t.gateway.admin.issueKey({ userId: owner.user.id, management: true })).key
      const app = await c.create(manager, { name: 'app' })
      const made = await c.code(app)
      expect((await c.manage(manager, 'DELETE', `/keys/${sha256(app)}`)).status).toBe(200)
      expect((await t.gateway.admin.sweep()).revoked_keys).toBe(1)
      expect(await keysNaming(kind.open(), sha256(app))).toEqual([])
      const res = await c.exchange(made)
      expect(res.status).toBe(403)
      expect((await res.json()).error.message).toBe('Invalid code or code_verifier: the code may be unknown, expired or already used')
      expect(await c.me(app)).toBe(401)
      expect(await t.gateway.context.accounts.liveKeyCount(owner.user.org_id)).toBe(2)
      expect((await t.gateway.admin.listKeys(owner.user.id)).map((k) => k.hash).sort()).toEqual([owner.key, manager].map(sha256).sort())
    } finally {
      await t.close()
    }
  })

  it('keys revoked before the index existed are indexed by the first sweep, and removed when due', async () => {
    const first = await start({ revokedKeysDays: 5 })
    const owner = await createCustomer(first.gateway)
    const old = (await first.gateway.admin.issueKey({ userId: owner.user.id })).key
    await first.gateway.admin.revokeKey(old)
    await first.close()
    // As a storage written before the index: no entries, no mark.
    const storage = kind.open()
    for (const key of await storage.getKeys('gateway:revoked-keys:')) await storage.removeItem(key)
    await storage.removeItem('gateway:revoked-keys-indexed')
    const t = await start({ revokedKeysDays: 5 })
    try {
      clock += 5 * DAY + 1000
      expect((await t.gateway.admin.sweep()).revoked_keys).toBe(1)
      expect(await keysNaming(storage, sha256(old))).toEqual([])
      expect(await storage.getItem('gateway:revoked-keys-indexed')).toMatchObject({ at: expect.any(String) })
      expect(await clientOf(t).me(old)).toBe(401)
    } finally {
      await t.close()
    }
  })

  it('createGateway refuses a retention.revokedKeysDays that is not 0 or a positive number', () => {
    for (const revokedKeysDays of [-1, Number.NaN, Number.POSITIVE_INFINITY, '3' as unknown as number]) {
      expect(() => createGateway({ secret: TEST_SECRET, logger: false, retention: { revokedKeysDays } }), String(revokedKeysDays)).toThrow(
        'model-gateway: `retention.revokedKeysDays` must be 0 (at the next sweep) or a positive number of days',
      )
    }
  })
})
