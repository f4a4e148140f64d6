import { createStorage } from 'unstorage'
import { lockFor, createLocalAtomic } from './atomic-local'
import { createLocalHolds } from './holds-local'
import { type DurableObjectOp, decodeCall, encodeCall } from './durable-object-protocol'
import { durableObjectStateDriver, type DurableObjectStorageLike } from './durable-object-state'

/** What workerd hands a Durable Object's constructor (its `ctx`): the gateway uses its storage. */
export interface DurableObjectStateLike {
  storage: DurableObjectStorageLike
}

/**
 * The Durable Object that owns a gateway's records, counters and holds (docs/edge.md#the-durable-object-engine):
 * each call is one operation of the in-process engines over the object's own storage, and the object runs one
 * thing at a time, so every operation is atomic for every gateway instance, as a Redis script is. Bind it as a
 * Durable Object class in wrangler.toml; the gateway reaches it through durableObjectEngine and durableObjectStorage.
 */
export class ModelGatewayObject {
  readonly #ops: Record<DurableObjectOp, (...args: never[]) => Promise<unknown>>

  /** Built by workerd with the object's state (`ctx`) and the Worker's env (unused). */
  constructor(state: DurableObjectStateLike, _env?: unknown) {
    const storage = createStorage({ driver: durableObjectStateDriver(state.storage) })
    const atomic = createLocalAtomic(storage, '')
    const holds = createLocalHolds(storage, atomic)
    const lock = lockFor(storage, '')
    this.#ops = {
      addUnits: (key: string, delta: bigint, window) => atomic.addUnits(key, delta, window),
      addUnitsMany: (changes) => atomic.addUnitsMany(changes),
      getUnits: (key: string, windowStart?: number) => atomic.getUnits(key, windowStart),
      increment: (key: string, by?: number, ttl?: number) => atomic.increment(key, by, ttl),
      setIfAbsent: (key: string, value: unknown) => atomic.setIfAbsent(key, value),
      take: (key: string) => atomic.take(key),
      read: (key: string) => atomic.read(key),
      // The update of a record (AtomicOps.update, whose function stays with the caller): written only if it still
      // holds what the caller read, under the key's lock; else not written, with what it holds for the caller's next try.
      compareAndSet: (key: string, expected: unknown, next: unknown) =>
        lock(key, async () => {
          const current = (await storage.getItem(key)) ?? null
          if (JSON.stringify(current) !== JSON.stringify(expected ?? null)) return { written: false, current }
          if (next === null) await storage.removeItem(key)
          else await storage.setItem(key, next as never)
          return { written: true, current: next }
        }),
      claimAndAddUnits: (claimKey: string, claim: unknown, counterKey: string, delta: bigint) => atomic.claimAndAddUnits(claimKey, claim, counterKey, delta),
      place: (input) => holds.place(input),
      settle: (input) => holds.settle(input),
      renew: (input) => holds.renew(input),
      held: (budget, now: number) => holds.held(budget, now),
      hasItem: (key: string) => storage.hasItem(key),
      getItem: (key: string) => storage.getItem(key),
      // Under the key's lock, as the engines' own writes are: never between an update's read and its write.
      setItem: (key: string, value: unknown, ttl?: number) => lock(key, () => storage.setItem(key, value as never, ttl ? { ttl } : undefined)),
      removeItem: (key: string) => lock(key, () => storage.removeItem(key)),
      getKeys: (base?: string) => storage.getKeys(base),
      clear: (base?: string) => storage.clear(base),
    }
  }

  /** Serves one operation: a POST whose body is `{ op, args }` (src/stores/durable-object-protocol.ts). */
  async fetch(request: Request): Promise<Response> {
    let call: { op: DurableObjectOp; args: unknown[] }
    try {
      call = decodeCall(await request.text())
    } catch {
      return new Response(encodeCall({ error: 'the body is not a call' }), { status: 400 })
    }
    const run = Object.hasOwn(this.#ops, call.op) ? this.#ops[call.op] : undefined
    if (!run) return new Response(encodeCall({ error: `unknown operation ${String(call.op)}` }), { status: 400 })
    try {
      const result = await run(...((call.args ?? []) as never[]))
      return new Response(encodeCall({ result: result ?? null }))
    } catch (error) {
      return new Response(encodeCall({ error: error instanceof Error ? error.message : String(error) }), { status: 500 })
    }
  }
}
