import type { AtomicOps, Budget, HoldOps } from './engine-types'
import { keyCounterKey, type KeyPeriod } from './key-counters'
import { createKeyMemo } from './key-memo'
import type { Kv } from './kv'

/** How a key's credit limit bounds it: the period it counts (`windowStart` when it resets), BYOK usage too or not, and the limit. */
export interface KeyBudgetTerms {
  period: KeyPeriod
  /** The start (epoch ms) of the current window, for a limit that resets. */
  windowStart?: number
  includeByok: boolean
  /** The credit limit in ledger units. */
  units: bigint
}

/** The storage key of the live holds on a key's credit limit (`holds:key:<hash>`). */
export const keyHoldsKey = (kv: Kv, keyHash: string): string => kv.key('holds', 'key', keyHash)

/**
 * Holds on budgets (docs/money.md): the budgets of an org's credits and of a key's credit limit, named by their
 * counters in storage (`credits:<org>:used|granted`, `holds:org:<org>`, `credits:key:<hash>:…`, `holds:key:<hash>`),
 * and the atomic hold operations on them.
 */
export function createHoldsStore({ kv, atomic, ops }: { kv: Kv; atomic: AtomicOps; ops: HoldOps }) {
  // An org's budget names the same keys on every request of the org.
  const memo = createKeyMemo()
  const orgKey = (orgId: string, name: 'used' | 'granted' | 'holds') =>
    memo.get(orgId, name) ?? memo.set(orgId, name, name === 'holds' ? kv.key('holds', 'org', orgId) : kv.key('credits', orgId, name))
  return {
    /** Which engine makes holds atomic: `redis` (shared by instances) or `local` (one process). */
    get kind() {
      return ops.kind
    },
    /** Places a hold on every budget or on none (HoldOps.place). */
    place: ops.place,
    /** Replaces a hold by its exact charges in one step (HoldOps.settle). */
    settle: ops.settle,
    /** Extends a running request's live hold (HoldOps.renew). */
    renew: ops.renew,
    /** The units of live holds on a budget. */
    held: ops.held,
    /** The budget of an org's credits: granted − used − live holds. */
    orgBudget: (orgId: string): Budget => ({
      usedKey: orgKey(orgId, 'used'),
      holdsKey: orgKey(orgId, 'holds'),
      limit: { key: orgKey(orgId, 'granted') },
    }),
    /** The budget of a key's credit limit: the limit − what its counters of the period spent − live holds. */
    keyBudget: (keyHash: string, terms: KeyBudgetTerms): Budget => ({
      usedKey: keyCounterKey(kv, keyHash, 'usage', terms.period),
      ...(terms.windowStart !== undefined ? { usedWindow: terms.windowStart } : {}),
      ...(terms.includeByok ? { alsoUsed: [keyCounterKey(kv, keyHash, 'byok', terms.period)] } : {}),
      holdsKey: keyHoldsKey(kv, keyHash),
      limit: { units: terms.units },
    }),
    /** What a budget's counters spent (live holds not counted). */
    async spent(budget: Budget): Promise<bigint> {
      const spent = await Promise.all([budget.usedKey, ...(budget.alsoUsed ?? [])].map((k) => atomic.getUnits(k, budget.usedWindow)))
      return spent.reduce((sum, units) => sum + units, 0n)
    },
  }
}

/** The holds store's operations. */
export type HoldsStore = ReturnType<typeof createHoldsStore>
