import type { Storage } from 'unstorage'
import type { AtomicOps, CounterWindow } from './engine-types'
import { folderLock, sharedFolderOf } from './folder-lock'
import { createRecords, parse } from './records'

/** Runs `work` after every earlier work under the same key has finished. */
export type Lock = (<T>(key: string, work: () => Promise<T>) => Promise<T>) & {
  /** True when no work under `key` is queued or running (an in-process lock only: another process may hold a folder's). */
  idle?(key: string): boolean
}

// One lock table per backing store, so that gateways in one process over the same data share it: drivers
// with the same name and options (two fs storages on one folder) count as one store.
const locks = new Map<string, Lock>()
const identities = new WeakMap<object, string>()
let anonymous = 0

function createLock(): Lock {
  const tails = new Map<string, Promise<unknown>>()
  const lock: Lock = (key, work) => {
    const previous = tails.get(key) ?? Promise.resolve()
    const run = previous.then(work, work)
    const tail = run.catch(() => undefined)
    tails.set(key, tail)
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key)
    })
    return run
  }
  lock.idle = (key) => tails.size === 0 || !tails.has(key)
  return lock
}

function identityOf(driver: { name?: string; options?: unknown }): string {
  let identity = identities.get(driver)
  if (!identity) {
    let options: string | undefined
    try {
      options = driver.options && Object.keys(driver.options).length > 0 ? JSON.stringify(driver.options) : undefined
    } catch {
      options = undefined
    }
    identity = options ? `${driver.name}:${options}` : `#${++anonymous}`
    identities.set(driver, identity)
  }
  return identity
}

/**
 * The lock of the store mounted at `key`: its in-process lock table (shared by every gateway in this process over the
 * same data) and, for files other processes may open too (fs, fs-lite), the folder's lock that every process takes
 * per key (docs/operations.md#several-instances), inside this process's turn.
 */
export function lockFor(storage: Storage, key: string): Lock {
  const { driver, base } = storage.getMount(key)
  const identity = identityOf(driver)
  let lock = locks.get(identity)
  if (!lock) locks.set(identity, (lock = createLock()))
  const folder = sharedFolderOf(driver)
  if (!folder) return lock
  const inProcess = lock
  const files = folderLock(folder)
  // The folder's lock is named by the key within the mount: the record's file, however a process mounts the folder.
  return (k, work) => inProcess(k, () => files(k.startsWith(base) ? k.slice(base.length) : k, work))
}

interface CounterRecord {
  units?: string
  /** A windowed counter: the start of the window its units count (epoch ms). */
  window?: number
  count?: number
  expires?: number
}

// The units a decimal counter holds, for the window starting at `windowStart` when it is windowed: an earlier window's
// spending does not count (a later one's does: an instance whose clock lags still sees it).
const unitsOf = (record: CounterRecord, windowStart?: number): bigint =>
  windowStart !== undefined && (record.window === undefined || record.window < windowStart) ? 0n : BigInt(record.units ?? '0')

/**
 * Atomic operations for drivers without their own (memory, fs, …): a per-key lock around read-modify-write, in this
 * process, and across the processes that share a folder of files (lockFor).
 */
export function createLocalAtomic(storage: Storage, mountKey: string): AtomicOps {
  const lock = lockFor(storage, mountKey)
  const records = createRecords(storage)
  // Counter records are only read and written here: kept live (as objects) in the gateway's own memory storage.
  const read = async (key: string) => ((await records.get(key)) ?? {}) as CounterRecord
  // The gateway's own memory storage, the key not being changed by anything else (JavaScript runs one thing at a time,
  // and every change of a key goes through its lock): its Map, to read and change the key at once, with no promise.
  const now = (key: string): Map<string, unknown> | undefined => (lock.idle?.(key) ? records.directMap(key) : undefined)
  const readNow = (map: Map<string, unknown>, key: string): CounterRecord => {
    const raw = map.get(key)
    return (raw === undefined || raw === null ? {} : parse(raw)) as CounterRecord
  }
  // A decimal counter plus `delta` (in `window` when windowed), written back; its new value.
  const added = (current: CounterRecord, delta: bigint, window?: CounterWindow): { next: bigint; record: CounterRecord } => {
    if (!window) {
      const next = unitsOf(current) + delta
      return { next, record: { units: next.toString() } }
    }
    const start = current.window !== undefined && current.window > window.start ? current.window : window.start
    const next = unitsOf(current, window.start) + delta
    return { next, record: { units: next.toString(), window: start } }
  }
  // A counter's units read at once, when its lock is idle in the gateway's own memory storage; else undefined.
  const unitsNow = (key: string, windowStart?: number): bigint | undefined => {
    const map = now(key)
    return map ? unitsOf(readNow(map, key), windowStart) : undefined
  }
  // addCountersAtOnce's maps, reused (it runs to its end before anything else can call it).
  const scratch: (Map<string, unknown> | undefined)[] = []
  const ops: AtomicOps = {
    kind: 'local',
    // The counters that can be changed at once are (no promise); the others wait for their locks.
    addCountersNow(counters) {
      let waiting: Promise<bigint>[] | undefined
      for (const c of counters) {
        if (!c.units) continue
        const map = now(c.key)
        if (map) map.set(c.key, added(readNow(map, c.key), c.units, c.window).record)
        else (waiting ??= []).push(ops.addUnits(c.key, c.units, c.window))
      }
      return waiting ? Promise.all(waiting).then(() => undefined) : undefined
    },
    unitsNow,
    addCountersAtOnce(counters) {
      // Checked first, all of them (nothing else runs until this returns), then changed.
      const maps = scratch
      maps.length = 0
      for (const c of counters) {
        const map = c.units ? now(c.key) : undefined
        if (c.units && !map) return false
        maps.push(map)
      }
      for (let i = 0; i < counters.length; i++) {
        const c = counters[i]
        const map = maps[i]
        if (map) map.set(c.key, added(readNow(map, c.key), c.units, c.window).record)
      }
      maps.length = 0
      return true
    },
    // In one process each counter's lock makes each addition exact; readers see them one by one.
    async addUnitsMany(changes) {
      await Promise.all(changes.map((change) => ops.addUnits(change.key, change.delta)))
    },
    // A windowed counter is one record per key rewritten when its window changes: without TTLs (memory, fs) it
    // still never grows.
    addUnits: (key, delta, window) => {
      const map = now(key)
      if (map) {
        const { next, record } = added(readNow(map, key), delta, window)
        map.set(key, record)
        return Promise.resolve(next)
      }
      return lock(key, async () => {
        const { next, record } = added(await read(key), delta, window)
        await records.setLive(key, record)
        return next
      })
    },
    // Read under the lock too: the fs driver does not write atomically, so a read racing a write could see an empty file.
    getUnits: (key, windowStart) => {
      const units = unitsNow(key, windowStart)
      if (units !== undefined) return Promise.resolve(units)
      return lock(key, async () => unitsOf(await read(key), windowStart))
    },
    increment: (key, by = 1, ttlSeconds) =>
      lock(key, async () => {
        const now = Date.now()
        const current = await read(key)
        const live = current.expires === undefined || current.expires > now
        const count = (live ? (current.count ?? 0) : 0) + by
        if (by === 0) return count // a read: nothing to write
        const expires = live && current.expires !== undefined ? current.expires : ttlSeconds ? now + ttlSeconds * 1000 : undefined
        await records.setLive(key, { count, expires })
        return count
      }),
    setIfAbsent: (key, value) =>
      lock(key, async () => {
        if (await records.has(key)) return false
        await records.set(key, value)
        return true
      }),
    take: <T>(key: string) =>
      lock(key, async () => {
        const value = (await records.get(key)) as T | null
        if (value !== null) await records.remove(key)
        return value
      }),
    read: <T>(key: string) => lock(key, async () => (await records.get(key)) as T | null),
    update: <T>(key: string, fn: (current: T | null) => T | null | undefined) =>
      lock(key, async () => {
        const current = (await records.get(key)) as T | null
        const next = fn(current)
        if (next === undefined) return current
        if (next === null) {
          if (current !== null) await records.remove(key)
          return null
        }
        await records.set(key, next)
        return next
      }),
    claimAndAddUnits: (claimKey, claim, counterKey, delta) =>
      // Always the claim's lock first, then the counter's (which addUnits takes alone): no two callers wait on each other.
      lock(claimKey, () =>
        lock(counterKey, async () => {
          if (await records.has(claimKey)) return false
          // Two writes that the driver cannot join: claim first, and take the claim back if the charge fails, so a
          // retry charges it; the counter is only written when the claim is.
          await records.set(claimKey, claim)
          try {
            const next = BigInt((await read(counterKey)).units ?? '0') + delta
            await records.setLive(counterKey, { units: next.toString() })
          } catch (error) {
            await records.remove(claimKey)
            throw error
          }
          return true
        }),
      ),
  }
  return ops
}
