import type { Storage } from 'unstorage'
import { createLocalAtomic } from './atomic-local'
import { createRedisAtomic, isRedisDriver } from './atomic-redis'

/**
 * The few operations that must be atomic when several gateway instances share one storage.
 * Keys are full storage keys; values written here are only read back through these operations.
 */
export interface AtomicOps {
  /** Which engine makes the operations atomic: `redis` (shared by instances) or `local` (one process). */
  readonly kind: 'redis' | 'local'
  /** Adds `delta` ledger units to an exact decimal counter and returns its new value. */
  addUnits(key: string, delta: bigint): Promise<bigint>
  /** Reads a decimal counter (0 when absent). */
  getUnits(key: string): Promise<bigint>
  /** Adds to an integer counter and returns the new value; `ttlSeconds` starts a window when the counter is new. */
  increment(key: string, by?: number, ttlSeconds?: number): Promise<number>
  /** Writes a JSON record only if the key is absent; true when written. */
  setIfAbsent(key: string, value: unknown): Promise<boolean>
  /** Reads a JSON record and deletes it in one step: of concurrent callers, only one gets it. */
  take<T>(key: string): Promise<T | null>
}

/** Picks the atomic engine for the storage mounted at `key`: Redis scripts when it is Redis, else an in-process lock. */
export function createAtomicOps(storage: Storage, key: string): AtomicOps {
  const mount = storage.getMount(key)
  if (isRedisDriver(mount.driver)) return createRedisAtomic(storage, mount.driver)
  return createLocalAtomic(storage)
}
