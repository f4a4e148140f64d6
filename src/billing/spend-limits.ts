import type { GatewayContext } from '../context'
import { sha256Hex } from '../crypto/keys'
import { GatewayError, invalidRequest } from '../errors'
import type { Principal, SpendLimits, SpendWindow, TrafficLimits, User } from '../stores/account-types'
import type { Budget, CounterCharge } from '../stores/engine-types'
import type { SpendPeriod, SpendSubject } from '../stores/spend-counters'
import { LIMIT_RESETS, resetWindow } from './key-usage'
import { fromUnits, toUnits } from './money'

// The limits of users and of the end users an org's keys name, checked in the same hold as the org's credits and the
// key's limit (docs/first-party.md#budgets-for-users-and-end-users), and the tokens, spend and requests limits of
// keys, users and orgs (docs/limits.md#tokens-spend-and-requests-in-flight).

/** The longest end-user id (OpenRouter's `user` field) taken; a longer one is a 400 (docs/first-party.md#end-users). */
export const MAX_END_USER_LENGTH = 256

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
const WINDOW_MS: Record<SpendWindow, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS }

/**
 * Which limit a budget is: the credit limit, the requests per minute, the requests at once, the tokens per minute or
 * per day, or the spend per window.
 */
export type LimitKind = 'credit' | 'rate' | 'running' | 'tokens_per_minute' | 'tokens_per_day' | 'spend'

/** Whose limit a budget is: the request's user, its end user, its API key or its org. */
export type LimitSubject = 'user' | 'end_user' | 'key' | 'org'

/** One budget of a user's, an end user's, a key's or an org's limits, and what explains its refusal. */
export interface LimitBudget {
  budget: Budget
  who: LimitSubject
  kind: LimitKind
  limits: SpendLimits
}

/** The UTC window of `ms` milliseconds holding `now` (a minute, an hour, a day). */
const windowOf = (ms: number, now: number): { start: number; end: number } => {
  const start = Math.floor(now / ms) * ms
  return { start, end: start + ms }
}

/** The UTC minute holding `now`. */
export const minuteWindow = (now: number): { start: number; end: number } => windowOf(MINUTE_MS, now)

/** The UTC window of a spend limit holding `now`: its minute, hour or day. */
export const spendWindowOf = (window: SpendWindow, now: number): { start: number; end: number } => windowOf(WINDOW_MS[window], now)

/** The window a spend limit counts: its `spend_window`, a UTC day when it names none. */
export const spendWindowIn = (limits: TrafficLimits): SpendWindow => limits.spend_window ?? 'day'

/**
 * The subjects whose limits a principal's request counts against: its user, its end user when the org limits end
 * users, its API key (and the keys that minted it) and its org when they have tokens, spend or requests limits.
 */
function subjectsOf(principal: Principal): { who: LimitSubject; subject: SpendSubject; limits: SpendLimits }[] {
  const subjects: { who: LimitSubject; subject: SpendSubject; limits: SpendLimits }[] = [
    { who: 'user', subject: { kind: 'user', id: principal.user.id }, limits: principal.user },
  ]
  const endUserLimits = principal.org.end_user_limits
  if (principal.endUser !== undefined && endUserLimits)
    subjects.push({ who: 'end_user', subject: endUserSubject(principal.org.id, principal.endUser), limits: endUserLimits })
  // The key's own limits, and those of the keys that minted it: minting never escapes a key's limits.
  for (const key of [principal.key, ...(principal.key.ancestors ?? [])])
    if (key.traffic_limits) subjects.push({ who: 'key', subject: { kind: 'key', hash: key.hash }, limits: key.traffic_limits })
  const orgLimits = principal.org.traffic_limits
  if (orgLimits) subjects.push({ who: 'org', subject: { kind: 'org', id: principal.org.id }, limits: orgLimits })
  return subjects
}

/** The subject of an org's end user: its id hashed, so storage keys stay short and hold no caller-chosen text. */
export const endUserSubject = (orgId: string, endUser: string): SpendSubject => ({ kind: 'end-user', orgId, hash: sha256Hex(endUser).slice(0, 32) })

/** The period a credit limit counts: its reset's window, or all time. */
const periodOf = (limits: SpendLimits): SpendPeriod => limits.limit_reset ?? 'total'

/**
 * The budgets of a principal's user, end user, key and org at `now`: the credit limit (what the period spent), the
 * requests per minute (those the UTC minute counted, plus those running; one unit each), the requests at once (one
 * unit each), the tokens per minute and per day (those the window counted, plus the most the running requests may
 * use; this request holds `maxTokens`, at least 1) and the spend per window (what it spent, plus live holds).
 */
export function limitBudgets(ctx: GatewayContext, principal: Principal, now: number, maxTokens = 0): LimitBudget[] {
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
    const tokens = Math.max(1, Math.ceil(maxTokens))
    if (limits.tokens_per_minute) {
      const budget = ctx.spendCounters.tokensBudget(subject, 'minute', limits.tokens_per_minute, minuteWindow(now).start, tokens)
      budgets.push({ budget, who, kind: 'tokens_per_minute', limits })
    }
    if (limits.tokens_per_day) {
      const budget = ctx.spendCounters.tokensBudget(subject, 'day', limits.tokens_per_day, windowOf(DAY_MS, now).start, tokens)
      budgets.push({ budget, who, kind: 'tokens_per_day', limits })
    }
    if (limits.spend_limit) {
      const window = spendWindowIn(limits)
      const budget = ctx.spendCounters.spendBudget(subject, window, toUnits(limits.spend_limit), spendWindowOf(window, now).start)
      budgets.push({ budget, who, kind: 'spend', limits })
    }
  }
  return budgets
}

// The window of a counter ending `end`, kept a window longer than that where storage expires records.
const counted = (start: number, end: number, now: number, ms: number) => ({ start, ttlMs: end - now + ms })

/**
 * The counters a settled request adds to at `now` for its user, end user, key and org: the user's spending (in all and
 * in the day, week and month holding `now`, for GET /me), the end user's in the period its org's limit counts, the
 * request in the UTC minute of each that has a rate (only a request a provider served: `served`), its `tokens` (the
 * provider's count) in the minute and day of each that limits tokens, and its charge in the window of each spend limit.
 */
export function limitCharges(ctx: GatewayContext, principal: Principal, usage: bigint, served: boolean, now: number, tokens = 0): CounterCharge[] {
  const charges: CounterCharge[] = []
  for (const { who, subject, limits } of subjectsOf(principal)) {
    if (served && tokens > 0) {
      if (limits.tokens_per_minute) {
        const minute = minuteWindow(now)
        charges.push(ctx.spendCounters.tokensCharge(subject, 'minute', tokens, counted(minute.start, minute.end, now, MINUTE_MS)))
      }
      if (limits.tokens_per_day) {
        const day = windowOf(DAY_MS, now)
        charges.push(ctx.spendCounters.tokensCharge(subject, 'day', tokens, counted(day.start, day.end, now, DAY_MS)))
      }
    }
    if (usage > 0n && limits.spend_limit) {
      const window = spendWindowIn(limits)
      const { start, end } = spendWindowOf(window, now)
      charges.push(ctx.spendCounters.spendCharge(subject, window, usage, counted(start, end, now, WINDOW_MS[window])))
    }
    if (usage > 0n && (who === 'user' || who === 'end_user')) {
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
  if (name === 'requests-minute' || name === 'tokens-minute' || name === 'spent-minute') return minuteWindow(windowStart).end + MINUTE_MS
  if (name === 'spent-hour') return windowOf(HOUR_MS, windowStart).end + HOUR_MS
  if (name === 'tokens-day' || name === 'spent-day') return windowOf(DAY_MS, windowStart).end + DAY_MS
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

const WHOSE: Record<LimitSubject, string> = { user: 'This user', end_user: 'This end user', key: 'This API key', org: 'This organisation' }
const whose = (who: LimitSubject) => WHOSE[who]

// Seconds until `end`, at least 1: a Retry-After.
const secondsUntil = (end: number, now: number) => Math.max(1, Math.ceil((end - now) / 1000))

/**
 * The refusal of a limit that cannot take a request (docs/first-party.md#budgets-for-users-and-end-users,
 * docs/limits.md#tokens-spend-and-requests-in-flight): 402 for a credit limit (what is left, and when the limit starts
 * over), 429 with Retry-After and `resets_at` for the requests or tokens per minute, the tokens per day and the spend
 * per window (the window's end), and for the requests at once (a second). `metadata.limit` names whose limit (`user`,
 * `end_user`, `key`, `org`), `metadata.limit_type` which one.
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
          limit_type: 'credit_limit',
          required: fromUnits(required),
          available: fromUnits(available),
          credit_limit: limits.credit_limit,
          ...(resetsAt ? { limit_reset: limits.limit_reset, limit_resets_at: resetsAt } : {}),
        },
      },
    )
  }
  if (kind === 'running')
    return new GatewayError(429, `${whose(who)} already has ${limits.max_in_flight} requests running, the most it may have at once: try again when one ends.`, {
      metadata: { limit: who, limit_type: 'max_in_flight', max_in_flight: limits.max_in_flight },
      headers: { 'retry-after': '1' },
    })
  const end = kind === 'tokens_per_day' ? windowOf(DAY_MS, now).end : kind === 'spend' ? spendWindowOf(spendWindowIn(limits), now).end : minuteWindow(now).end
  const retryAfter = secondsUntil(end, now)
  const resets_at = new Date(end).toISOString()
  const headers = { 'retry-after': String(retryAfter) }
  if (kind === 'rate')
    return new GatewayError(429, `${whose(who)}'s rate limit of ${limits.requests_per_minute} requests per minute is reached: try again in ${retryAfter} s.`, {
      metadata: { limit: who, limit_type: 'requests_per_minute', requests_per_minute: limits.requests_per_minute, resets_at },
      headers,
    })
  if (kind === 'spend') {
    const window = spendWindowIn(limits)
    const never = required > toUnits(limits.spend_limit ?? '0')
    return new GatewayError(
      429,
      `${whose(who)}'s spend limit of ${limits.spend_limit} EUR per ${window} cannot cover this request: it may cost up to ${fromUnits(required)} EUR, and ${fromUnits(left)} EUR is left in this ${window}${never ? ': lower max_tokens' : `: try again in ${retryAfter} s`}.`,
      {
        metadata: {
          limit: who,
          limit_type: 'spend_limit',
          spend_limit: limits.spend_limit,
          spend_window: window,
          required: fromUnits(required),
          available: fromUnits(left),
          resets_at,
        },
        headers,
      },
    )
  }
  const per = kind === 'tokens_per_day' ? 'day' : 'minute'
  const ceiling = kind === 'tokens_per_day' ? limits.tokens_per_day : limits.tokens_per_minute
  const never = ceiling !== null && ceiling !== undefined && required > BigInt(ceiling)
  return new GatewayError(
    429,
    `${whose(who)}'s limit of ${ceiling} tokens per ${per} cannot take this request: it may use up to ${required} tokens (its prompt and its most completion tokens), and ${left} are left in this ${per}${never ? ': lower max_tokens' : `: try again in ${retryAfter} s`}.`,
    {
      metadata: { limit: who, limit_type: kind, [kind]: ceiling, requested_tokens: Number(required), available_tokens: Number(left), resets_at },
      headers,
    },
  )
}

/**
 * The principal acting for the end user a request names (OpenRouter's `user` field; Messages' `metadata.user_id`):
 * unchanged when it names none (absent, null or empty), 400 naming `param` when it is longer than 256 characters
 * (docs/first-party.md#end-users).
 */
export function withEndUser(principal: Principal, endUser: string | null | undefined, param: string): Principal {
  if (endUser === undefined || endUser === null || endUser === '') return principal
  if (endUser.length > MAX_END_USER_LENGTH) throw invalidRequest(`${param}: must be at most ${MAX_END_USER_LENGTH} characters`, param)
  return Object.assign({}, principal, { endUser })
}
