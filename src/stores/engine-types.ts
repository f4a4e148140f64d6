import type { Storage } from 'unstorage'

// The interfaces the atomic engines implement and their users call (docs/development.md#layers): the engines
// (atomic-*.ts, holds-*.ts) and the modules that pick them (atomic.ts, holds.ts, engine-kind.ts) all import these
// types from here, so that no engine imports the module that picks engines.

/**
 * The few operations that must be atomic when several gateway instances share one storage.
 * Keys are full storage keys; values written here are only read back through these operations.
 */
export interface AtomicOps {
  /** Which engine makes the operations atomic for keys at this mount: `redis` (shared by instances) or `local` (one process). */
  readonly kind: EngineKind
  /**
   * Adds `delta` ledger units to an exact decimal counter and returns its new value. With `window`, the counter is
   * windowed (what was spent in one UTC day, week or month: docs/keys.md): one that counted an earlier window starts
   * again from 0, and where storage expires records it is kept `ttlMs` more (so nothing grows without bound).
   */
  addUnits(key: string, delta: bigint, window?: CounterWindow): Promise<bigint>
  /** Adds to several decimal counters (as `addUnits`, without windows) in one step: one round trip and one transaction on Redis. */
  addUnitsMany(changes: { key: string; delta: bigint }[]): Promise<void>
  /** Reads a decimal counter (0 when absent); with `windowStart`, a windowed counter: 0 when it counted an earlier window. */
  getUnits(key: string, windowStart?: number): Promise<bigint>
  /** Adds to an integer counter and returns the new value (`by` 0 reads it); `ttlSeconds` starts a window when the counter is new. */
  increment(key: string, by?: number, ttlSeconds?: number): Promise<number>
  /** Writes a JSON record only if the key is absent; true when written. */
  setIfAbsent(key: string, value: unknown): Promise<boolean>
  /** Reads a JSON record and deletes it in one step: of concurrent callers, only one gets it. */
  take<T>(key: string): Promise<T | null>
  /** Reads a JSON record (null when absent), never half of a concurrent `update` (local engines read under the key's lock). */
  read<T>(key: string): Promise<T | null>
  /**
   * Atomic read-modify-write of a JSON record: `fn` gets the current value (null when absent) and returns the next
   * one, null to delete it, or undefined to leave it; it may run more than once (Redis retries on a conflict), so it
   * must not have side effects, and throwing from it aborts without writing. Resolves to the value stored after it.
   */
  update<T>(key: string, fn: (current: T | null) => T | null | undefined): Promise<T | null>
  /**
   * Writes `claim` at `claimKey` only if that key is absent and, in the same atomic step, adds `delta` ledger units
   * to the decimal counter at `counterKey` (as `addUnits`); true when claimed and added, false when already claimed.
   */
  claimAndAddUnits(claimKey: string, claim: unknown, counterKey: string, delta: bigint): Promise<boolean>
  /**
   * Adds to several decimal counters (windowed or not, as `addUnits`) where it can at once, with no promise (the local
   * engine's idle counters in the gateway's own memory storage); a promise only when some had to wait. Optional.
   */
  addCountersNow?(counters: CounterCharge[]): Promise<void> | undefined
  /**
   * A decimal counter's units read at once (as `getUnits`), or undefined when it cannot be without a promise (its lock
   * is busy, or it is not in the gateway's own memory storage). Optional: the local engine's.
   */
  unitsNow?(key: string, windowStart?: number): bigint | undefined
  /**
   * All or nothing, at once: when every counter with units can be read and changed with no promise (its lock idle, in
   * the gateway's own memory storage), adds them all and answers true; else changes none and answers false. Optional:
   * the local engine's.
   */
  addCountersAtOnce?(counters: CounterCharge[]): boolean
}

/** The window of a windowed counter: when it began (epoch ms), and how long storage keeps the counter after a write. */
export interface CounterWindow {
  start: number
  ttlMs: number
}

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

/**
 * An atomic engine of the host's own (docs/operations.md#an-engine-of-your-own), for a storage the built-in ones do not
 * serve: the atomic operations and the holds over the gateway's keys, with the contract of AtomicOps and HoldOps.
 */
export interface AtomicEngine {
  /** Its name (errors, `kind` of the operations it gives). */
  name: string
  /** The atomic operations over `storage`'s keys. */
  atomic(storage: Storage): AtomicOps
  /** The holds over `storage`'s keys. */
  holds(storage: Storage): HoldOps
}

/**
 * The `atomic` option of createGateway (docs/operations.md#several-instances): `auto` picks the engine by the storage
 * driver (Redis scripts, PostgreSQL functions, or an in-process lock for drivers only one process uses); `local`
 * accepts the in-process lock for any driver, for a storage the host knows only this process uses; an AtomicEngine
 * serves every key with the host's own engine.
 */
export type AtomicOption = 'auto' | 'local' | AtomicEngine

/** Which engine makes counters, holds and claims atomic: shared by instances (`redis`, `postgres`, a host's engine) or one process (`local`). */
export type EngineKind = 'redis' | 'postgres' | 'local' | (string & {})
