import { createStorage, type Driver, defineDriver, type Storage } from 'unstorage'
import { GatewayError } from '../errors'
import type { AtomicEngine, AtomicOps, HoldOps } from './engine-types'
import { type DurableObjectOp, decodeCall, encodeCall } from './durable-object-protocol'

/** The part of a Durable Object namespace binding (`env.GATEWAY`) the gateway uses. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown
  get(id: never): { fetch(input: string, init: { method: string; body: string }): Promise<Response> }
}

/** Which object of the namespace owns the records: one name per gateway (docs/edge.md#the-durable-object-engine). */
export interface DurableObjectOptions {
  /** The object's name; every instance of one gateway uses the same. Default `model-gateway`. */
  name?: string
}

type Call = <T>(op: DurableObjectOp, ...args: unknown[]) => Promise<T>

// One call per operation to the object that owns the keys; its failures are GatewayErrors (a storage outage).
function caller(namespace: DurableObjectNamespaceLike, options: DurableObjectOptions = {}): Call {
  const id = namespace.idFromName(options.name ?? 'model-gateway')
  return async (op, ...args) => {
    // A stub per call: workerd ties a stub's I/O to the request that made it.
    const stub = namespace.get(id as never)
    let res: Response
    try {
      res = await stub.fetch('https://model-gateway.do/', { method: 'POST', body: encodeCall({ op, args }) })
    } catch (error) {
      throw new GatewayError(503, 'the Durable Object did not answer', { cause: error })
    }
    const answer = decodeCall<{ result?: unknown; error?: string }>(await res.text())
    if (!res.ok) throw new GatewayError(503, `the Durable Object failed: ${answer.error ?? res.status}`)
    return answer.result as never
  }
}

/**
 * The records' storage in the gateway's Durable Object (docs/edge.md#the-durable-object-engine): an unstorage
 * Storage whose every call is one call to the object, where the engine's counters and holds live too.
 */
export function durableObjectStorage(namespace: DurableObjectNamespaceLike, options?: DurableObjectOptions): Storage {
  const call = caller(namespace, options)
  const driver = defineDriver((own: DurableObjectDriverOptions) => ({
    name: 'durable-object',
    // What createAtomicOps and createHoldOps read to serve this storage's keys with the object's engine.
    options: own,
    hasItem: (key) => call<boolean>('hasItem', key),
    getItem: (key) => call('getItem', key),
    async setItem(key, value, opts) {
      await call('setItem', key, value, (opts as { ttl?: number } | undefined)?.ttl)
    },
    async removeItem(key) {
      await call('removeItem', key)
    },
    getKeys: (base) => call<string[]>('getKeys', base),
    async clear(base) {
      await call('clear', base)
    },
  }))
  return createStorage({ driver: driver({ namespace, ...options }) })
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
  const call = caller(namespace, options)
  const queued = keyQueue()
  const atomic: AtomicOps = {
    kind: 'durable-object',
    addUnits: (key, delta, window) => call('addUnits', key, delta, window),
    addUnitsMany: (changes) => call('addUnitsMany', changes),
    getUnits: (key, windowStart) => call('getUnits', key, windowStart),
    increment: (key, by, ttl) => call('increment', key, by, ttl),
    setIfAbsent: (key, value) => call('setIfAbsent', key, value),
    take: (key) => call('take', key),
    read: (key) => call('read', key),
    // The function stays here: read, run it, write if nobody wrote meanwhile, else run it again on what the object
    // answered it holds (as Redis's WATCH does). One update of a key at a time from this instance: concurrent ones
    // queue here instead of each losing its compare-and-set to the others (only other instances' writes conflict).
    update: (key, fn) =>
      queued(key, async () => {
        let current = await call<never>('read', key)
        for (;;) {
          const next = fn(current)
          if (next === undefined) return current
          const answer = await call<{ written: boolean; current: never }>('compareAndSet', key, current, next)
          if (answer.written) return next
          current = answer.current
        }
      }),
    claimAndAddUnits: (claimKey, claim, counterKey, delta) => call('claimAndAddUnits', claimKey, claim, counterKey, delta),
  }
  const holds: HoldOps = {
    kind: 'durable-object',
    place: (input) => call('place', input),
    settle: (input) => call('settle', input),
    renew: (input) => call('renew', input),
    held: (budget, now) => call('held', budget, now),
  }
  return { name: 'durable-object', atomic: () => atomic, holds: () => holds }
}
