import type { Storage } from 'unstorage'
import { createLocalAtomic } from './atomic-local'
import { createPostgresAtomic } from './atomic-postgres'
import { createRedisAtomic } from './atomic-redis'
import { durableObjectEngine, isDurableObjectDriver } from './durable-object-engine'
import { customEngineOf, engineKindOf } from './engine-kind'
import type { AtomicOps, AtomicOption, CounterCharge } from './engine-types'
import { mountEngines } from './mount-engines'

/**
 * Atomic operations over a Storage, each key served by the engine of the driver mounted there: Redis scripts on
 * Redis, PostgreSQL functions on db0's PostgreSQL, the object's calls on a Durable Object storage, an in-process lock
 * on memory and files (or any driver with `atomic: 'local'`); a shareable driver without an engine is refused
 * (src/stores/engine-kind.ts).
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
    if (kind === 'durable-object' && isDurableObjectDriver(driver)) return durableObjectEngine(driver.options!.namespace, driver.options).atomic(storage)
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
    addCountersNow(counters) {
      // Each engine's own counters: at once where it can (the local engine), else through addUnits.
      let waiting: Promise<unknown>[] | undefined
      const byEngine = new Map<AtomicOps, CounterCharge[]>()
      for (const c of counters) {
        const engine = engineFor(c.key)
        const own = byEngine.get(engine)
        if (own) own.push(c)
        else byEngine.set(engine, [c])
      }
      for (const [engine, own] of byEngine) {
        const pending = engine.addCountersNow
          ? engine.addCountersNow(own)
          : Promise.all(own.map((c) => (c.units ? engine.addUnits(c.key, c.units, c.window) : undefined)))
        if (pending) (waiting ??= []).push(pending)
      }
      return waiting ? Promise.all(waiting).then(() => undefined) : undefined
    },
    getUnits: (key, windowStart) => engineFor(key).getUnits(key, windowStart),
    unitsNow: (key, windowStart) => engineFor(key).unitsNow?.(key, windowStart),
    addCountersAtOnce(counters) {
      // One engine's counters (the gateway's own storage has one): it decides; over several engines, not at once.
      if (counters.length === 0) return true
      const engine = engineFor(counters[0].key)
      for (let i = 1; i < counters.length; i++) if (engineFor(counters[i].key) !== engine) return false
      return engine.addCountersAtOnce?.(counters) ?? false
    },
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
