/**
 * The authentication cache (docs/keys.md#the-authentication-cache): a key resolved once is served from memory (no
 * storage read of its key, user and org records per request), a change on the same instance takes effect at once,
 * and a change on another instance over the same storage (a shared memory storage, fs, Redis) within the epoch poll.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Storage } from 'unstorage'
import { demo } from '../../src/providers/demo'
import { eventually } from '../helpers/eventually'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { fsKind, memoryKind, redisKind, type StorageKind } from '../helpers/storages'

/** A storage that counts the reads of account records (keys, users, orgs). */
function counted(storage: Storage): { storage: Storage; reads: () => number } {
  let reads = 0
  const getItem = storage.getItem.bind(storage)
  storage.getItem = ((key: string, ...rest: never[]) => {
    if (/^gateway:(keys|users|orgs):/.test(key)) reads++
    return getItem(key, ...rest)
  }) as Storage['getItem']
  return { storage, reads: () => reads }
}

function describeCache(name: string, makeKind: () => StorageKind) {
  describe(`the authentication cache: ${name}, two instances`, () => {
    let kind: StorageKind
    let a: TestGateway
    let b: TestGateway
    let readsOfA: () => number

    beforeAll(async () => {
      kind = makeKind()
      const first = counted(kind.open())
      readsOfA = first.reads
      const options = { providers: [demo()], authCache: { ttlMs: 60_000, epochPollMs: 50 } }
      a = await startGateway({ ...options, storage: first.storage })
      b = await startGateway({ ...options, storage: kind.open() })
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
      await kind?.cleanup()
    })

    const me = (on: TestGateway, key: string) => on.request('/api/v1/me', { headers: { authorization: `Bearer ${key}` } })

    it('reads a key’s records once, then serves it from memory', async () => {
      const { key } = await createCustomer(a.gateway, { credits: '1' })
      const before = readsOfA()
      expect((await me(a, key)).status).toBe(200)
      // The first request reads the key, its user and its org; its first use is recorded off the request's path (one
      // more read of the key record, which may land later on a slow storage such as fs): waited for, so that it is not
      // counted below. On Redis the key record is read by the atomic engine, not through getItem: user and org only.
      const expected = before + (name === 'redis' ? 2 : 4)
      const after = await eventually(
        async () => readsOfA(),
        (reads) => reads === expected,
        2000,
      )
      expect(after).toBe(expected)
      for (let i = 0; i < 5; i++) expect((await me(a, key)).status).toBe(200)
      expect(readsOfA()).toBe(after)
    })

    it('a key revoked on the same instance answers 401 at once', async () => {
      const { key } = await createCustomer(a.gateway, { credits: '1' })
      expect((await me(a, key)).status).toBe(200)
      await a.gateway.admin.revokeKey(key)
      expect((await me(a, key)).status).toBe(401)
    })

    it('a key revoked on the other instance answers 401 here within the epoch poll', async () => {
      const { key } = await createCustomer(a.gateway, { credits: '1' })
      expect((await me(a, key)).status).toBe(200)
      expect((await me(b, key)).status).toBe(200)
      await b.gateway.admin.revokeKey(key)
      expect((await me(b, key)).status).toBe(401)
      const started = performance.now()
      const seen = await eventually(
        () => me(a, key),
        (res) => res.status === 401,
        2000,
      )
      expect(seen.status).toBe(401)
      expect(performance.now() - started).toBeLessThan(1000)
    })

    it('a user disabled on the other instance is refused here within the epoch poll', async () => {
      const { key, user } = await createCustomer(a.gateway, { credits: '1' })
      expect((await me(a, key)).status).toBe(200)
      await b.gateway.admin.updateUser(user.id, { disabled: true })
      const seen = await eventually(
        () => me(a, key),
        (res) => res.status === 403,
        2000,
      )
      expect(seen.status).toBe(403)
    })
  })
}

describeCache('memory', memoryKind)
describeCache('fs', fsKind)
describe.skipIf(!process.env.REDIS_URL)('redis (REDIS_URL)', () => describeCache('redis', () => redisKind(process.env.REDIS_URL!)))

describe('the authentication cache turned off (ttlMs: 0)', () => {
  it('reads the key’s records on every request', async () => {
    const { storage, reads } = counted(memoryKind().open())
    const t = await startGateway({ providers: [demo()], storage, authCache: { ttlMs: 0 } })
    try {
      const { key } = await createCustomer(t.gateway, { credits: '1' })
      await t.request('/api/v1/me', { headers: { authorization: `Bearer ${key}` } })
      const before = reads()
      for (let i = 0; i < 3; i++) await t.request('/api/v1/me', { headers: { authorization: `Bearer ${key}` } })
      expect(reads() - before).toBe(3 * 3)
    } finally {
      await t.close()
    }
  })
})

describe('a cached key past its ttlMs (docs/keys.md#the-authentication-cache)', () => {
  it('is served as it is while it is read again off the request path; one not usable any more is then refused; past twice ttlMs it is read first', async () => {
    const base = memoryKind().open()
    let failing = false
    const getItem = base.getItem.bind(base)
    // Account records that cannot be read while `failing`: a request that needed them would fail.
    base.getItem = ((key: string, ...rest: never[]) => {
      if (failing && /^gateway:(keys|users|orgs):/.test(key)) return Promise.reject(new Error('storage unreachable'))
      return getItem(key, ...rest)
    }) as typeof base.getItem
    const t = await startGateway({ providers: [demo()], storage: base, authCache: { ttlMs: 1000, epochPollMs: 0 } })
    const me = (key: string) => t.request('/api/v1/me', { headers: { authorization: `Bearer ${key}` } })
    try {
      const { key } = await createCustomer(t.gateway, { credits: '1' })
      expect((await me(key)).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 1100))
      // Stale: served without its records (they cannot be read now); the read behind it fails and drops the entry.
      failing = true
      expect((await me(key)).status).toBe(200)
      expect(
        await eventually(
          async () => (await me(key)).status,
          (status) => status === 500,
        ),
      ).toBe(500)
      failing = false
      expect((await me(key)).status).toBe(200)

      // A key revoked behind the cache's back (its record changed in storage, no shared epoch): served stale once, then refused.
      await new Promise((resolve) => setTimeout(resolve, 1100))
      const hash = (await t.gateway.admin.findUserByKey(key))!.key.hash
      const record = (await base.getItem(`gateway:keys:${hash}`)) as Record<string, unknown>
      await base.setItem(`gateway:keys:${hash}`, { ...record, revoked: true })
      expect((await me(key)).status).toBe(200)
      expect(
        await eventually(
          async () => (await me(key)).status,
          (status) => status === 401,
        ),
      ).toBe(401)

      // Past twice ttlMs an entry is not served: the records are read first.
      const other = await createCustomer(t.gateway, { credits: '1' })
      expect((await me(other.key)).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 2100))
      failing = true
      expect((await me(other.key)).status).toBe(500)
    } finally {
      failing = false
      await t.close()
    }
  })
})
