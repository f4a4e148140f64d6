import type { Storage } from 'unstorage'
import { createAtomicOps, type CounterWindow } from './atomic'
import { type AtomicOption, customEngineOf, type EngineKind, engineKindOf } from './engine-kind'
import { createLocalHolds } from './holds-local'
import { createPostgresHolds } from './holds-postgres'
import { createRedisHolds } from './holds-redis'
import { mountEngines } from './mount-engines'

/**
 * One budget a hold counts against (docs/money.md): its ceiling (a granted-credits counter, or a fixed amount such
 * as a key's credit limit) minus what was spent (a decimal counter) minus the holds still live on it.
 */
export interface Budget {
  /** Full storage key of the decimal counter of what was spent. */
  usedKey: string
  /**
   * Set when the budget is a limit that resets (a key's daily, weekly or monthly limit: docs/keys.md): `usedKey` (and
   * `alsoUsed`) are windowed counters, and only what they counted in the window starting then (epoch ms) counts.
   */
  usedWindow?: number
  /** More counters of what was spent that count against this budget (a key's BYOK usage when its limit includes it). */
  alsoUsed?: string[]
  /** Full storage key of the holds placed on this budget. */
  holdsKey: string
  /** The ceiling: the key of a decimal counter (credits granted), or a fixed amount in ledger units. */
  limit: { key: string } | { units: bigint }
  /** The units to hold on this budget when not the request's `units` (a key whose limit counts BYOK usage holds more). */
  units?: bigint
}

/** An amount added to a decimal counter when a hold is settled: a key's usage, total or in a window (docs/keys.md). */
export interface CounterCharge {
  /** Full storage key of the counter. */
  key: string
  units: bigint
  /** For a windowed counter: the window the charge falls in (a counter of an earlier window starts again from 0). */
  window?: CounterWindow
}

/** A record a settlement writes in its own step: full storage key, JSON value. */
export interface WrittenRecord {
  key: string
  value: unknown
}

/** The outcome of placing a hold: placed, or the first budget that could not cover it and what it has available. */
export type PlaceResult = { ok: true } | { ok: false; index: number; available: bigint }

/** Atomic holds on budgets: placed only if every budget can cover them, replaced by the exact charge in one step. */
export interface HoldOps {
  /** Which engine makes them atomic: `redis` (shared by instances) or `local` (one process). */
  readonly kind: EngineKind
  /**
   * Places hold `id` of `units` (or a budget's own `units`) on every budget if each one's ceiling − spent − live holds
   * covers it; else places none. Holds whose `expiresAt` (epoch ms) is past `now` no longer count, and are removed.
   * Idempotent: when hold `id` is already placed (a resent command whose first reply was lost), it answers placed and
   * changes nothing (docs/operations.md#when-the-storage-fails).
   */
  place(input: { id: string; units: bigint; expiresAt: number; now: number; budgets: Budget[] }): Promise<PlaceResult>
  /**
   * Removes hold `id` from every budget, adds `charges[i]` ledger units to budget i's spent counter (as a counter that
   * is not windowed), adds each of `counters` and writes `records` (a charge's ledger entry, the usage record and its
   * generation pointer: full storage key, JSON value), in one step. With `once` (the full key of one of `records`),
   * the step runs once: when that record already exists it has run (a resent command, a retried settlement) and
   * nothing is done (docs/operations.md#when-the-storage-fails).
   */
  settle(input: { id: string; budgets: Budget[]; charges: bigint[]; counters?: CounterCharge[]; records?: WrittenRecord[]; once?: string }): Promise<void>
  /**
   * Moves live hold `id`'s expiry to `expiresAt` on every budget where it is still live at `now` (a request still
   * running keeps its hold: docs/money.md); a hold already settled, expired or removed is left as it is. Returns how
   * many budgets' holds were renewed.
   */
  renew(input: { id: string; budgets: Budget[]; expiresAt: number; now: number }): Promise<number>
  /** The units of live holds on a budget (for tests and the admin view). */
  held(budget: Budget, now: number): Promise<bigint>
}

/** Holds over a Storage, served by the engine of the driver mounted at the budgets' keys: a Redis script, PostgreSQL functions, else an in-process lock. */
export function createHoldOps(storage: Storage, option: AtomicOption = 'auto'): HoldOps {
  const custom = customEngineOf(option)
  if (custom) return custom.holds(storage)
  const atomic = createAtomicOps(storage, option)
  const engineFor = mountEngines<HoldOps>(storage, (driver) => {
    const kind = engineKindOf(driver, option)
    if (kind === 'redis') return createRedisHolds(storage, driver as never)
    if (kind === 'postgres') return createPostgresHolds(storage, driver as never)
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
