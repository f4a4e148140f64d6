import type { Storage } from 'unstorage'
import { isRedisClusterDriver, isRedisDriver } from './atomic-redis'
import { customEngineOf, isProcessDriver } from './engine-kind'
import type { AtomicOps, AtomicOption, HoldOps } from './engine-types'
import type { Kv } from './kv'
import { isPostgresDriver } from './postgres'
import { type StorageBound, storageBound } from './storage-timeout'

/**
 * The bound of `ms` on every wait for the storage the gateway's records are on (docs/operations.md#when-the-storage-fails),
 * or undefined when they all live in this process or its files (memory, lru-cache, fs: nothing to wait for on a
 * network; the folder's locks have bounds of their own). A host's own engine is always bounded.
 */
export function storageBoundFor(storage: Storage, prefix: string, option: AtomicOption | undefined, ms: number): StorageBound | undefined {
  const custom = customEngineOf(option)
  if (!custom && storage.getMounts(`${prefix}:`, { parents: true }).every((mount) => isProcessDriver(mount.driver))) return undefined
  if (custom) return storageBound({ name: custom.name, label: custom.name }, ms)
  const driver = storage.getMount(`${prefix}:`).driver
  if (isRedisDriver(driver)) return storageBound({ name: 'redis', label: isRedisClusterDriver(driver) ? 'Redis Cluster' : 'Redis' }, ms)
  if (isPostgresDriver(driver)) return storageBound({ name: 'postgres', label: 'PostgreSQL' }, ms)
  const name = driver?.name || 'unnamed'
  return storageBound({ name, label: `the ${name} driver` }, ms)
}

// The Storage calls that wait for the driver (the others are synchronous, or the host's: dispose, watch).
const WAITING_CALLS = new Set([
  'hasItem',
  'getItem',
  'getItems',
  'getItemRaw',
  'setItem',
  'setItems',
  'setItemRaw',
  'removeItem',
  'getMeta',
  'setMeta',
  'removeMeta',
  'getKeys',
  'clear',
  'has',
  'get',
  'set',
  'del',
  'remove',
  'keys',
])

/** The Storage with each call that waits for its driver bounded (the stores that use the storage itself: codes, stored responses, BYOK fees). */
export function boundStorage(storage: Storage, bound: StorageBound): Storage {
  return new Proxy(storage, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown
      if (typeof property !== 'string' || !WAITING_CALLS.has(property) || typeof value !== 'function') return value
      return (...args: unknown[]) => bound.wait(Promise.resolve((value as (...a: unknown[]) => unknown).apply(target, args)), `storage.${property}`)
    },
  })
}

/** The Kv with every read, write, removal and listing bounded; its `storage` too. */
export function boundKv(kv: Kv, bound: StorageBound): Kv {
  return {
    storage: boundStorage(kv.storage, bound),
    key: kv.key,
    get: (...parts) => bound.wait(kv.get(...parts), 'kv.get'),
    set: (value, ...parts) => bound.wait(kv.set(value, ...parts), 'kv.set'),
    remove: (...parts) => bound.wait(kv.remove(...parts), 'kv.remove'),
    // A listing is one wait however many round trips it takes (a Redis SCAN, every primary of a cluster).
    list: (...parts) => bound.wait(kv.list(...parts), 'kv.list'),
  }
}

/** The atomic operations, each bounded: past the bound the caller gets StorageTimeoutError, and the operation may still run. */
export function boundAtomic<T extends AtomicOps>(ops: T, bound: StorageBound): T {
  const bounded: AtomicOps = {
    get kind() {
      return ops.kind
    },
    addUnits: (key, delta, window) => bound.wait(ops.addUnits(key, delta, window), 'atomic.addUnits'),
    addUnitsMany: (changes) => bound.wait(ops.addUnitsMany(changes), 'atomic.addUnitsMany'),
    getUnits: (key, windowStart) => bound.wait(ops.getUnits(key, windowStart), 'atomic.getUnits'),
    increment: (key, by, ttlSeconds) => bound.wait(ops.increment(key, by, ttlSeconds), 'atomic.increment'),
    setIfAbsent: (key, value) => bound.wait(ops.setIfAbsent(key, value), 'atomic.setIfAbsent'),
    take: (key) => bound.wait(ops.take(key), 'atomic.take'),
    read: (key) => bound.wait(ops.read(key), 'atomic.read'),
    update: (key, fn) => bound.wait(ops.update(key, fn), 'atomic.update'),
    claimAndAddUnits: (claimKey, claim, counterKey, delta) => bound.wait(ops.claimAndAddUnits(claimKey, claim, counterKey, delta), 'atomic.claimAndAddUnits'),
  }
  // What else the operations carry (createAtomicOps' engineFor) stays reachable.
  return Object.setPrototypeOf(bounded, ops) as T
}

/**
 * The hold operations, each bounded. A placement or a settlement that timed out may still be done once the storage
 * answers (its command was sent): both are idempotent (HoldOps), so the caller may send them again, or release the
 * hold, without counting anything twice.
 */
export function boundHolds(ops: HoldOps, bound: StorageBound): HoldOps {
  return {
    get kind() {
      return ops.kind
    },
    place: (input) => bound.wait(ops.place(input), 'holds.place'),
    settle: (input) => bound.wait(ops.settle(input), 'holds.settle'),
    renew: (input) => bound.wait(ops.renew(input), 'holds.renew'),
    held: (budget, now) => bound.wait(ops.held(budget, now), 'holds.held'),
  }
}
