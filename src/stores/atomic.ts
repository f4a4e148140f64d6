import type { Storage } from 'unstorage'
import { createLocalAtomic } from './atomic-local'
import { createPostgresAtomic } from './atomic-postgres'
import { createRedisAtomic } from './atomic-redis'
import { type AtomicOption, customEngineOf, type EngineKind, engineKindOf } from './engine-kind'
import { mountEngines } from './mount-engines'

/**
 * The few operations that must be atomic when several gateway instances share one storage.
 * Keys are full storage keys; values written here are only read back through these operations.
 */
export interface AtomicOps {
  /** Which engine makes the operations atomic for keys at this mount: `redis` (shared by instances) or `local` (one process). */
  readonly kind: EngineKind
  /**
   * Adds `delta` ledger units to an exact decimal counter and returns its new value. With `window`, the counter is
   * windowed (what was spent in one UTC day, week or month: docs/keys.md): one that counted an earlier window starts
   * again from 0, and where storage expires records it is kept `ttlMs` more (so nothing grows without bound).
   */
  addUnits(key: string, delta: bigint, window?: CounterWindow): Promise<bigint>
  /** Adds to several decimal counters (as `addUnits`, without windows) in one step: one round trip and one transaction on Redis. */
  addUnitsMany(changes: { key: string; delta: bigint }[]): Promise<void>
  /** Reads a decimal counter (0 when absent); with `windowStart`, a windowed counter: 0 when it counted an earlier window. */
  getUnits(key: string, windowStart?: number): Promise<bigint>
  /** Adds to an integer counter and returns the new value (`by` 0 reads it); `ttlSeconds` starts a window when the counter is new. */
  increment(key: string, by?: number, ttlSeconds?: number): Promise<number>
  /** Writes a JSON record only if the key is absent; true when written. */
  setIfAbsent(key: string, value: unknown): Promise<boolean>
  /** Reads a JSON record and deletes it in one step: of concurrent callers, only one gets it. */
  take<T>(key: string): Promise<T | null>
  /** Reads a JSON record (null when absent), never half of a concurrent `update` (local engines read under the key's lock). */
  read<T>(key: string): Promise<T | null>
  /**
   * Atomic read-modify-write of a JSON record: `fn` gets the current value (null when absent) and returns the next
   * one, null to delete it, or undefined to leave it; it may run more than once (Redis retries on a conflict), so it
   * must not have side effects, and throwing from it aborts without writing. Resolves to the value stored after it.
   */
  update<T>(key: string, fn: (current: T | null) => T | null | undefined): Promise<T | null>
  /**
   * Writes `claim` at `claimKey` only if that key is absent and, in the same atomic step, adds `delta` ledger units
   * to the decimal counter at `counterKey` (as `addUnits`); true when claimed and added, false when already claimed.
   */
  claimAndAddUnits(claimKey: string, claim: unknown, counterKey: string, delta: bigint): Promise<boolean>
}

/** The window of a windowed counter: when it began (epoch ms), and how long storage keeps the counter after a write. */
export interface CounterWindow {
  start: number
  ttlMs: number
}

/**
 * Atomic operations over a Storage, each key served by the engine of the driver mounted there: Redis scripts on
 * Redis, PostgreSQL functions on db0's PostgreSQL, an in-process lock on memory and files (or any driver with
 * `atomic: 'local'`); a shareable driver without an engine is refused (src/stores/engine-kind.ts).
 */
export function createAtomicOps(storage: Storage, option: AtomicOption = 'auto'): AtomicOps & { engineFor(key: string): AtomicOps } {
  const custom = customEngineOf(option)
  if (custom) {
    const ops = custom.atomic(storage)
    return Object.assign(Object.create(ops) as AtomicOps, { engineFor: () => ops })
  }
  const engineFor = mountEngines<AtomicOps>(storage, (driver, key) => {
    const kind = engineKindOf(driver, option)
    if (kind === 'redis') return createRedisAtomic(storage, driver as never)
    if (kind === 'postgres') return createPostgresAtomic(storage, driver as never)
    return createLocalAtomic(storage, key)
  })
  return {
    get kind() {
      return engineFor('').kind
    },
    engineFor,
    addUnits: (key, delta, window) => engineFor(key).addUnits(key, delta, window),
    async addUnitsMany(changes) {
      // Each engine takes its own keys' changes in one step.
      const byEngine = new Map<AtomicOps, { key: string; delta: bigint }[]>()
      for (const change of changes) {
        const engine = engineFor(change.key)
        byEngine.set(engine, [...(byEngine.get(engine) ?? []), change])
      }
      await Promise.all([...byEngine].map(([engine, own]) => engine.addUnitsMany(own)))
    },
    getUnits: (key, windowStart) => engineFor(key).getUnits(key, windowStart),
    increment: (key, by, ttl) => engineFor(key).increment(key, by, ttl),
    setIfAbsent: (key, value) => engineFor(key).setIfAbsent(key, value),
    take: (key) => engineFor(key).take(key),
    read: (key) => engineFor(key).read(key),
    update: (key, fn) => engineFor(key).update(key, fn),
    claimAndAddUnits(claimKey, claim, counterKey, delta) {
      const engine = engineFor(claimKey)
      // One step over two keys needs one engine: keys of two mounts cannot be changed together.
      if (engineFor(counterKey) !== engine || claimKey === counterKey)
        throw new Error(`model-gateway: ${claimKey} and ${counterKey} must be two keys of one storage mount`)
      return engine.claimAndAddUnits(claimKey, claim, counterKey, delta)
    },
  }
}
