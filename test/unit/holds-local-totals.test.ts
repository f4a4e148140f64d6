import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createLocalAtomic } from '../../src/stores/atomic-local'
import { createLocalHolds } from '../../src/stores/holds-local'
import { ownedStorage } from '../../src/stores/records'

// The local holds engine keeps a live record's total and earliest expiry (src/stores/holds-local.ts): whatever order
// holds are placed, renewed, settled and expire in, by one engine or two over the same memory storage, what a budget
// can still cover is its ceiling less the holds still live, exactly.
describe('the local holds engine’s known totals', () => {
  it('follow places, settlements, renewals and expiries, on two engines over one storage', async () => {
    const storage = ownedStorage(createStorage())
    const atomic = createLocalAtomic(storage, '')
    const [one, two] = [createLocalHolds(storage, atomic), createLocalHolds(storage, atomic)]
    await atomic.addUnits('granted', 100n)
    const budget = { usedKey: 'used', holdsKey: 'holds:org:o', limit: { key: 'granted' } }
    const place = (engine: typeof one, id: string, units: bigint, expiresAt: number, now: number) =>
      engine.place({ id, units, expiresAt, now, budgets: [budget] })

    expect(await place(one, 'a', 30n, 1000, 0)).toEqual({ ok: true })
    expect(await place(two, 'b', 30n, 500, 0)).toEqual({ ok: true })
    expect(await one.held(budget, 0)).toBe(60n)
    // 40 left: 41 is refused, by either engine.
    expect(await place(one, 'c', 41n, 2000, 10)).toEqual({ ok: false, index: 0, available: 40n })
    expect(await place(two, 'c', 41n, 2000, 10)).toEqual({ ok: false, index: 0, available: 40n })
    // b expires at 500: at 600 its room is free again.
    expect(await place(two, 'c', 70n, 2000, 600)).toEqual({ ok: true })
    expect(await one.held(budget, 600)).toBe(100n)
    // a settles for 10 (charged, its hold gone): 100 granted − 10 used − 70 held = 20 left.
    await one.settle({ id: 'a', budgets: [budget], charges: [10n] })
    expect(await two.held(budget, 700)).toBe(70n)
    expect(await place(one, 'd', 21n, 3000, 700)).toEqual({ ok: false, index: 0, available: 20n })
    // c renewed past its expiry still counts; not renewed, it would have expired at 2000.
    expect(await two.renew({ id: 'c', budgets: [budget], expiresAt: 5000, now: 1500 })).toBe(1)
    expect(await one.held(budget, 2500)).toBe(70n)
    expect(await place(two, 'd', 20n, 6000, 2500)).toEqual({ ok: true })
    expect(await one.held(budget, 5500)).toBe(20n) // c expired at 5000, d still live
    await two.settle({ id: 'd', budgets: [budget], charges: [0n] })
    expect(await one.held(budget, 5500)).toBe(0n)
    expect(await place(one, 'e', 90n, 9000, 5600)).toEqual({ ok: true })
  })
})
