import type { Storage } from 'unstorage'
import { createAtomicOps } from './atomic'
import { customEngineOf, engineKindOf } from './engine-kind'
import type { AtomicOption, HoldOps } from './engine-types'
import { durableObjectEngine, isDurableObjectDriver } from './durable-object-engine'
import { createLocalHolds } from './holds-local'
import { createPostgresHolds } from './holds-postgres'
import { createRedisHolds } from './holds-redis'
import { mountEngines } from './mount-engines'

/** Holds over a Storage, served by the engine of the driver mounted at the budgets' keys: a Redis script, PostgreSQL functions, a Durable Object's calls, else an in-process lock. */
export function createHoldOps(storage: Storage, option: AtomicOption = 'auto'): HoldOps {
  const custom = customEngineOf(option)
  if (custom) return custom.holds(storage)
  const atomic = createAtomicOps(storage, option)
  const engineFor = mountEngines<HoldOps>(storage, (driver) => {
    const kind = engineKindOf(driver, option)
    if (kind === 'redis') return createRedisHolds(storage, driver as never)
    if (kind === 'postgres') return createPostgresHolds(storage, driver as never)
    if (kind === 'durable-object' && isDurableObjectDriver(driver)) return durableObjectEngine(driver.options!.namespace, driver.options).holds(storage)
    return createLocalHolds(storage, atomic)
  })
  return {
    get kind() {
      return engineFor('').kind
    },
    place: (input) => engineFor(input.budgets[0].holdsKey).place(input),
    settle: (input) => engineFor(input.budgets[0].holdsKey).settle(input),
    renew: (input) => engineFor(input.budgets[0].holdsKey).renew(input),
    held: (budget, now) => engineFor(budget.holdsKey).held(budget, now),
  }
}
