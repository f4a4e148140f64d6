import { invalidRequest } from '../errors'
import type { LimitReset, SpendLimits } from '../stores/account-types'
import { fromUnits, toUnits } from './money'

// What the admin API, the CLI and PATCH /users/{id} take to set a user's or an org's end users' limits
// (docs/first-party.md#budgets-for-users-and-end-users).

/** The fields of a limits change: each absent (left as it is), null (no such limit) or a new value. */
export const LIMIT_FIELDS = ['credit_limit', 'limit_reset', 'requests_per_minute', 'max_in_flight'] as const

/** The most requests per minute or at once a limit may name. */
const MAX_COUNT = 1_000_000
const RESETS: readonly unknown[] = ['daily', 'weekly', 'monthly']

// A whole count of at least 1 (a number, or a string of digits from the CLI), or null.
function countOf(value: unknown, param: string): number | null {
  if (value === null) return null
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_COUNT)
    throw invalidRequest(`${param}: must be a whole number from 1 to ${MAX_COUNT}, or null for no limit`, param)
  return n
}

/**
 * A limits change, checked: `credit_limit` a positive exact decimal in EUR (written canonically) or null,
 * `limit_reset` "daily", "weekly", "monthly" or null, `requests_per_minute` and `max_in_flight` whole numbers of at
 * least 1 or null; anything else (another field, another value) is a 400 naming it.
 */
export function limitsPatchOf(input: unknown): SpendLimits {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalidRequest('limits: must be an object')
  const patch: SpendLimits = {}
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined) continue
    if (!(LIMIT_FIELDS as readonly string[]).includes(field)) throw invalidRequest(`${field}: unknown limit (one of ${LIMIT_FIELDS.join(', ')})`, field)
    if (field === 'credit_limit') {
      if (value === null) patch.credit_limit = null
      else {
        if (typeof value !== 'string' && typeof value !== 'number')
          throw invalidRequest('credit_limit: must be a decimal string or number, or null for no limit', field)
        const units = toUnits(value, 'credit_limit')
        if (units <= 0n) throw invalidRequest('credit_limit: must be greater than 0 (null for no limit)', field)
        patch.credit_limit = fromUnits(units)
      }
    } else if (field === 'limit_reset') {
      if (value !== null && !RESETS.includes(value)) throw invalidRequest('limit_reset: must be "daily", "weekly", "monthly" or null', field)
      patch.limit_reset = value as LimitReset | null
    } else if (field === 'requests_per_minute') patch.requests_per_minute = countOf(value, field)
    else patch.max_in_flight = countOf(value, field)
  }
  return patch
}

/** `current` with `patch` applied; a field set to null is removed. */
export function applyLimits(current: SpendLimits, patch: SpendLimits): SpendLimits {
  const next: SpendLimits = {}
  for (const field of LIMIT_FIELDS) {
    const value = field in patch ? patch[field] : current[field]
    if (value !== null && value !== undefined) (next as Record<string, unknown>)[field] = value
  }
  return next
}

/** The limits of a record (a user), each one null when not set: what GET /me and the admin API show. */
export function limitsOf(record: SpendLimits | undefined): Required<SpendLimits> {
  return {
    credit_limit: record?.credit_limit ?? null,
    limit_reset: record?.limit_reset ?? null,
    requests_per_minute: record?.requests_per_minute ?? null,
    max_in_flight: record?.max_in_flight ?? null,
  }
}
