import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createKeyCountersStore, keyCounterKey } from '../../src/stores/key-counters'
import { createKeyMemo } from '../../src/stores/key-memo'
import { createKv } from '../../src/stores/kv'
import { createSpendCountersStore } from '../../src/stores/spend-counters'

describe('counter keys kept per owner', () => {
  it('are the keys built without the memo, for every counter, period and kind of subject', () => {
    const kv = createKv(createStorage(), 'gw')
    const atomic = {} as never
    const keys = createKeyCountersStore({ kv, atomic })
    const spend = createSpendCountersStore({ kv, atomic })
    for (const counter of ['usage', 'byok'] as const)
      for (const period of ['total', 'daily', 'weekly', 'monthly'] as const) {
        expect(keys.key('h1', counter, period)).toBe(keyCounterKey(kv, 'h1', counter, period))
        expect(keys.key('h1', counter, period)).toBe(keys.key('h1', counter, period)) // the same string, kept
      }
    expect(keys.key('h1', 'byok', 'weekly')).toBe('gw:credits:key:h1:byok-weekly')
    expect(keys.charge('h2', 'usage', 'daily', 5n, { start: 1, ttlMs: 2 })).toEqual({
      key: 'gw:credits:key:h2:used-daily',
      units: 5n,
      window: { start: 1, ttlMs: 2 },
    })
    expect(keys.charge('h2', 'usage', 'total', 5n)).toEqual({ key: 'gw:credits:key:h2:used', units: 5n })
    expect(spend.usageCharge({ kind: 'user', id: 'u1' }, 'monthly', 3n).key).toBe('gw:credits:user:u1:used-monthly')
    expect(spend.usageCharge({ kind: 'key', hash: 'u1' }, 'total', 3n).key).toBe('gw:credits:key:u1:used') // not the user's
    expect(spend.usageCharge({ kind: 'org', id: 'u1' }, 'daily', 3n).key).toBe('gw:credits:org:u1:used-daily')
    expect(spend.usageCharge({ kind: 'end-user', orgId: 'o1', hash: 'e1' }, 'total', 3n).key).toBe('gw:credits:end-user:o1:e1:used')
  })

  it('keep at most maxOwners owners', () => {
    const memo = createKeyMemo(2)
    memo.set('a', 'x', 'A')
    memo.set('b', 'x', 'B')
    expect(memo.get('a', 'x')).toBe('A')
    memo.set('c', 'x', 'C') // a third owner: the memo starts again
    expect([memo.get('a', 'x'), memo.get('b', 'x'), memo.get('c', 'x')]).toEqual([undefined, undefined, 'C'])
  })
})
