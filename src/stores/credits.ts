import { fromUnits, toUnits } from '../billing/money'
import { invalidRequest } from '../errors'
import { newId } from '../crypto/keys'
import { isoTime } from '../runtime/iso-time'
import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/** An org's credits as GET /me shows them (docs/api.md#identity): exact decimal strings in EUR. */
export interface Credits {
  balance: string
  total_credits: string
  total_usage: string
}

/**
 * One line of an org's credit ledger (append-only, kept for ever: docs/money.md, docs/retention.md): credits added,
 * each request charged to the credits (chat, speech, transcription; with its generation id), each BYOK fee settlement
 * and each admin charge. Its grants add up to `total_credits` and its charges to `total_usage`.
 */
export interface LedgerEntry {
  id: string
  org_id: string
  kind: 'grant' | 'charge'
  /** EUR, an exact decimal string. */
  amount: string
  note: string | null
  at: string
  /** The charge of a request: the generation it paid for (its usage record and GET /generation, while they are kept). */
  generation_id?: string
}

/** Which part of a time-ordered list an admin reader returns (the ledger, usage records): docs/usage.md. */
export interface PageOptions {
  /** Only what happened at or after this time (ISO 8601 text, epoch ms or a Date). */
  since?: string | number | Date
  /** Only what happened before this time. */
  until?: string | number | Date
  /** At most this many (a whole number ≥ 1). */
  limit?: number
  /** Continue after this item: the `id` of the last one of the previous page (in the same `order`). */
  after?: string
  /** `asc` (oldest first, the default) or `desc` (newest first). */
  order?: 'asc' | 'desc'
}

const timeOf = (value: unknown, param: string): number => {
  const ms =
    value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(ms)) throw invalidRequest(`${param}: must be a time (ISO 8601 text such as "2026-11-26T00:00:00Z", epoch milliseconds or a Date)`, param)
  return ms
}

/**
 * The keys of one page of a time-ordered list whose keys are `<epoch ms, 15 digits>-<id>` (ledger entries, usage
 * records), given every key of the list. `afterKey` is the key of the item named by `after` (the caller finds it);
 * a page continues strictly past it, so items removed meanwhile (the retention) do not shift the pages.
 */
export function pageOfKeys(keys: string[], options: PageOptions, settings: { afterKey?: string; defaultLimit?: number; maxLimit?: number } = {}): string[] {
  const from = options.since === undefined ? -Infinity : timeOf(options.since, 'since')
  const to = options.until === undefined ? Infinity : timeOf(options.until, 'until')
  const { order = 'asc' } = options
  if (order !== 'asc' && order !== 'desc') throw invalidRequest('order: must be "asc" or "desc"', 'order')
  const limit = options.limit ?? settings.defaultLimit
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || (settings.maxLimit !== undefined && limit > settings.maxLimit))) {
    throw invalidRequest(`limit: must be a whole number from 1${settings.maxLimit === undefined ? '' : ` to ${settings.maxLimit}`}`, 'limit')
  }
  const { afterKey } = settings
  let selected = keys
    .filter((key) => {
      const at = Number(key.slice(0, 15))
      return at >= from && at < to && (afterKey === undefined || (order === 'asc' ? key > afterKey : key < afterKey))
    })
    .sort()
  if (order === 'desc') selected = selected.reverse()
  return limit === undefined ? selected : selected.slice(0, limit)
}

/** The key of the item `id` among the keys of a time-ordered list (`<ms>-<id>`), or a 400 naming `after`. */
export function keyOfItem(keys: string[], id: string): string {
  if (typeof id !== 'string' || !id) throw invalidRequest('after: must be the id of an item of the previous page', 'after')
  const key = keys.find((k) => k.endsWith(`-${id}`) && k.length === 16 + id.length)
  if (!key) throw invalidRequest(`after: nothing with the id ${id} (give the id of the last item of the previous page)`, 'after')
  return key
}

// Ledger ids begin with this process's write sequence, so that entries written in the same millisecond keep their
// order (a grant, then the charges after it); across processes, entries of one millisecond are in no particular order.
let ledgerSequence = 0
const ledgerId = () => `${(ledgerSequence++ % 36 ** 8).toString(36).padStart(8, '0')}${newId()}`

/** Options of the credits store. */
export interface CreditsOptions {
  kv: Kv
  atomic: AtomicOps
  now: () => number
}

/** Exact credit balances (docs/money.md): granted and used are two atomic decimal counters; balance is their difference. */
export function createCreditsStore({ kv, atomic, now }: CreditsOptions) {
  const grantedKey = (orgId: string) => kv.key('credits', orgId, 'granted')
  const usedKey = (orgId: string) => kv.key('credits', orgId, 'used')

  // A new ledger entry and the last part of its key, under `ledger:<org>`: time-ordered and unique per entry, so
  // appends never conflict (no lock).
  function ledgerEntry(orgId: string, kind: LedgerEntry['kind'], units: bigint, note?: string, generationId?: string): { name: string; entry: LedgerEntry } {
    const at = now()
    const id = ledgerId()
    // Each shape as one literal (a spread into a literal makes a slower object, per charge).
    const entry: LedgerEntry = generationId
      ? { id, org_id: orgId, kind, amount: fromUnits(units), note: note ?? null, at: isoTime(at), generation_id: generationId }
      : { id, org_id: orgId, kind, amount: fromUnits(units), note: note ?? null, at: isoTime(at) }
    return { name: `${at.toString().padStart(15, '0')}-${id}`, entry }
  }

  async function appendLedger(orgId: string, kind: LedgerEntry['kind'], units: bigint, note?: string, generationId?: string): Promise<LedgerEntry> {
    const { name, entry } = ledgerEntry(orgId, kind, units, note, generationId)
    await kv.set(entry, 'ledger', orgId, name)
    return entry
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

    /** Charges usage (a non-negative amount in ledger units); a charge may overdraw, as docs/money.md allows. */
    async chargeUnits(orgId: string, units: bigint, note?: string): Promise<void> {
      if (units < 0n) throw invalidRequest('amount: must not be negative', 'amount')
      if (units === 0n) return
      await atomic.addUnits(usedKey(orgId), units)
      if (note !== undefined) await appendLedger(orgId, 'charge', units, note)
    },

    /**
     * Records a charge already made to the used counter (by an atomic step elsewhere: a request's settlement, a BYOK
     * fee settlement) as a ledger entry only; `generationId` names the request it charged.
     */
    async recordCharge(orgId: string, units: bigint, note: string, generationId?: string): Promise<LedgerEntry> {
      return appendLedger(orgId, 'charge', units, note, generationId)
    },

    /**
     * The ledger entry of a request's charge and its storage key, not written: the settlement writes it in the same
     * atomic step as the charge (HoldOps.settle's `record`), so that it exists exactly when the charge was made.
     */
    chargeEntry(orgId: string, units: bigint, note: string, generationId: string): { key: string; entry: LedgerEntry } {
      const { name, entry } = ledgerEntry(orgId, 'charge', units, note, generationId)
      return { key: kv.key('ledger', orgId, name), entry }
    },

    /** An org's ledger entries, oldest first (every one without options; a page with them: PageOptions). */
    async ledger(orgId: string, options: PageOptions = {}): Promise<LedgerEntry[]> {
      const keys = await kv.list('ledger', orgId)
      const page = pageOfKeys(keys, options, { afterKey: options.after === undefined ? undefined : keyOfItem(keys, options.after) })
      const entries = await Promise.all(page.map((k) => kv.get<LedgerEntry>('ledger', orgId, k)))
      return entries.filter((e): e is LedgerEntry => e !== null)
    },
  }
  return store
}

/** The credits store's operations. */
export type CreditsStore = ReturnType<typeof createCreditsStore>
