import { idHex } from '../crypto/id-bytes'
import type { Logger } from '../logger'
import type { Principal } from './account-types'
import type { Kv } from './kv'

/** Options of the authentication cache (docs/keys.md#the-authentication-cache). */
export interface AuthCacheOptions {
  /** How long a resolved key is kept, in ms; 0 turns the cache off. Default 5000. */
  ttlMs?: number
  /** How often the shared epoch is read, so that a change made by another instance empties this one's cache. Default 1000 ms. */
  epochPollMs?: number
  /** Keys kept at most; the oldest are dropped first. Default 10000. */
  maxEntries?: number
}

/** The authentication cache: resolved keys by hash, emptied by any change to a key, user or org here or elsewhere. */
export interface PrincipalCache {
  /** The cached key, user and org of a key hash, if fresh. */
  get(hash: string): Principal | undefined
  /**
   * An entry past its `ttlMs` but not past twice that, which no change has emptied since it was cached: served while
   * it is read again off the request path (docs/keys.md#the-authentication-cache).
   */
  stale(hash: string): Principal | undefined
  /** Forgets one key hash (its refresh found it no longer usable). */
  delete(hash: string): void
  /** The cache's generation: read before resolving a key, given back to `set`. */
  generation(): number
  /** Caches what a key hash resolved to, unless the cache was emptied since `generation` was read (a change raced the read). */
  set(hash: string, principal: Principal, generation: number): void
  /** Empties the cache here and, through the shared epoch, on every instance over the same storage. */
  invalidate(): Promise<void>
  /** Stops reading the epoch. */
  stop(): void
}

const EPOCH = 'auth-epoch'

/**
 * Creates the authentication cache (docs/keys.md#the-authentication-cache). Entries live `ttlMs` (by the monotonic
 * clock); a change to a key, user or org empties the cache at once here and writes a new shared epoch, which every
 * instance reads every `epochPollMs` (one small read off the request path) and empties its own cache on.
 */
export function createPrincipalCache(kv: Kv, options: AuthCacheOptions, logger: Logger): PrincipalCache {
  const ttlMs = options.ttlMs ?? 5000
  const pollMs = options.epochPollMs ?? 1000
  const maxEntries = options.maxEntries ?? 10_000
  const entries = new Map<string, { principal: Principal; until: number }>()
  let epoch: string | undefined
  let epochRead = false
  let generation = 0
  let timer: ReturnType<typeof setInterval> | undefined
  // Bumped when this instance starts and ends writing a new epoch: a read that overlapped a write of our own may
  // carry the epoch before it, which is no change made elsewhere (it would empty the cache twice for nothing).
  let ownWrites = 0
  let reading = false

  const empty = () => {
    entries.clear()
    generation++
  }
  const readEpoch = async () => {
    // One read at a time: a stalled storage gets no pile of reads, and no older answer lands after a newer one.
    if (reading) return
    reading = true
    const writesBefore = ownWrites
    try {
      const value = (await kv.get<{ epoch: string }>(EPOCH))?.epoch
      if (writesBefore !== ownWrites) return
      if (epochRead && value !== epoch) empty()
      epoch = value
      epochRead = true
    } catch (error) {
      // Unreadable storage: forget everything rather than trust entries a change may have voided.
      empty()
      logger.warn('reading the authentication epoch failed; the cache was emptied', { error: String(error) })
    } finally {
      reading = false
    }
  }
  const startPolling = () => {
    if (timer || pollMs <= 0) return
    void readEpoch()
    timer = setInterval(() => void readEpoch(), pollMs)
    timer.unref?.()
  }

  if (ttlMs > 0) startPolling()
  return {
    get(hash) {
      if (ttlMs <= 0) return undefined
      const entry = entries.get(hash)
      if (!entry) return undefined
      if (entry.until > performance.now()) return entry.principal
      return undefined
    },
    stale(hash) {
      const entry = entries.get(hash)
      if (!entry) return undefined
      if (entry.until + ttlMs > performance.now()) return entry.principal
      entries.delete(hash)
      return undefined
    },
    delete(hash) {
      entries.delete(hash)
    },
    generation: () => generation,
    set(hash, principal, at) {
      if (ttlMs <= 0 || at !== generation) return
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!)
      entries.set(hash, { principal, until: performance.now() + ttlMs })
    },
    async invalidate() {
      empty()
      if (ttlMs <= 0) return
      epoch = idHex(12)
      epochRead = true
      ownWrites++
      try {
        await kv.set({ epoch }, EPOCH)
      } finally {
        ownWrites++
      }
    },
    stop() {
      clearInterval(timer)
      timer = undefined
    },
  }
}
