import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/** A settled BYOK fee's claim: when, how much, and which settlement run made it. */
export interface FeeClaim {
  at: string
  fee_eur: string
  run: string
}

/**
 * BYOK fee records (docs/byok.md#fees-and-settlement): the per-org request counter of a period
 * (`byok-requests:<org>:<YYYY-MM>`), fees pending settlement (`byok-pending:<org>:<id>`, with `byok-orgs:<org>`
 * naming the orgs that have some) and the claims of settled fees (`byok-settled:<id>`).
 */
export function createByokFeesStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  const claimKey = (id: string) => kv.key('byok-settled', id)
  return {
    /** Counts one BYOK request of the org's period and returns the period's count; the counter expires after `ttlSeconds`. */
    countRequest: (orgId: string, periodId: string, ttlSeconds: number): Promise<number> =>
      atomic.increment(kv.key('byok-requests', orgId, periodId), 1, ttlSeconds),
    /** The records that note a request's fee as pending, for the settlement's atomic step to write with its charge (docs/money.md). */
    pendingEntries: (orgId: string, recordId: string, feeEur: string): { key: string; value: unknown }[] => [
      { key: kv.key('byok-pending', orgId, recordId), value: { id: recordId, fee_eur: feeEur } },
      { key: kv.key('byok-orgs', orgId), value: { org_id: orgId } },
    ],
    /** The orgs that have had fees pending. */
    orgs: (): Promise<string[]> => kv.list('byok-orgs'),
    /** The ids of an org's pending fees. */
    pendingIds: (orgId: string): Promise<string[]> => kv.list('byok-pending', orgId),
    /** A pending fee, or null. */
    pending: (orgId: string, id: string): Promise<{ fee_eur: string } | null> => kv.get<{ fee_eur: string }>('byok-pending', orgId, id),
    /** Removes a pending fee (settled, or claimed by another run). */
    removePending: (orgId: string, id: string): Promise<void> => kv.remove('byok-pending', orgId, id),
    /**
     * Claims request `id`'s fee and adds `units` to the org's used credits (`credits:<org>:used`) in one atomic step;
     * false when it was already claimed.
     */
    claimAndCharge: (orgId: string, id: string, claim: FeeClaim, units: bigint): Promise<boolean> =>
      atomic.claimAndAddUnits(claimKey(id), claim, kv.key('credits', orgId, 'used'), units),
    /** The claim of a request's fee, or null when unclaimed. */
    claimOf: (id: string): Promise<Partial<FeeClaim> | null> => atomic.read<Partial<FeeClaim>>(claimKey(id)),
    /** True when a request's fee was settled (claimed). */
    isSettled: (id: string): Promise<boolean> => kv.storage.hasItem(claimKey(id)),
    /** The ids of every settled fee's claim (for the retention sweep). */
    settledIds: (): Promise<string[]> => kv.list('byok-settled'),
    /** Every pending fee, as `<org>:<id>` (for the retention sweep). */
    pendingKeys: (): Promise<string[]> => kv.list('byok-pending'),
    /** Removes claims (by request id) and pending fees, 32 at a time (records gone with their usage records: docs/retention.md). */
    async removeRecords(settledIds: string[], pending: { org: string; id: string }[]): Promise<void> {
      const removals = [...settledIds.map(claimKey), ...pending.map(({ org, id }) => kv.key('byok-pending', org, id))]
      for (let i = 0; i < removals.length; i += 32) await Promise.all(removals.slice(i, i + 32).map((key) => kv.storage.removeItem(key)))
    },
  }
}

/** The BYOK fees store's operations. */
export type ByokFeesStore = ReturnType<typeof createByokFeesStore>
