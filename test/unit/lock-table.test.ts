import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createLocalAtomic, lockFor } from '../../src/stores/atomic-local'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const turn = () => new Promise((resolve) => setImmediate(resolve))

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
    await turn()
    gc()
    await turn()
    gc()
    expect(results.filter((ref) => ref.deref() !== undefined)).toHaveLength(0)
  })

  it('starts an expired window afresh', async () => {
    const storage = createStorage()
    const atomic = createLocalAtomic(storage, 'gateway:')
    await storage.setItem('gateway:ratelimit:key:k:0', { count: 7, expires: Date.now() - 1 })
    expect(await atomic.increment('gateway:ratelimit:key:k:0', 1, 2)).toBe(1)
    expect(await atomic.increment('gateway:ratelimit:key:k:0', 1, 2)).toBe(2)
  })
})
