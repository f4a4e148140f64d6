import type { Driver, Storage } from 'unstorage'
import { clusterHashTagOf, isRedisClusterDriver, isRedisDriver } from './atomic-redis'
import { isDurableObjectDriver } from './durable-object-engine'
import type { AtomicEngine, AtomicOption, EngineKind } from './engine-types'
import { isPostgresDriver } from './postgres'

/** The host's own engine, when the option is one. */
export const customEngineOf = (option: AtomicOption | undefined): AtomicEngine | undefined => (option && typeof option === 'object' ? option : undefined)

// Drivers whose data lives in this process, or in files whose records every process locks in the folder
// (src/stores/folder-lock.ts, docs/operations.md#several-processes-over-one-folder).
const PROCESS_DRIVERS = new Set(['memory', 'fs', 'fs-lite', 'fsLite', 'lru-cache', 'lruCache'])

/** True for a driver whose records live in this process or its machine's files (memory, lru-cache, fs): it never waits on a network. */
export const isProcessDriver = (driver: Driver): boolean => PROCESS_DRIVERS.has(driver?.name ?? '')

/** The engine for a mounted driver; throws a TypeError for a shareable driver without one (unless `local` is chosen). */
export function engineKindOf(driver: Driver, option: AtomicOption = 'auto'): EngineKind {
  const custom = customEngineOf(option)
  if (custom) return custom.name
  if (isRedisDriver(driver)) {
    if (isRedisClusterDriver(driver) && !clusterHashTagOf(driver)) {
      throw new TypeError(
        `model-gateway: storage: the redis driver talks to a Redis Cluster, and its base (${JSON.stringify((driver.options as { base?: unknown }).base ?? '')}) has no hash tag: ` +
          "the gateway's scripts change several keys at once, which a cluster allows only within one hash slot. " +
          "Give the driver a base with a hash tag, such as base: '{mg}' (docs/operations.md#redis-cluster)",
      )
    }
    return 'redis'
  }
  if (isPostgresDriver(driver)) return 'postgres'
  if (isDurableObjectDriver(driver)) return 'durable-object'
  if (option === 'local' || PROCESS_DRIVERS.has(driver?.name ?? '')) return 'local'
  const name = driver?.name ? `the ${driver.name} driver` : 'a driver without a name'
  throw new TypeError(
    `model-gateway: storage: ${name} may be shared by other processes, and the gateway has no atomic engine for it: ` +
      'two instances would each believe they hold the same lock, and could spend the same credits twice. ' +
      "Use Redis (unstorage/drivers/redis) or PostgreSQL (unstorage/drivers/db0 with db0's postgresql connector) for several instances, " +
      "or pass atomic: 'local' if only this process ever uses this storage (docs/operations.md#several-instances)",
  )
}

/**
 * Checks, at creation, every mount the gateway's records can land on (the one holding `prefix`, and any below it),
 * so that a storage without an engine is refused before any request. Other mounts (a Nitro app's assets) are not the
 * gateway's.
 */
export function assertAtomicEngines(storage: Storage, prefix: string, option: AtomicOption = 'auto'): void {
  const custom = customEngineOf(option)
  if (custom) {
    if (typeof custom.name !== 'string' || typeof custom.atomic !== 'function' || typeof custom.holds !== 'function')
      throw new TypeError('model-gateway: atomic: an engine of your own needs name, atomic(storage) and holds(storage)')
    return
  }
  if (option !== 'auto' && option !== 'local')
    throw new TypeError(`model-gateway: atomic must be 'auto', 'local' or an engine { name, atomic, holds }, got ${JSON.stringify(option)}`)
  for (const mount of storage.getMounts(`${prefix}:`, { parents: true })) engineKindOf(mount.driver, option)
}
