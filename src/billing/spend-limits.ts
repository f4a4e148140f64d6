import type { GatewayContext } from '../context'
import { sha256Hex } from '../crypto/keys'
import { GatewayError, invalidRequest } from '../errors'
import type { Principal, SpendLimits, User } from '../stores/account-types'
import type { Budget, CounterCharge } from '../stores/engine-types'
import type { SpendPeriod, SpendSubject } from '../stores/spend-counters'
import { LIMIT_RESETS, resetWindow } from './key-usage'
import { fromUnits, toUnits } from './money'

// The limits of users and of the end users an org's keys name, checked in the same hold as the org's credits and the
// key's limit (docs/first-party.md#budgets-for-users-and-end-users).

/** The longest end-user id (OpenRouter's `user` field) taken; a longer one is a 400 (docs/first-party.md#end-users). */
export const MAX_END_USER_LENGTH = 256

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

/** Which limit a budget is: the credit limit, the requests per minute, or the requests at once. */
export type LimitKind = 'credit' | 'rate' | 'running'

/** One budget of a user's or an end user's limits, and what explains its refusal. */
export interface LimitBudget {
  budget: Budget
  who: 'user' | 'end_user'
  kind: LimitKind
  limits: SpendLimits
}

/** The UTC minute holding `now`. */
export const minuteWindow = (now: number): { start: number; end: number } => {
  const start = Math.floor(now / MINUTE_MS) * MINUTE_MS
  return { start, end: start + MINUTE_MS }
}

/** The subjects whose limits a principal's request counts against: its user, and its end user when the org limits end users. */
function subjectsOf(principal: Principal): { who: 'user' | 'end_user'; subject: SpendSubject; limits: SpendLimits }[] {
  const subjects: { who: 'user' | 'end_user'; subject: SpendSubject; limits: SpendLimits }[] = [
    { who: 'user', subject: { kind: 'user', id: principal.user.id }, limits: principal.user },
  ]
  const endUserLimits = principal.org.end_user_limits
  if (principal.endUser !== undefined && endUserLimits)
    subjects.push({ who: 'end_user', subject: endUserSubject(principal.org.id, principal.endUser), limits: endUserLimits })
  return subjects
}

/** The subject of an org's end user: its id hashed, so storage keys stay short and hold no caller-chosen text. */
export const endUserSubject = (orgId: string, endUser: string): SpendSubject => ({ kind: 'end-user', orgId, hash: sha256Hex(endUser).slice(0, 32) })

/** The period a credit limit counts: its reset's window, or all time. */
const periodOf = (limits: SpendLimits): SpendPeriod => limits.limit_reset ?? 'total'

/**
 * The budgets of a principal's user and end user at `now`: the credit limit (what the period spent), the requests per
 * minute (those the UTC minute counted, plus those running; one unit each) and the requests at once (one unit each).
 */
export function limitBudgets(ctx: GatewayContext, principal: Principal, now: number): LimitBudget[] {
  const budgets: LimitBudget[] = []
  for (const { who, subject, limits } of subjectsOf(principal)) {
    if (limits.credit_limit !== null && limits.credit_limit !== undefined) {
      const reset = limits.limit_reset
      const budget = ctx.spendCounters.creditBudget(subject, periodOf(limits), toUnits(limits.credit_limit), reset ? resetWindow(reset, now).start : undefined)
      budgets.push({ budget, who, kind: 'credit', limits })
    }
    if (limits.requests_per_minute)
      budgets.push({ budget: ctx.spendCounters.rateBudget(subject, limits.requests_per_minute, minuteWindow(now).start), who, kind: 'rate', limits })
    if (limits.max_in_flight) budgets.push({ budget: ctx.spendCounters.runningBudget(subject, limits.max_in_flight), who, kind: 'running', limits })
  }
  return budgets
}

/**
 * The counters a settled request adds to at `now` for its user and end user: the user's spending (in all and in the
 * day, week and month holding `now`, for GET /me), the end user's in the period its org's limit counts, and the request
 * in the UTC minute of each that has a rate (only a request a provider served: `served`).
 */
export function limitCharges(ctx: GatewayContext, principal: Principal, usage: bigint, served: boolean, now: number): CounterCharge[] {
  const charges: CounterCharge[] = []
  for (const { who, subject, limits } of subjectsOf(principal)) {
    if (usage > 0n) {
      const periods: SpendPeriod[] = who === 'user' ? ['total', ...LIMIT_RESETS] : limits.credit_limit != null ? [periodOf(limits)] : []
      for (const period of periods) {
        if (period === 'total') charges.push(ctx.spendCounters.usageCharge(subject, period, usage))
        else {
          const window = resetWindow(period, now)
          charges.push(ctx.spendCounters.usageCharge(subject, period, usage, { start: window.start, ttlMs: window.end - now + DAY_MS }))
        }
      }
    }
    if (served && limits.requests_per_minute) {
      const minute = minuteWindow(now)
      charges.push(ctx.spendCounters.requestCharge(subject, { start: minute.start, ttlMs: minute.end - now + MINUTE_MS }))
    }
  }
  return charges
}

/**
 * When an end user's windowed counter named `name` (`used-daily`, `used-weekly`, `used-monthly`, `requests-minute`)
 * whose window began at `windowStart` may be removed: as long after its window's end as storage that expires records
 * keeps it. Undefined for the counter of all time (`used`: kept) or a name or start it does not know.
 */
export function endUserCounterExpiry(name: string, windowStart: unknown): number | undefined {
  if (typeof windowStart !== 'number' || !Number.isFinite(windowStart)) return undefined
  if (name === 'requests-minute') return minuteWindow(windowStart).end + MINUTE_MS
  const reset = LIMIT_RESETS.find((r) => name === `used-${r}`)
  return reset ? resetWindow(reset, windowStart).end + DAY_MS : undefined
}

/** A user's or end user's spending as GET /me reports it: in all, per window, and what its credit limit has left. */
export interface SubjectUsage {
  usage: bigint
  usage_daily: bigint
  usage_weekly: bigint
  usage_monthly: bigint
  /** What the credit limit has left in its current window (spent only, not held; never below 0); null: no limit. */
  limit_remaining: bigint | null
  /** The requests the current UTC minute counted. */
  requests_this_minute: bigint
  /** The requests running now, when the user has a cap on them (else null: they are not counted). */
  in_flight: bigint | null
}

/** Reads a user's spending at `now` (docs/first-party.md#budgets-for-users-and-end-users). */
export async function userUsage(ctx: GatewayContext, user: User, now: number): Promise<SubjectUsage> {
  const subject: SpendSubject = { kind: 'user', id: user.id }
  const running = user.max_in_flight ? ctx.spendCounters.runningBudget(subject, user.max_in_flight) : null
  const [[usage, daily, weekly, monthly, requests], inFlight] = await Promise.all([
    Promise.all([
      ctx.spendCounters.readUsage(subject, 'total'),
      ...LIMIT_RESETS.map((reset) => ctx.spendCounters.readUsage(subject, reset, resetWindow(reset, now).start)),
      ctx.spendCounters.readRequests(subject, minuteWindow(now).start),
    ]),
    running ? ctx.holds.held(running, now) : null,
  ])
  const { credit_limit, limit_reset } = user
  let remaining: bigint | null = null
  if (credit_limit !== null && credit_limit !== undefined) {
    const spent = limit_reset ? [daily, weekly, monthly][LIMIT_RESETS.indexOf(limit_reset)] : usage
    const left = toUnits(credit_limit) - spent
    remaining = left > 0n ? left : 0n
  }
  return {
    usage,
    usage_daily: daily,
    usage_weekly: weekly,
    usage_monthly: monthly,
    limit_remaining: remaining,
    requests_this_minute: requests,
    in_flight: inFlight,
  }
}

const whose = (who: 'user' | 'end_user') => (who === 'user' ? 'This user' : 'This end user')

/**
 * The refusal of a limit that cannot take a request (docs/first-party.md#budgets-for-users-and-end-users): 402 for a
 * credit limit (what is left, and when the limit starts over), 429 with Retry-After for the requests per minute (the
 * next minute) and the requests at once (a second).
 */
export function limitRefusal(limit: LimitBudget, available: bigint, required: bigint, now: number): GatewayError {
  const { who, kind, limits } = limit
  const left = available > 0n ? available : 0n
  if (kind === 'credit') {
    const resetsAt = limits.limit_reset ? new Date(resetWindow(limits.limit_reset, now).end).toISOString() : undefined
    return new GatewayError(
      402,
      `${whose(who)}'s credit limit cannot cover this request: it may cost up to ${fromUnits(required)} EUR, and ${fromUnits(left)} EUR of the limit is left${resetsAt ? ` (its ${limits.limit_reset} limit starts over at ${resetsAt})` : ''}.`,
      {
        metadata: {
          limit: who,
          required: fromUnits(required),
          available: fromUnits(available),
          credit_limit: limits.credit_limit,
          ...(resetsAt ? { limit_reset: limits.limit_reset, limit_resets_at: resetsAt } : {}),
        },
      },
    )
  }
  if (kind === 'rate') {
    const end = minuteWindow(now).end
    const retryAfter = Math.max(1, Math.ceil((end - now) / 1000))
    return new GatewayError(429, `${whose(who)}'s rate limit of ${limits.requests_per_minute} requests per minute is reached: try again in ${retryAfter} s.`, {
      metadata: { limit: who, requests_per_minute: limits.requests_per_minute, resets_at: new Date(end).toISOString() },
      headers: { 'retry-after': String(retryAfter) },
    })
  }
  return new GatewayError(429, `${whose(who)} already has ${limits.max_in_flight} requests running, the most it may have at once: try again when one ends.`, {
    metadata: { limit: who, max_in_flight: limits.max_in_flight },
    headers: { 'retry-after': '1' },
  })
}

/**
 * The principal acting for the end user a request names (OpenRouter's `user` field; Messages' `metadata.user_id`):
 * unchanged when it names none (absent, null or empty), 400 naming `param` when it is longer than 256 characters
 * (docs/first-party.md#end-users).
 */
export function withEndUser(principal: Principal, endUser: string | null | undefined, param: string): Principal {
  if (endUser === undefined || endUser === null || endUser === '') return principal
  if (endUser.length > MAX_END_USER_LENGTH) throw invalidRequest(`${param}: must be at most ${MAX_END_USER_LENGTH} characters`, param)
  return { ...principal, endUser }
}
