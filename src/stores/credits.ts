import { fromUnits, toUnits } from '../billing/money'
import { invalidRequest } from '../errors'
import { newId } from '../crypto/keys'
import type { AtomicOps } from './atomic'
import type { Kv } from './kv'

/** An org's credits as api.md 2.1 shows them: exact decimal strings in EUR. */
export interface Credits {
  balance: string
  total_credits: string
  total_usage: string
}

/** One line of an org's credit ledger (append-only). */
export interface LedgerEntry {
  id: string
  org_id: string
  kind: 'grant' | 'charge'
  amount: string
  note: string | null
  at: string
}

/** Options of the credits store. */
export interface CreditsOptions {
  kv: Kv
  atomic: AtomicOps
  now: () => number
}

/** Exact credit balances (decisions.md §4): granted and used are two atomic decimal counters; balance is their difference. */
export function createCreditsStore({ kv, atomic, now }: CreditsOptions) {
  const grantedKey = (orgId: string) => kv.key('credits', orgId, 'granted')
  const usedKey = (orgId: string) => kv.key('credits', orgId, 'used')

  async function appendLedger(orgId: string, kind: LedgerEntry['kind'], units: bigint, note?: string) {
    const at = now()
    const entry: LedgerEntry = { id: newId(), org_id: orgId, kind, amount: fromUnits(units), note: note ?? null, at: new Date(at).toISOString() }
    // Time-ordered key, unique per entry: appends never conflict, so they need no lock.
    await kv.set(entry, 'ledger', orgId, `${at.toString().padStart(15, '0')}-${entry.id}`)
  }

  const store = {
    /** The org's balance in ledger units (granted − used). */
    async balanceUnits(orgId: string): Promise<bigint> {
      const [granted, used] = await Promise.all([atomic.getUnits(grantedKey(orgId)), atomic.getUnits(usedKey(orgId))])
      return granted - used
    },

    /** The org's credits as decimal strings. */
    async get(orgId: string): Promise<Credits> {
      const [granted, used] = await Promise.all([atomic.getUnits(grantedKey(orgId)), atomic.getUnits(usedKey(orgId))])
      return { balance: fromUnits(granted - used), total_credits: fromUnits(granted), total_usage: fromUnits(used) }
    },

    /** Adds credits (a positive exact decimal, EUR) and records a ledger entry. */
    async add(orgId: string, amount: string | number, note?: string): Promise<Credits> {
      const units = toUnits(amount)
      if (units <= 0n) throw invalidRequest('amount: must be greater than 0', 'amount')
      await atomic.addUnits(grantedKey(orgId), units)
      await appendLedger(orgId, 'grant', units, note)
      return store.get(orgId)
    },

    /** Charges usage (a non-negative amount in ledger units); a charge may overdraw, as decisions.md §4 allows. */
    async chargeUnits(orgId: string, units: bigint, note?: string): Promise<void> {
      if (units < 0n) throw invalidRequest('amount: must not be negative', 'amount')
      if (units === 0n) return
      await atomic.addUnits(usedKey(orgId), units)
      if (note !== undefined) await appendLedger(orgId, 'charge', units, note)
    },

    /** Records a charge already made to the used counter (by an atomic step elsewhere) as a ledger entry only. */
    async recordCharge(orgId: string, units: bigint, note: string): Promise<void> {
      await appendLedger(orgId, 'charge', units, note)
    },

    /** Lists an org's ledger, oldest first. */
    async ledger(orgId: string): Promise<LedgerEntry[]> {
      const keys = (await kv.list('ledger', orgId)).sort()
      const entries = await Promise.all(keys.map((k) => kv.get<LedgerEntry>('ledger', orgId, k)))
      return entries.filter((e): e is LedgerEntry => e !== null)
    },
  }
  return store
}

/** The credits store's operations. */
export type CreditsStore = ReturnType<typeof createCreditsStore>
