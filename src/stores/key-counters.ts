import type { LimitReset } from './account-types'
import type { AtomicOps, CounterCharge, CounterWindow } from './engine-types'
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
  const name = counter === 'usage' ? 'used' : 'byok'
  return kv.key('credits', 'key', keyHash, period === 'total' ? name : `${name}-${period}`)
}

/** Every counter a key may have (`usage` and `byok`, in all and per day, week and month): what goes when its record goes. */
export function keyCounterKeys(kv: Kv, keyHash: string): string[] {
  const periods: KeyPeriod[] = ['total', 'daily', 'weekly', 'monthly']
  return (['usage', 'byok'] as const).flatMap((counter) => periods.map((period) => keyCounterKey(kv, keyHash, counter, period)))
}

/** The counters of every key's spending: read one, or name one as a charge for a hold's settlement (docs/money.md). */
export function createKeyCountersStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  return {
    /** Reads a key's counter; a windowed one (`windowStart`, epoch ms) reads 0 when it counted an earlier window. */
    read: (keyHash: string, counter: KeyCounter, period: KeyPeriod, windowStart?: number): Promise<bigint> =>
      atomic.getUnits(keyCounterKey(kv, keyHash, counter, period), windowStart),
    /** The charge of `units` to a key's counter, for a hold's settlement to add (with `window` for a windowed one). */
    charge: (keyHash: string, counter: KeyCounter, period: KeyPeriod, units: bigint, window?: CounterWindow): CounterCharge => ({
      key: keyCounterKey(kv, keyHash, counter, period),
      units,
      ...(window ? { window } : {}),
    }),
  }
}

/** The key counters store's operations. */
export type KeyCountersStore = ReturnType<typeof createKeyCountersStore>
