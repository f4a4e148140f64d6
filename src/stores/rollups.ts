import { createHash } from 'node:crypto'
import { toUnits } from '../billing/money'
import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'
import type { UsageRecord } from './usage'

/**
 * Usage rollups (docs/usage.md): per org and UTC day, one set of counters per (model, provider, API key), added to as
 * each request is billed, so that GET /activity never reads usage records. Kept as long as usage records
 * (`retention.usageDays`), then removed by the sweep (docs/retention.md).
 *
 * Storage: `rollups:<org>:<YYYY-MM-DD>:index` lists the day's entries (at most MAX_KEYED_ENTRIES_PER_DAY with an API
 * key; past that, a request counts in its model and provider's entry without a key, so totals stay exact), and
 * `rollups:<org>:<YYYY-MM-DD>:<entry>:<field>` holds one exact counter per field. Every counter is an atomic decimal
 * counter of the atomic layer (what credits use): money in units of 10^-12 EUR, counts as whole numbers; each addition
 * is exact on any number of instances sharing the storage.
 */
export const ROLLUP_PREFIX = 'rollups'

/** At most this many (model, provider, key) entries a day per org; further keys are counted without their key. */
export const MAX_KEYED_ENTRIES_PER_DAY = 1000

/** What one entry of a day's rollups counts: who (model, provider, key) and the names shown for them. */
export interface RollupEntry {
  id: string
  model: string
  model_permaslug: string
  provider: string
  provider_name: string
  /** The API key's hash; null for requests counted without their key (the day's index was full). */
  key_hash: string | null
  user_id: string | null
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

const entryIdOf = (entry: Omit<RollupEntry, 'id'>) =>
  createHash('sha256')
    .update(`${entry.model}\n${entry.provider}\n${entry.key_hash ?? ''}`)
    .digest('hex')
    .slice(0, 16)

/** The rollups store over the gateway's records and atomic layer. */
export function createRollupStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  const indexKey = (orgId: string, day: string) => kv.key(ROLLUP_PREFIX, orgId, day, 'index')
  const counterKey = (orgId: string, day: string, entryId: string, field: Field) => kv.key(ROLLUP_PREFIX, orgId, day, entryId, field)
  // Which entry counts a (day, model, provider, key): remembered once it is in the index, to spare a read per request.
  const known = new Map<string, RollupEntry>()
  const remember = (key: string, entry: RollupEntry) => {
    known.set(key, entry)
    if (known.size > KNOWN_ENTRIES) known.delete(known.keys().next().value!)
  }

  // The entry that counts this request: its own, added to the day's index when new; when the index is full of keys,
  // the model and provider's entry without a key.
  async function entryFor(orgId: string, day: string, wanted: Omit<RollupEntry, 'id'>): Promise<RollupEntry> {
    const entry: RollupEntry = Object.assign({}, wanted, { id: entryIdOf(wanted) })
    const cacheKey = `${orgId}:${day}:${entry.id}`
    const cached = known.get(cacheKey)
    if (cached) return cached
    const key = indexKey(orgId, day)
    const current = await atomic.read<DayIndex>(key)
    let listed = current?.entries.some((e) => e.id === entry.id) ?? false
    if (!listed) {
      const next = await atomic.update<DayIndex>(key, (index) => {
        const entries = index?.entries ?? []
        if (entries.some((e) => e.id === entry.id)) return undefined
        if (entry.key_hash !== null && entries.filter((e) => e.key_hash !== null).length >= MAX_KEYED_ENTRIES_PER_DAY) return undefined
        return { entries: [...entries, entry] }
      })
      listed = next?.entries.some((e) => e.id === entry.id) ?? false
    }
    const counting = listed ? entry : await entryFor(orgId, day, Object.assign({}, wanted, { key_hash: null, user_id: null }))
    remember(cacheKey, counting)
    return counting
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
      const day = record.created_at.slice(0, 10)
      const entry = await entryFor(record.org_id, day, {
        model: record.model,
        model_permaslug: names.model_permaslug,
        provider: record.provider,
        provider_name: names.provider_name,
        key_hash: record.key_hash,
        user_id: record.user_id,
      })
      const deltas: Record<Field, bigint> = {
        requests: 1n,
        prompt_tokens: BigInt(record.prompt_tokens),
        completion_tokens: BigInt(record.completion_tokens),
        reasoning_tokens: BigInt(record.reasoning_tokens),
        usage: toUnits(record.cost_eur),
        byok_usage_inference: record.is_byok && record.upstream_cost_eur ? toUnits(record.upstream_cost_eur) : 0n,
      }
      await atomic.addUnitsMany(
        FIELDS.filter((field) => deltas[field] !== 0n).map((field) => ({ key: counterKey(record.org_id, day, entry.id, field), delta: deltas[field] })),
      )
    },

    /** One day's entries of an org with their totals (entries that counted nothing yet are left out). */
    async day(orgId: string, day: string, filter: { keyHash?: string; userId?: string } = {}): Promise<{ entry: RollupEntry; totals: RollupTotals }[]> {
      const index = await atomic.read<DayIndex>(indexKey(orgId, day))
      const entries = (index?.entries ?? []).filter(
        (e) => (filter.keyHash === undefined || e.key_hash === filter.keyHash) && (filter.userId === undefined || e.user_id === filter.userId),
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
