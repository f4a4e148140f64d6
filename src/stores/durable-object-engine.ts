import { createStorage, type Driver, defineDriver, type Storage } from 'unstorage'
import type { DurableObjectNamespaceLike } from './durable-object-call'
import { ENGINE_KEYS, type ObjectRouter, perOrgRouter, singleObjectRouter } from './durable-object-router'
import type { AtomicEngine, AtomicOps, Budget, HoldOps } from './engine-types'

export type { DurableObjectNamespaceLike } from './durable-object-call'

/** Which objects of the namespace own the records (docs/edge.md#the-durable-object-engine). */
export interface DurableObjectOptions {
  /** The (global) object's name; every instance of one gateway uses the same. Default `model-gateway`. */
  name?: string
  /**
   * One object per org (`<name>:org:<org>`) beside the global one, each org's money serialised in its own object
   * (docs/edge.md#one-object-per-org). Default false: one object. Not a switch for a gateway that has data already.
   */
  perOrg?: boolean
  /** With `perOrg`: the gateway's `storagePrefix`, where the keys' orgs are read. Default `gateway`. */
  prefix?: string
}

// One router per storage's options (the driver's and its engines' share it, and what it learnt).
const routers = new WeakMap<object, ObjectRouter>()
function routerOf(namespace: DurableObjectNamespaceLike, options: DurableObjectOptions = {}): ObjectRouter {
  let router = routers.get(options)
  if (!router) {
    const name = options.name ?? 'model-gateway'
    router = options.perOrg ? perOrgRouter(namespace, name, options.prefix ?? 'gateway') : singleObjectRouter(namespace, name)
    routers.set(options, router)
  }
  return router
}

/**
 * The records' storage in the gateway's Durable Object (docs/edge.md#the-durable-object-engine): an unstorage
 * Storage whose every call is one call to the object, where the engine's counters and holds live too.
 */
export function durableObjectStorage(namespace: DurableObjectNamespaceLike, options?: DurableObjectOptions): Storage {
  const own: DurableObjectDriverOptions = { namespace, ...options }
  const router = routerOf(namespace, own)
  const at = async (key: string, writing: boolean) => router.forKey(key, writing)
  const driver = defineDriver((own: DurableObjectDriverOptions) => ({
    name: 'durable-object',
    // What createAtomicOps and createHoldOps read to serve this storage's keys with the object's engine.
    options: own,
    hasItem: async (key) => (await at(key, false))<boolean>('hasItem', key),
    getItem: async (key) => (await at(key, false))('getItem', key),
    async setItem(key, value, opts) {
      await (await at(key, true))('setItem', key, value, (opts as { ttl?: number } | undefined)?.ttl)
    },
    async removeItem(key) {
      await (await at(key, false))('removeItem', key)
      await router.removed(key)
    },
    async getKeys(base) {
      const lists = await Promise.all((await router.forListing(base ?? '')).map((call) => call<string[]>('getKeys', base)))
      return lists.flat().filter((key) => !key.startsWith(ENGINE_KEYS))
    },
    async clear(base) {
      await Promise.all((await router.forListing(base ?? '')).map((call) => call('clear', base)))
      if (!base) router.forget()
    },
  }))
  return createStorage({ driver: driver(own) })
}

/** What a Durable Object storage's driver carries: the namespace and the options it was made with. */
export interface DurableObjectDriverOptions extends DurableObjectOptions {
  namespace: DurableObjectNamespaceLike
}

/** True for the driver of durableObjectStorage: its keys are served by the Durable Object engine over the same namespace. */
export function isDurableObjectDriver(driver: Driver): driver is Driver<DurableObjectDriverOptions> {
  const namespace = (driver?.options as Partial<DurableObjectDriverOptions> | undefined)?.namespace
  return driver?.name === 'durable-object' && typeof namespace?.idFromName === 'function'
}

// Runs the tasks given for one key one after another, in the order given; keys are independent.
function keyQueue(): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>()
  return (key, task) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(task, task)
    const tail = run.catch(() => undefined)
    tails.set(key, tail)
    void tail.then(() => tails.get(key) === tail && tails.delete(key))
    return run
  }
}

/**
 * The atomic engine of a gateway on Cloudflare Workers (docs/edge.md#the-durable-object-engine): counters, claims,
 * record updates and holds, each one call to the Durable Object that owns the records (ModelGatewayObject), which
 * runs them one at a time. Pass it as `atomic`, with durableObjectStorage over the same namespace as `storage`.
 */
export function durableObjectEngine(namespace: DurableObjectNamespaceLike, options?: DurableObjectOptions): AtomicEngine {
  const router = routerOf(namespace, options)
  const at = (key: string, writing: boolean) => router.forKey(key, writing)
  const queued = keyQueue()
  const atomic: AtomicOps = {
    kind: 'durable-object',
    addUnits: async (key, delta, window) => (await at(key, true))('addUnits', key, delta, window),
    addUnitsMany: async (changes) => (await router.forStep(changes.map((c) => c.key)))('addUnitsMany', changes),
    getUnits: async (key, windowStart) => (await at(key, false))('getUnits', key, windowStart),
    increment: async (key, by, ttl) => (await at(key, true))('increment', key, by, ttl),
    setIfAbsent: async (key, value) => (await at(key, true))('setIfAbsent', key, value),
    take: async (key) => (await at(key, false))('take', key),
    read: async (key) => (await at(key, false))('read', key),
    // The function stays here: read, run it, write if nobody wrote meanwhile, else run it again on what the object
    // answered it holds (as Redis's WATCH does). One update of a key at a time from this instance: concurrent ones
    // queue here instead of each losing its compare-and-set to the others (only other instances' writes conflict).
    update: (key, fn) =>
      queued(key, async () => {
        const call = await at(key, true)
        let current = await call<never>('read', key)
        for (;;) {
          const next = fn(current)
          if (next === undefined) return current
          const answer = await call<{ written: boolean; current: never }>('compareAndSet', key, current, next)
          if (answer.written) return next
          current = answer.current
        }
      }),
    claimAndAddUnits: async (claimKey, claim, counterKey, delta) =>
      (await router.forStep([claimKey, counterKey]))('claimAndAddUnits', claimKey, claim, counterKey, delta),
  }
  const holds: HoldOps = {
    kind: 'durable-object',
    place: async (input) => (await router.forStep(budgetKeys(input.budgets)))('place', input),
    settle: async (input) =>
      (
        await router.forStep([
          ...budgetKeys(input.budgets),
          ...(input.counters ?? []).map((c) => c.key),
          ...(input.records ?? []).map((r) => r.key),
          ...(input.once ? [input.once] : []),
        ])
      )('settle', input),
    renew: async (input) => (await router.forStep(budgetKeys(input.budgets)))('renew', input),
    held: async (budget, now) => (await at(budget.holdsKey, false))('held', budget, now),
  }
  return { name: 'durable-object', atomic: () => atomic, holds: () => holds }
}

// Every key a step on these budgets reads or changes.
const budgetKeys = (budgets: Budget[]): string[] =>
  budgets.flatMap((b) => [b.usedKey, ...(b.alsoUsed ?? []), b.holdsKey, ...('key' in b.limit ? [b.limit.key] : [])])
