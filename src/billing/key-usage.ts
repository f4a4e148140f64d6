import type { GatewayContext } from '../context'
import type { ApiKeyRecord, KeyAncestor, LimitReset } from '../stores/account-types'
import type { Budget, CounterCharge } from '../stores/engine-types'
import type { KeyCounter, KeyPeriod } from '../stores/key-counters'
import { toUnits } from './money'

/**
 * A key's spending, kept as requests are billed (docs/keys.md): what it was charged in credits (`usage`) and the
 * upstream cost of the requests a customer's own provider key served (`byok`), in all and in the current UTC day,
 * week (from Monday) and month. A key's counters also count the keys it minted. Their storage: src/stores/key-counters.ts.
 */
export type { KeyCounter, KeyPeriod }

/** The windows a key's usage is counted in, as OpenRouter reports them. */
export const LIMIT_RESETS: readonly LimitReset[] = ['daily', 'weekly', 'monthly']

const DAY_MS = 86_400_000
/** A windowed counter is kept this long past its window's end, for instances whose clocks lag. */
const WINDOW_GRACE_MS = DAY_MS

/** A limit reset's window: its first and its first-after-the-end epoch ms. */
export type ResetWindow = Readonly<{ start: number; end: number }>

// The three windows of the UTC day last asked for: a request asks for several, every request of a day the same ones.
let windowsDay = Number.NaN
let windowsOfDay: Readonly<Record<LimitReset, ResetWindow>> | undefined

/** The UTC window of a limit reset that holds `now`: the day, the week from Monday 00:00, or the month (shared: not to be changed). */
export function resetWindow(reset: LimitReset, now: number): ResetWindow {
  // A UTC day is 86,400,000 ms of epoch time (no leap seconds in it): its start by arithmetic, a Date only once a day.
  const ms = Math.floor(now)
  const day = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS)
  if (day !== windowsDay || !windowsOfDay) {
    const date = new Date(day)
    const week = day - ((date.getUTCDay() + 6) % 7) * DAY_MS
    windowsOfDay = Object.freeze({
      daily: Object.freeze({ start: day, end: day + DAY_MS }),
      weekly: Object.freeze({ start: week, end: week + 7 * DAY_MS }),
      monthly: Object.freeze({
        start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
        end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
      }),
    })
    windowsDay = day
  }
  return windowsOfDay[reset]
}

/** What bounds a key's spending: its credit limit, when it resets, and whether BYOK usage counts. */
export type KeyLimit = Pick<KeyAncestor, 'hash' | 'credit_limit' | 'limit_reset' | 'include_byok_in_limit'>

/**
 * The budget of a key's credit limit at `now` (docs/money.md, docs/keys.md), null when it has none: what it spent in
 * the current window when the limit resets (else in all), its BYOK usage too when the limit includes it.
 */
export function keyBudget(ctx: GatewayContext, key: KeyLimit, now: number): Budget | null {
  if (key.credit_limit === null || key.credit_limit === undefined) return null
  const period: KeyPeriod = key.limit_reset ?? 'total'
  return ctx.holds.keyBudget(key.hash, {
    period,
    ...(key.limit_reset ? { windowStart: resetWindow(key.limit_reset, now).start } : {}),
    includeByok: Boolean(key.include_byok_in_limit),
    units: toUnits(key.credit_limit, 'credit_limit'),
  })
}

/** What a key's credit limit has left at `now` (spent only, not held; never below 0); null when it has no limit. */
export async function limitLeft(ctx: GatewayContext, key: KeyLimit, now: number): Promise<bigint | null> {
  const budget = keyBudget(ctx, key, now)
  if (!budget) return null
  const left = (budget.limit as { units: bigint }).units - (await ctx.holds.spent(budget))
  return left > 0n ? left : 0n
}

/**
 * The counters a billed request adds to, for its key and every key above it: `usage` credits and `byok` upstream
 * cost, in all and in the windows holding `now` (each kept a day past its window's end where storage expires records).
 */
export function keyCharges(ctx: GatewayContext, keys: KeyLimit[], charge: { usage: bigint; byok: bigint }, now: number): CounterCharge[] {
  const windows = LIMIT_RESETS.map((reset) => ({ reset, window: resetWindow(reset, now) }))
  const charges: CounterCharge[] = []
  for (const key of keys) {
    for (const counter of ['usage', 'byok'] as const) {
      const units = charge[counter]
      if (!units) continue
      charges.push(ctx.keyCounters.charge(key.hash, counter, 'total', units))
      for (const { reset, window } of windows) {
        charges.push(ctx.keyCounters.charge(key.hash, counter, reset, units, { start: window.start, ttlMs: window.end - now + WINDOW_GRACE_MS }))
      }
    }
  }
  return charges
}

/** A key's spending as GET /key and the key management routes report it, in EUR ledger units. */
export interface KeyUsage {
  usage: bigint
  usage_daily: bigint
  usage_weekly: bigint
  usage_monthly: bigint
  byok_usage: bigint
  byok_usage_daily: bigint
  byok_usage_weekly: bigint
  byok_usage_monthly: bigint
  /** What its limit has left in the current window (its BYOK usage counted when the limit includes it); null: no limit. */
  limit_remaining: bigint | null
}

/** Reads a key's counters at `now`. */
export async function keyUsage(ctx: GatewayContext, key: ApiKeyRecord, now: number): Promise<KeyUsage> {
  const read = (counter: KeyCounter, period: KeyPeriod) =>
    ctx.keyCounters.read(key.hash, counter, period, period === 'total' ? undefined : resetWindow(period, now).start)
  const [usage, daily, weekly, monthly, byok, byokDaily, byokWeekly, byokMonthly] = await Promise.all(
    (['usage', 'byok'] as const).flatMap((counter) => (['total', ...LIMIT_RESETS] as const).map((period) => read(counter, period))),
  )
  const result = {
    usage,
    usage_daily: daily,
    usage_weekly: weekly,
    usage_monthly: monthly,
    byok_usage: byok,
    byok_usage_daily: byokDaily,
    byok_usage_weekly: byokWeekly,
    byok_usage_monthly: byokMonthly,
  }
  let limitRemaining: bigint | null = null
  if (key.credit_limit !== null) {
    const period = key.limit_reset ?? 'total'
    const index = period === 'total' ? 0 : LIMIT_RESETS.indexOf(period) + 1
    const spent = [usage, daily, weekly, monthly][index] + (key.include_byok_in_limit ? [byok, byokDaily, byokWeekly, byokMonthly][index] : 0n)
    const left = toUnits(key.credit_limit) - spent
    limitRemaining = left > 0n ? left : 0n
  }
  return { ...result, limit_remaining: limitRemaining }
}
