import { sha256Hex } from '../crypto/hash'
import { toUnits } from '../billing/money'
import type { AtomicOps, CounterCharge } from './engine-types'
import type { Kv } from './kv'
import type { UsageRecord } from './usage'

/**
 * Usage rollups (docs/usage.md): per org and UTC day, one set of counters per (model, provider, API key, end user),
 * added to as each request is billed, so that GET /activity never reads usage records. Each entry names the key's
 * user, so activity groups by user and by end user from the same counters. Kept as long as usage records
 * (`retention.usageDays`), then removed by the sweep (docs/retention.md).
 *
 * Storage: `rollups:<org>:<YYYY-MM-DD>:index` lists the day's entries, and `rollups:<org>:<YYYY-MM-DD>:<entry>:<field>`
 * holds one exact counter per field. Every counter is an atomic decimal counter of the atomic layer (what credits
 * use): money in units of 10^-12 EUR, counts as whole numbers; each addition is exact on any number of instances
 * sharing the storage. The index is bounded, decided in its atomic update (hasRoomFor;
 * docs/usage.md#rollups-activity-without-reading-usage-records): a request that finds no room for its entry counts
 * under its key's OTHER_END_USERS entry, else in its model and provider's entry with neither key, user nor end user,
 * so totals stay exact.
 */
export const ROLLUP_PREFIX = 'rollups'

/** At most this many entries with a key and an end user, and as many with a key and none, a day per org (hasRoomFor). */
export const MAX_KEYED_ENTRIES_PER_DAY = 1000

/** Distinct end users per org and day with entries of their own, unless the gateway's `activity.endUsersPerDay` says otherwise. */
export const DEFAULT_END_USERS_PER_DAY = 1000

/** The end user under which the day's further end users are counted, once `endUsersPerDay` have entries (docs/usage.md). */
export const OTHER_END_USERS = '(other)'

/** What one entry of a day's rollups counts: who (model, provider, key, end user) and the names shown for them. */
export interface RollupEntry {
  id: string
  model: string
  model_permaslug: string
  provider: string
  provider_name: string
  /** The API key's hash; null for requests counted without their key (the day's index was full). */
  key_hash: string | null
  user_id: string | null
  /**
   * The end user the requests were made for (the usage records' `end_user`); OTHER_END_USERS for the day's end users past
   * the bound; null without one (and in entries written before end users were kept, which lack the field).
   */
  end_user?: string | null
}

/** The totals of one entry. Money in ledger units (10^-12 EUR). */
export interface RollupTotals {
  requests: number
  prompt_tokens: number
  completion_tokens: number
  reasoning_tokens: number
  /** Credits charged (`cost_eur` of the usage records; for BYOK the platform fee). */
  usage: bigint
  /** BYOK: the estimated upstream cost the customer's own provider charges (`upstream_cost_eur`). */
  byok_usage_inference: bigint
}

/** Which entries of a day to read: those of one key, of one user, of one end user (null: requests without one). */
export interface RollupFilter {
  keyHash?: string
  userId?: string
  endUser?: string | null
}

interface DayIndex {
  entries: RollupEntry[]
}

const FIELDS = ['requests', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'usage', 'byok_usage_inference'] as const
type Field = (typeof FIELDS)[number]

/** Entries known to be in their day's index, remembered to spare a read per request (bounded). */
const KNOWN_ENTRIES = 10_000
/** Entries whose counters are read at once. */
const READ_BATCH = 16

/** The UTC day (YYYY-MM-DD) of an epoch-ms time. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** The day of a rollup key relative to the prefix (`<org>:<YYYY-MM-DD>:…`), or undefined. */
export function rollupDayOfKey(key: string): string | undefined {
  const day = key.split(':')[1]
  return day && /^\d{4}-\d{2}-\d{2}$/.test(day) ? day : undefined
}

// An entry without an end user keeps the id it had before end users were kept: a day's counters stay in one entry.
const entryTextOf = (entry: Omit<RollupEntry, 'id'>) =>
  `${entry.model}\n${entry.provider}\n${entry.key_hash ?? ''}${entry.end_user == null ? '' : `\n${entry.end_user}`}`
const entryIdOf = (entry: Omit<RollupEntry, 'id'>) => sha256Hex(entryTextOf(entry)).slice(0, 16)

/** True when the entry names an end user of its own (not OTHER_END_USERS, not none). */
const namesEndUser = (entry: Pick<RollupEntry, 'end_user'>) => entry.end_user != null && entry.end_user !== OTHER_END_USERS

/**
 * Whether a day's index (its entries) has room for a new entry. Entries with a key are bounded in two kinds, so that
 * callers' end users never crowd out the keys' own entries: at most `maxKeyedEntries` naming an end user, whose end
 * user is already listed or among the first `endUsersPerDay`; and at most `maxKeyedEntries` others (a key's requests
 * without an end user, or under OTHER_END_USERS). Entries without a key (one per model and provider) always fit.
 */
function hasRoomFor(entries: RollupEntry[], entry: RollupEntry, bounds: { endUsersPerDay: number; maxKeyedEntries: number }): boolean {
  if (entry.key_hash === null) return true
  if (!namesEndUser(entry)) return entries.filter((e) => e.key_hash !== null && !namesEndUser(e)).length < bounds.maxKeyedEntries
  const named = entries.filter(namesEndUser)
  if (named.length >= bounds.maxKeyedEntries) return false
  return named.some((e) => e.end_user === entry.end_user) || new Set(named.map((e) => e.end_user)).size < bounds.endUsersPerDay
}

/** What a rollup entry that could not be listed counts under instead: its key's OTHER_END_USERS entry, then none. */
function fallbackOf(wanted: Omit<RollupEntry, 'id'>): Omit<RollupEntry, 'id'> {
  if (namesEndUser(wanted)) return Object.assign({}, wanted, { end_user: OTHER_END_USERS })
  return Object.assign({}, wanted, { key_hash: null, user_id: null, end_user: null })
}

/**
 * The rollups store over the gateway's records and atomic layer; `endUsersPerDay` bounds the end users with entries of
 * their own per org and day (DEFAULT_END_USERS_PER_DAY), `maxKeyedEntries` the entries with a key
 * (MAX_KEYED_ENTRIES_PER_DAY; smaller in tests).
 */
export function createRollupStore(input: { kv: Kv; atomic: AtomicOps; endUsersPerDay?: number; maxKeyedEntries?: number }) {
  const { kv, atomic } = input
  const bounds = { endUsersPerDay: input.endUsersPerDay ?? DEFAULT_END_USERS_PER_DAY, maxKeyedEntries: input.maxKeyedEntries ?? MAX_KEYED_ENTRIES_PER_DAY }
  const indexKey = (orgId: string, day: string) => kv.key(ROLLUP_PREFIX, orgId, day, 'index')
  const counterKey = (orgId: string, day: string, entryId: string, field: Field) => kv.key(ROLLUP_PREFIX, orgId, day, entryId, field)
  // Which entry counts a (day, model, provider, key, end user): remembered once it is in the index, to spare a read per request.
  const known = new Map<string, RollupEntry>()
  const remember = (key: string, entry: RollupEntry) => {
    known.set(key, entry)
    if (known.size > KNOWN_ENTRIES) known.delete(known.keys().next().value!)
  }

  // An entry's counter keys, in FIELDS' order: built once per entry (an entry object belongs to one org and day).
  const fieldKeys = new WeakMap<RollupEntry, string[]>()
  const fieldKeysOf = (orgId: string, day: string, entry: RollupEntry): string[] => {
    let keys = fieldKeys.get(entry)
    if (!keys) fieldKeys.set(entry, (keys = FIELDS.map((field) => counterKey(orgId, day, entry.id, field))))
    return keys
  }

  // The entry that counts this request: its own, added to the day's index when new; when the index has no room for
  // it, its fallback's (fallbackOf): the key's OTHER_END_USERS entry, else the model and provider's entry without a key.
  // A known entry at once (no promise), else read and listed.
  function entryFor(orgId: string, day: string, wanted: Omit<RollupEntry, 'id'>): RollupEntry | Promise<RollupEntry> {
    // Remembered by what names the entry (its id is a hash of it), so that a known entry costs no hash.
    const cacheKey = `${orgId}:${day}:${entryTextOf(wanted)}`
    return known.get(cacheKey) ?? listedEntry(orgId, day, wanted, cacheKey)
  }
  async function listedEntry(orgId: string, day: string, wanted: Omit<RollupEntry, 'id'>, cacheKey: string): Promise<RollupEntry> {
    const entry: RollupEntry = Object.assign({}, wanted, { id: entryIdOf(wanted) })
    const key = indexKey(orgId, day)
    const current = await atomic.read<DayIndex>(key)
    let listed = current?.entries.some((e) => e.id === entry.id) ?? false
    if (!listed) {
      const next = await atomic.update<DayIndex>(key, (index) => {
        const entries = index?.entries ?? []
        if (entries.some((e) => e.id === entry.id) || !hasRoomFor(entries, entry, bounds)) return undefined
        return { entries: [...entries, entry] }
      })
      listed = next?.entries.some((e) => e.id === entry.id) ?? false
    }
    const counting = listed ? entry : await entryFor(orgId, day, fallbackOf(wanted))
    remember(cacheKey, counting)
    return counting
  }

  /**
   * What `add` adds, as counters for a settlement to add in its own step (the usage record and its rollups then count
   * together or not at all): the entry is found (or listed) first. At once (no promise) when its entry is known.
   */
  function countersOf(record: UsageRecord, names: { model_permaslug: string; provider_name: string }): CounterCharge[] | Promise<CounterCharge[]> {
    const day = record.created_at.slice(0, 10)
    const entry = entryFor(record.org_id, day, {
      model: record.model,
      model_permaslug: names.model_permaslug,
      provider: record.provider,
      provider_name: names.provider_name,
      key_hash: record.key_hash,
      user_id: record.user_id,
      end_user: record.end_user ?? null,
    })
    return entry instanceof Promise ? entry.then((listed) => countersIn(record, day, listed)) : countersIn(record, day, entry)
  }
  function countersIn(record: UsageRecord, day: string, entry: RollupEntry): CounterCharge[] {
    const deltas: Record<Field, bigint> = {
      requests: 1n,
      prompt_tokens: BigInt(record.prompt_tokens),
      completion_tokens: BigInt(record.completion_tokens),
      reasoning_tokens: BigInt(record.reasoning_tokens),
      usage: toUnits(record.cost_eur),
      byok_usage_inference: record.is_byok && record.upstream_cost_eur ? toUnits(record.upstream_cost_eur) : 0n,
    }
    const keys = fieldKeysOf(record.org_id, day, entry)
    const counters: CounterCharge[] = []
    for (let i = 0; i < FIELDS.length; i++) if (deltas[FIELDS[i]] !== 0n) counters.push({ key: keys[i], units: deltas[FIELDS[i]] })
    return counters
  }

  async function totalsOf(orgId: string, day: string, entry: RollupEntry): Promise<RollupTotals> {
    const [requests, prompt, completion, reasoning, usage, byok] = await Promise.all(
      FIELDS.map((field) => atomic.getUnits(counterKey(orgId, day, entry.id, field))),
    )
    return {
      requests: Number(requests),
      prompt_tokens: Number(prompt),
      completion_tokens: Number(completion),
      reasoning_tokens: Number(reasoning),
      usage,
      byok_usage_inference: byok,
    }
  }

  return {
    /**
     * Adds a billed request to its day's rollups (the UTC day of `created_at`). `names` are what the rollup shows for
     * the model and provider. Additions that are 0 are skipped (an absent counter reads 0).
     */
    async add(record: UsageRecord, names: { model_permaslug: string; provider_name: string }): Promise<void> {
      const counters = await countersOf(record, names)
      await atomic.addUnitsMany(counters.map((c) => ({ key: c.key, delta: c.units })))
    },

    /** What `add` adds, as counters for a settlement to add in its own step (docs/usage.md). */
    counters: countersOf,

    /** One day's entries of an org with their totals (entries that counted nothing yet are left out), filtered as asked. */
    async day(orgId: string, day: string, filter: RollupFilter = {}): Promise<{ entry: RollupEntry; totals: RollupTotals }[]> {
      const index = await atomic.read<DayIndex>(indexKey(orgId, day))
      const entries = (index?.entries ?? []).filter(
        (e) =>
          (filter.keyHash === undefined || e.key_hash === filter.keyHash) &&
          (filter.userId === undefined || e.user_id === filter.userId) &&
          (filter.endUser === undefined || (e.end_user ?? null) === filter.endUser),
      )
      const rows: { entry: RollupEntry; totals: RollupTotals }[] = []
      for (let i = 0; i < entries.length; i += READ_BATCH) {
        const batch = entries.slice(i, i + READ_BATCH)
        const totals = await Promise.all(batch.map((entry) => totalsOf(orgId, day, entry)))
        batch.forEach((entry, j) => {
          if (totals[j].requests > 0) rows.push({ entry, totals: totals[j] })
        })
      }
      return rows
    },
  }
}

/** The rollups store's operations. */
export type RollupStore = ReturnType<typeof createRollupStore>
