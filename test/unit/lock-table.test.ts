import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createLocalAtomic, lockFor } from '../../src/stores/atomic-local'
import { collectGarbage } from '../helpers/gc'

const gc = collectGarbage()

/** Nothing grows without bound in the local atomic engine (docs/retention.md). */
describe('local atomic engine: lock table', () => {
  it('keeps no entry once the work under 10,000 distinct keys is done', async () => {
    const lock = lockFor(createStorage(), 'gateway:')
    // An entry left in the table would hold its last result: each result is watched through a WeakRef.
    const results: WeakRef<object>[] = []
    await Promise.all(
      Array.from({ length: 10_000 }, (_, i) =>
        lock(`gateway:lock-test:${i}`, async () => {
          const result = { i }
          results.push(new WeakRef(result))
          return result
        }).then(() => undefined),
      ),
    )
    // A WeakRef's target is kept alive until the job that made it ends (the WeakRef spec's KeepDuringJob), and Node
    // releases those only at a microtask checkpoint of its own, which a turn of the event loop does not always reach
    // before the collection (the full suite once saw one target still kept after two turns). A result an entry holds
    // stays reachable however many turns and collections pass.
    const alive = () => results.filter((ref) => ref.deref() !== undefined).length
    for (let round = 0; round < 5 && (round < 2 || alive() > 0); round++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      gc()
    }
    expect(alive()).toBe(0)
  })

  it('starts an expired window afresh', async () => {
    const storage = createStorage()
    const atomic = createLocalAtomic(storage, 'gateway:')
    await storage.setItem('gateway:ratelimit:key:k:0', { count: 7, expires: Date.now() - 1 })
    expect(await atomic.increment('gateway:ratelimit:key:k:0', 1, 2)).toBe(1)
    expect(await atomic.increment('gateway:ratelimit:key:k:0', 1, 2)).toBe(2)
  })
})
