import type { LimitReset } from './account-types'
import type { AtomicOps, CounterCharge, CounterWindow } from './engine-types'
import { createKeyMemo } from './key-memo'
import type { Kv } from './kv'

/**
 * A key's spending counters (docs/keys.md): what it was charged in credits (`usage`) and the upstream cost of the
 * requests a customer's own provider key served (`byok`), in all and per UTC day, week and month.
 */
export type KeyCounter = 'usage' | 'byok'
/** All time, or one of the windows a limit may reset with. */
export type KeyPeriod = 'total' | LimitReset

/**
 * Storage key of one of a key's counters. The total of `usage` is the counter a credit limit was always checked
 * against (`credits:key:<hash>:used`); the others sit beside it (`…:used-daily`, `…:byok`, `…:byok-monthly`; no key
 * is a prefix of another: the fs driver makes folders of prefixes).
 */
export function keyCounterKey(kv: Kv, keyHash: string, counter: KeyCounter, period: KeyPeriod): string {
  return kv.key('credits', 'key', keyHash, COUNTER_NAMES[counter][period])
}

// The last part of each counter's key.
const COUNTER_NAMES: Readonly<Record<KeyCounter, Readonly<Record<KeyPeriod, string>>>> = {
  usage: { total: 'used', daily: 'used-daily', weekly: 'used-weekly', monthly: 'used-monthly' },
  byok: { total: 'byok', daily: 'byok-daily', weekly: 'byok-weekly', monthly: 'byok-monthly' },
}

/** Every counter a key may have (`usage` and `byok`, in all and per day, week and month): what goes when its record goes. */
export function keyCounterKeys(kv: Kv, keyHash: string): string[] {
  const periods: KeyPeriod[] = ['total', 'daily', 'weekly', 'monthly']
  return (['usage', 'byok'] as const).flatMap((counter) => periods.map((period) => keyCounterKey(kv, keyHash, counter, period)))
}

/** The counters of every key's spending: read one, or name one as a charge for a hold's settlement (docs/money.md). */
export function createKeyCountersStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  // A key's counters are named by the same strings on every request of the key.
  const memo = createKeyMemo()
  const counterKey = (keyHash: string, counter: KeyCounter, period: KeyPeriod): string => {
    const name = COUNTER_NAMES[counter][period]
    return memo.get(keyHash, name) ?? memo.set(keyHash, name, keyCounterKey(kv, keyHash, counter, period))
  }
  return {
    /** The full storage key of a key's counter (as keyCounterKey). */
    key: counterKey,
    /** Reads a key's counter; a windowed one (`windowStart`, epoch ms) reads 0 when it counted an earlier window. */
    read: (keyHash: string, counter: KeyCounter, period: KeyPeriod, windowStart?: number): Promise<bigint> =>
      atomic.getUnits(counterKey(keyHash, counter, period), windowStart),
    /** The charge of `units` to a key's counter, for a hold's settlement to add (with `window` for a windowed one). */
    charge: (keyHash: string, counter: KeyCounter, period: KeyPeriod, units: bigint, window?: CounterWindow): CounterCharge =>
      window ? { key: counterKey(keyHash, counter, period), units, window } : { key: counterKey(keyHash, counter, period), units },
  }
}

/** The key counters store's operations. */
export type KeyCountersStore = ReturnType<typeof createKeyCountersStore>
