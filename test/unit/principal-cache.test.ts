/**
 * The authentication cache's epoch poll (docs/keys.md#the-authentication-cache) against reads that overlap this
 * instance's own epoch writes: such a read carries the epoch before ours, which is no change made elsewhere and
 * must not empty the cache (CI once saw one extra read of a key's records in test/integration/auth-cache.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { silentLogger } from '../../src/logger'
import type { Principal } from '../../src/stores/account-types'
import { createKv } from '../../src/stores/kv'
import { createPrincipalCache } from '../../src/stores/principal-cache'

const principal = { key: { hash: 'h' } } as unknown as Principal
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A storage whose reads of the epoch wait until `release()` is called, and a counter of those reads. */
function heldEpochReads() {
  const storage = createStorage()
  const releases: (() => void)[] = []
  let reads = 0
  let holding = true
  const getItem = storage.getItem.bind(storage)
  storage.getItem = ((key: string, ...rest: never[]) => {
    if (!key.endsWith('auth-epoch')) return getItem(key, ...rest)
    reads++
    if (!holding) return getItem(key, ...rest)
    // Read now, answered later: as a reply still on the wire when a write lands.
    const value = getItem(key, ...rest)
    return new Promise((resolve) => releases.push(() => resolve(value)))
  }) as typeof storage.getItem
  return {
    kv: createKv(storage, 'gateway'),
    reads: () => reads,
    /** Answers the reads held so far; `andStop` answers every later read at once. */
    release: async (andStop = false) => {
      if (andStop) holding = false
      for (const release of releases.splice(0)) release()
      await sleep(5)
    },
  }
}

describe('the authentication cache’s epoch poll', () => {
  it('ignores a read that overlapped its own epoch write, so later polls of its own epoch empty nothing', async () => {
    const held = heldEpochReads()
    const cache = createPrincipalCache(held.kv, { ttlMs: 60_000, epochPollMs: 20 }, silentLogger)
    try {
      // The first read (at start) is held; this instance writes a new epoch meanwhile, then the read answers "none".
      expect(held.reads()).toBe(1)
      await cache.invalidate()
      await held.release(true)
      const generation = cache.generation()
      cache.set('h', principal, generation)
      // Later polls read this instance's own epoch: no change made elsewhere, so the entry stays.
      await sleep(120)
      expect(held.reads()).toBeGreaterThanOrEqual(3)
      expect(cache.get('h')).toBe(principal)
      expect(cache.generation()).toBe(generation)
    } finally {
      cache.stop()
    }
  })

  it('still empties on an epoch written by another instance', async () => {
    const storage = createStorage()
    const kv = createKv(storage, 'gateway')
    const here = createPrincipalCache(kv, { ttlMs: 60_000, epochPollMs: 20 }, silentLogger)
    const there = createPrincipalCache(kv, { ttlMs: 60_000, epochPollMs: 20 }, silentLogger)
    try {
      await sleep(50)
      here.set('h', principal, here.generation())
      await sleep(50)
      expect(here.get('h')).toBe(principal)
      await there.invalidate()
      await sleep(100)
      expect(here.get('h')).toBeUndefined()
    } finally {
      here.stop()
      there.stop()
    }
  })

  it('reads the epoch one at a time while the storage stalls', async () => {
    const held = heldEpochReads()
    const cache = createPrincipalCache(held.kv, { ttlMs: 60_000, epochPollMs: 10 }, silentLogger)
    try {
      await sleep(100)
      expect(held.reads()).toBe(1)
      await held.release()
      await sleep(50)
      expect(held.reads()).toBe(2)
      await held.release(true)
    } finally {
      cache.stop()
      await held.release()
    }
  })
})
