import type { RollupEntry, RollupFilter, RollupStore, RollupTotals } from './rollups'

/**
 * How activity rows are split beyond day, model and provider (docs/usage.md#get-apiv1activity): per API key, per user,
 * per end user, or not at all.
 */
export type ActivityGrouping = 'api_key' | 'user' | 'end_user'

/** One row of activity: a day, model and provider (and the key, user or end user it is split by), with its totals. */
export interface ActivityRow {
  date: string
  model: string
  model_permaslug: string
  provider: string
  provider_name: string
  /** With the grouping `api_key`: the key's hash (null: requests counted without their key, docs/usage.md). */
  key_hash: string | null
  /** With the grouping `user`: the user (null: requests counted without their key). */
  user_id: string | null
  /** With the grouping `end_user`: the end user, `"(other)"` past the day's bound, null for requests without one. */
  end_user: string | null
  totals: RollupTotals
}

/** Days whose rollups are read at once. */
const DAYS_AT_ONCE = 4

const addTotals = (sum: RollupTotals, more: RollupTotals): RollupTotals => ({
  requests: sum.requests + more.requests,
  prompt_tokens: sum.prompt_tokens + more.prompt_tokens,
  completion_tokens: sum.completion_tokens + more.completion_tokens,
  reasoning_tokens: sum.reasoning_tokens + more.reasoning_tokens,
  usage: sum.usage + more.usage,
  byok_usage_inference: sum.byok_usage_inference + more.byok_usage_inference,
})

// The value an entry is split by under a grouping ('' for none: every entry of a model and provider together).
function splitOf(entry: RollupEntry, groupBy: ActivityGrouping | undefined): string | null {
  if (groupBy === 'api_key') return entry.key_hash
  if (groupBy === 'user') return entry.user_id
  if (groupBy === 'end_user') return entry.end_user ?? null
  return ''
}

/**
 * An org's activity over `days` (in that order) from the rollups: per day, the entries that pass `filter`, summed per
 * model and provider and, with `groupBy`, per key, user or end user; within a day by model, provider, then that value
 * (null first). Exact: every row is a sum of the rollups' exact counters.
 */
export async function readActivity(
  rollups: RollupStore,
  orgId: string,
  days: string[],
  filter: RollupFilter,
  groupBy?: ActivityGrouping,
): Promise<ActivityRow[]> {
  const read: Awaited<ReturnType<RollupStore['day']>>[] = []
  for (let i = 0; i < days.length; i += DAYS_AT_ONCE)
    read.push(...(await Promise.all(days.slice(i, i + DAYS_AT_ONCE).map((day) => rollups.day(orgId, day, filter)))))
  const rows: ActivityRow[] = []
  for (const [d, date] of days.entries()) {
    const groups = new Map<string, { entry: RollupEntry; split: string | null; totals: RollupTotals }>()
    for (const { entry, totals } of read[d]) {
      const split = splitOf(entry, groupBy)
      const group = `${entry.model}\n${entry.provider}\n${split === null ? 'n' : `s${split}`}`
      const row = groups.get(group)
      groups.set(group, row ? { entry: row.entry, split, totals: addTotals(row.totals, totals) } : { entry, split, totals })
    }
    const sorted = [...groups.values()].sort(
      (a, b) =>
        a.entry.model.localeCompare(b.entry.model) ||
        a.entry.provider.localeCompare(b.entry.provider) ||
        (a.split === null ? (b.split === null ? 0 : -1) : b.split === null ? 1 : a.split < b.split ? -1 : a.split > b.split ? 1 : 0),
    )
    for (const { entry, totals } of sorted) {
      rows.push({
        date,
        model: entry.model,
        model_permaslug: entry.model_permaslug,
        provider: entry.provider,
        provider_name: entry.provider_name,
        key_hash: entry.key_hash,
        user_id: entry.user_id,
        end_user: entry.end_user ?? null,
        totals,
      })
    }
  }
  return rows
}

const DAY_MS = 86_400_000

/** The epoch ms of a UTC day (YYYY-MM-DD) at midnight, or NaN when it is not a real day (2026-02-30 is not). */
export function dayStart(day: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return Number.NaN
  const time = Date.parse(`${day}T00:00:00Z`)
  return Number.isFinite(time) && new Date(time).toISOString().startsWith(day) ? time : Number.NaN
}

/** The UTC days from `from` to `to` (both real days, `from` not after `to`), newest first, as GET /activity lists them. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = []
  for (let time = dayStart(to); time >= dayStart(from); time -= DAY_MS) days.push(new Date(time).toISOString().slice(0, 10))
  return days
}
