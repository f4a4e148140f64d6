import type { Storage } from 'unstorage'

/** Reads and writes of JSON records by full storage key (docs/operations.md#storage). */
export interface Records {
  get<T>(key: string): Promise<T | null>
  /** Writes a JSON record; `ttlSeconds` asks a storage that expires records (Redis) to drop it then. */
  set(key: string, value: unknown, ttlSeconds?: number): Promise<void>
  remove(key: string): Promise<void>
  has(key: string): Promise<boolean>
  /**
   * Writes a record only the atomic engines read and write (counters, holds): in the gateway's own memory storage the
   * object itself, not JSON text, which `get` then gives back as it is (the caller changes it only to write it back).
   */
  setLive(key: string, value: object): Promise<void>
  /**
   * The gateway's own memory storage's Map when `key` is read and written straight in it, else undefined: what the
   * local atomic engine may change at once, without a promise, when nothing else is changing the key.
   */
  directMap(key: string): Map<string, unknown> | undefined
  /** Writes a JSON record at once (as `set`) when `key` is in the gateway's own memory storage; false (nothing written) otherwise. */
  setNow(key: string, value: object): boolean
}

// A key unstorage would change when it normalises it (slashes, a query, empty segments, colons at either end). It runs
// for every record a request reads or writes: V8's compiled regular expression is about four times faster here than a
// loop over the key's characters (docs/performance.md#where-the-time-goes).
const UNNORMALISED = /[/\\?]|::|^:|:$/
const unnormalised = (key: string): boolean => UNNORMALISED.test(key)

interface MemoryDriver {
  name?: string
  getInstance?: () => unknown
}

/** A record as `get` gives it from its stored form: JSON text parsed, a live object as it is. */
export const parse = (raw: unknown): unknown => {
  if (typeof raw !== 'string') return raw
  try {
    return JSON.parse(raw)
  } catch {
    return raw // not JSON: unstorage's destr gives the string back too
  }
}

/** Records appended per request, kept at most `max` each in the gateway's own memory storage (docs/retention.md). */
export interface AppendBound {
  /** Full key prefixes of appended records (`gateway:usage:`, …), each bounded on its own. */
  prefixes: string[]
  max: number
  /**
   * Told of each record the bound deletes under `prefix` (its full key and its parsed value), so that counts of it can
   * follow; the other prefixes' records are dropped unread.
   */
  evicted?: { prefix: string; tell: (key: string, value: unknown) => void }
}

// The keys appended under one bounded prefix, oldest first (from `head`).
interface Appended {
  prefix: string
  keys: string[]
  head: number
  evicted?: (key: string, value: unknown) => void
}

// Storages the gateway created itself (its default in-memory one): nobody else holds them, wraps their methods or
// watches them, so their memory driver may be read directly. With the bound on what they append.
const owned = new WeakMap<Storage, { lists: Appended[]; max: number }>()

/** Marks a storage the gateway created itself (docs/operations.md#storage): its records are read and written directly. */
export function ownedStorage(storage: Storage): Storage {
  owned.set(storage, { lists: [], max: 0 })
  return storage
}

/** Of the records an owned storage appends under each of `bound.prefixes`, only the newest `bound.max` are kept (0: all). */
export function boundAppended(storage: Storage, bound: AppendBound): void {
  const entry = owned.get(storage)
  if (!entry) return
  entry.max = bound.max
  const told = bound.evicted
  entry.lists = bound.max > 0 ? bound.prefixes.map((prefix) => ({ prefix, keys: [], head: 0, evicted: told?.prefix === prefix ? told.tell : undefined })) : []
}

/** True for a storage the gateway created itself: one memory mount at its root, which nobody else changes. */
export const isOwnedStorage = (storage: Storage): boolean => owned.has(storage)

// Notes a key new to the map; past the bound, the oldest key of its prefix is deleted (and the list's `evicted` told of
// it: only then is the record read and parsed).
function noteAppended(appended: Appended[], max: number, map: Map<string, unknown>, key: string) {
  for (const list of appended) {
    if (!key.startsWith(list.prefix)) continue
    list.keys.push(key)
    if (list.keys.length - list.head > max) {
      const oldest = list.keys[list.head++]
      if (list.evicted) {
        const value = map.get(oldest)
        if (map.delete(oldest)) list.evicted(oldest, parse(value))
      } else map.delete(oldest)
    }
    if (list.head > 4096 && list.head * 2 > list.keys.length) {
      list.keys = list.keys.slice(list.head)
      list.head = 0
    }
    return
  }
}

/**
 * The keys below `base` (full keys, in the order unstorage's getKeys gives them) of a storage the gateway created
 * itself, read straight from its memory driver's Map; undefined for any other storage, or a base unstorage would
 * rewrite. unstorage lists a memory storage by normalising every key it holds, whatever the base: about 0.4 s for
 * 150,000 keys per listing, in one block of the event loop (docs/retention.md#the-sweep).
 */
export function listOwnKeys(storage: Storage, base: string): string[] | undefined {
  if (!owned.has(storage) || !base.endsWith(':') || unnormalised(base.slice(0, -1))) return undefined
  const root = storage.getMount('').driver as MemoryDriver
  if (root?.name !== 'memory' || typeof root.getInstance !== 'function') return undefined
  const keys: string[] = []
  // Every key in the Map is normalised (unstorage's writes, and the direct ones of keys it would not rewrite); a key
  // ending in `$` is an item's meta, which unstorage leaves out of a listing too.
  for (const key of (root.getInstance() as Map<string, unknown>).keys()) if (key.startsWith(base) && !key.endsWith('$')) keys.push(key)
  return keys
}

/**
 * Records over a Storage (docs/operations.md#storage). In the gateway's own default storage, keys mounted on
 * unstorage's memory driver are read and written straight in its Map, as unstorage itself stores them (JSON text
 * under the key), without the key normalisation, mount lookup, promise wrappers and tolerant
 * JSON parsing of each call: the same data, several times cheaper per call on the hot path. A storage the host
 * passed (which it may wrap or watch), every other driver, and any key unstorage would rewrite go through the Storage.
 */
export function createRecords(storage: Storage): Records {
  // The owned storage's one mount, at its root: its memory driver's Map, keyed by the full (normalised) key.
  const appended = owned.get(storage)
  const root = appended ? (storage.getMount('').driver as MemoryDriver) : undefined
  const map = root?.name === 'memory' && typeof root.getInstance === 'function' ? (root.getInstance() as Map<string, unknown>) : undefined
  // A key read and written straight in the Map (one unstorage would not rewrite), when there is one.
  const direct = (key: string): Map<string, unknown> | undefined => (map && !unnormalised(key) ? map : undefined)
  const api: Records = {
    async get<T>(key: string) {
      const data = direct(key)
      if (!data) return (await storage.getItem(key)) as T | null
      const raw = data.get(key)
      return raw === undefined || raw === null ? null : (parse(raw) as T)
    },
    async set(key, value, ttlSeconds) {
      if (value === undefined || value === null || typeof value !== 'object' || !api.setNow(key, value))
        return storage.setItem(key, value as never, ttlSeconds === undefined ? undefined : { ttl: ttlSeconds })
    },
    setNow(key, value) {
      const data = direct(key)
      if (!data) return false
      const text = JSON.stringify(value)
      if (appended?.lists.length && !data.has(key)) noteAppended(appended.lists, appended.max, data, key)
      data.set(key, text)
      return true
    },
    async setLive(key, value) {
      const data = direct(key)
      if (!data) return storage.setItem(key, value as never)
      data.set(key, value)
    },
    async remove(key) {
      const data = direct(key)
      if (!data) return storage.removeItem(key)
      data.delete(key)
    },
    async has(key) {
      const data = direct(key)
      if (!data) return storage.hasItem(key)
      return data.has(key)
    },
    directMap: direct,
  }
  return api
}
