import { invalidRequest } from '../errors'
import type { LimitReset, SpendLimits, SpendWindow, TrafficLimits } from '../stores/account-types'
import { fromUnits, toUnits } from './money'

// What the admin API, the CLI and PATCH /users/{id} take to set a user's or an org's end users' limits
// (docs/first-party.md#budgets-for-users-and-end-users), and what POST /keys, PATCH /keys/{hash}, the admin API and
// the CLI take to set a key's or an org's tokens, spend and requests limits (docs/limits.md#tokens-spend-and-requests-in-flight).

/** The fields of a tokens, spend and requests limits change (keys, orgs; users' too). */
export const TRAFFIC_FIELDS = ['tokens_per_minute', 'tokens_per_day', 'spend_limit', 'spend_window', 'requests_per_minute', 'max_in_flight'] as const

/** The fields of a limits change: each absent (left as it is), null (no such limit) or a new value. */
export const LIMIT_FIELDS = ['credit_limit', 'limit_reset', ...TRAFFIC_FIELDS] as const

/** The most requests per minute or at once a limit may name. */
const MAX_COUNT = 1_000_000
/** The most tokens per minute or per day a limit may name. */
export const MAX_TOKENS_LIMIT = 10_000_000_000
/** The most EUR a spend limit may name. */
const MAX_SPEND = 1_000_000_000n
const RESETS: readonly unknown[] = ['daily', 'weekly', 'monthly']
const WINDOWS: readonly unknown[] = ['minute', 'hour', 'day']

// A whole count from 1 to `max` (a number, or a string of digits from the CLI), or null.
function countOf(value: unknown, param: string, max = MAX_COUNT): number | null {
  if (value === null) return null
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > max)
    throw invalidRequest(`${param}: must be a whole number from 1 to ${max}, or null for no limit`, param)
  return n
}

// An amount of EUR greater than 0 (at most MAX_SPEND), written canonically, or null.
function amountOf(value: unknown, param: string): string | null {
  if (value === null) return null
  if (typeof value !== 'string' && typeof value !== 'number') throw invalidRequest(`${param}: must be a decimal string or number, or null for no limit`, param)
  const units = toUnits(value, param)
  if (units <= 0n) throw invalidRequest(`${param}: must be greater than 0 (null for no limit)`, param)
  if (units > toUnits(MAX_SPEND)) throw invalidRequest(`${param}: must be at most ${MAX_SPEND} EUR`, param)
  return fromUnits(units)
}

// One field of a limits change, checked (`field` is one of LIMIT_FIELDS).
function fieldOf(field: string, value: unknown): unknown {
  switch (field) {
    case 'credit_limit':
    case 'spend_limit':
      return amountOf(value, field)
    case 'limit_reset':
      if (value !== null && !RESETS.includes(value)) throw invalidRequest('limit_reset: must be "daily", "weekly", "monthly" or null', field)
      return value as LimitReset | null
    case 'spend_window':
      if (value !== null && !WINDOWS.includes(value)) throw invalidRequest('spend_window: must be "minute", "hour", "day" or null', field)
      return value as SpendWindow | null
    case 'tokens_per_minute':
    case 'tokens_per_day':
      return countOf(value, field, MAX_TOKENS_LIMIT)
    default:
      return countOf(value, field)
  }
}

// A change of the `fields` of a limits object, checked; anything else is a 400 naming it.
function patchOf(input: unknown, fields: readonly string[]): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalidRequest('limits: must be an object')
  const patch: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined) continue
    if (!fields.includes(field)) throw invalidRequest(`${field}: unknown limit (one of ${fields.join(', ')})`, field)
    patch[field] = fieldOf(field, value)
  }
  return patch
}

/**
 * A change of a key's or an org's tokens, spend and requests limits, checked: `tokens_per_minute` and `tokens_per_day`
 * whole numbers from 1 to 10^10, `spend_limit` a positive exact decimal in EUR, `spend_window` "minute", "hour" or
 * "day", `requests_per_minute` and `max_in_flight` from 1 to 1,000,000; each null to remove it; else a 400 naming it.
 */
export const trafficPatchOf = (input: unknown): TrafficLimits => patchOf(input, TRAFFIC_FIELDS) as TrafficLimits

/** The tokens, spend and requests fields of `input` (a key route's body), as a change: absent ones left out. */
export function trafficFieldsOf(input: Record<string, unknown>): TrafficLimits {
  const picked: Record<string, unknown> = {}
  for (const field of TRAFFIC_FIELDS) if (input[field] !== undefined) picked[field] = input[field]
  return trafficPatchOf(picked)
}

/** `current` tokens, spend and requests limits with `patch` applied (null removes a field); a spend limit without a window counts a day. */
export function applyTraffic(current: TrafficLimits | undefined, patch: TrafficLimits): TrafficLimits {
  const next: Record<string, unknown> = {}
  for (const field of TRAFFIC_FIELDS) {
    const value = field in patch ? patch[field] : current?.[field]
    if (value !== null && value !== undefined) next[field] = value
  }
  if (next.spend_limit === undefined) delete next.spend_window
  else next.spend_window ??= 'day'
  return next as TrafficLimits
}

/** The tokens, spend and requests limits of a key or an org, each null when not set: what the key routes and the admin API show. */
export function trafficLimitsOf(record: TrafficLimits | undefined): Required<TrafficLimits> {
  return {
    tokens_per_minute: record?.tokens_per_minute ?? null,
    tokens_per_day: record?.tokens_per_day ?? null,
    spend_limit: record?.spend_limit ?? null,
    spend_window: record?.spend_window ?? null,
    requests_per_minute: record?.requests_per_minute ?? null,
    max_in_flight: record?.max_in_flight ?? null,
  }
}

/**
 * A limits change, checked: `credit_limit` a positive exact decimal in EUR (written canonically) or null,
 * `limit_reset` "daily", "weekly", "monthly" or null, `requests_per_minute` and `max_in_flight` whole numbers of at
 * least 1 or null, and the tokens and spend fields of trafficPatchOf; anything else (another field, another value) is
 * a 400 naming it.
 */
export const limitsPatchOf = (input: unknown): SpendLimits => patchOf(input, LIMIT_FIELDS) as SpendLimits

/** `current` with `patch` applied; a field set to null is removed. */
export function applyLimits(current: SpendLimits, patch: SpendLimits): SpendLimits {
  const next: SpendLimits = {}
  for (const field of LIMIT_FIELDS) {
    const value = field in patch ? patch[field] : current[field]
    if (value !== null && value !== undefined) (next as Record<string, unknown>)[field] = value
  }
  if (next.spend_limit === undefined) delete next.spend_window
  else next.spend_window ??= 'day'
  return next
}

/** `record` (a user) with its limits replaced by `patch` applied to them. */
export function withLimits<T extends SpendLimits>(record: T, patch: SpendLimits): T {
  const rest: Record<string, unknown> = { ...(record as object) }
  for (const field of LIMIT_FIELDS) delete rest[field]
  return { ...rest, ...applyLimits(record, patch) } as T
}

/** The limits of a record (a user), each one null when not set: what GET /me and the admin API show. */
export function limitsOf(record: SpendLimits | undefined): Required<SpendLimits> {
  return {
    credit_limit: record?.credit_limit ?? null,
    limit_reset: record?.limit_reset ?? null,
    ...trafficLimitsOf(record),
  }
}
