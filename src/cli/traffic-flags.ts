import type { TrafficLimitsInput } from '../admin'
import { trafficLimitsOf } from '../billing/spend-limits-input'
import type { TrafficLimits } from '../stores/account-types'
import { usageError } from './errors'
import { table } from './format'

// The flags of `keys set-limits`, `orgs set-limits` and `users set-limits` for tokens, spend and requests limits
// (docs/limits.md#tokens-spend-and-requests-in-flight), and how they are shown.

/** The flags that set tokens, spend and requests limits; `none` removes one. */
export const trafficArgs = {
  'tokens-per-minute': { type: 'string', valueHint: 'n|none', description: 'Tokens (prompt and completion) a UTC minute admits at most; none removes it' },
  'tokens-per-day': { type: 'string', valueHint: 'n|none', description: 'Tokens a UTC day admits at most; none removes it' },
  'spend-limit': { type: 'string', valueHint: 'eur|none', description: 'Most spent per --spend-window, in EUR (exact decimal); none removes it' },
  'spend-window': { type: 'string', valueHint: 'minute|hour|day', description: 'The UTC window --spend-limit counts (default day)' },
  'requests-per-minute': { type: 'string', valueHint: 'n|none', description: 'Requests a UTC minute admits at most; none removes it' },
  'max-in-flight': { type: 'string', valueHint: 'n|none', description: 'Requests running at once at most; none removes it' },
} as const

const FLAGS = {
  tokens_per_minute: 'tokens-per-minute',
  tokens_per_day: 'tokens-per-day',
  spend_limit: 'spend-limit',
  spend_window: 'spend-window',
  requests_per_minute: 'requests-per-minute',
  max_in_flight: 'max-in-flight',
} as const

const COUNTS = new Set(['tokens_per_minute', 'tokens_per_day', 'requests_per_minute', 'max_in_flight'])

/** The limits change the flags name (digits as numbers, `none` as null; the admin API checks them), added to `into`. */
export function trafficFromFlags(args: Record<string, unknown>, into: Record<string, unknown> = {}): TrafficLimitsInput {
  for (const [field, flag] of Object.entries(FLAGS)) {
    const value = args[flag]
    if (typeof value !== 'string') continue
    into[field] = value === 'none' ? null : COUNTS.has(field) && /^\d+$/.test(value) ? Number(value) : value
  }
  return into as TrafficLimitsInput
}

/** The flags' list for a usage error naming them. */
export const trafficFlagList = Object.values(FLAGS)
  .map((flag) => `--${flag}`)
  .join(', ')

/** Tokens, spend and requests limits as lines of a table (`none` where not set). */
export function trafficLines(limits: TrafficLimits | undefined): string {
  const shown = trafficLimitsOf(limits)
  const n = (value: number | null) => (value === null ? 'none' : String(value))
  return table([
    ['  tokens per minute', n(shown.tokens_per_minute)],
    ['  tokens per day', n(shown.tokens_per_day)],
    ['  spend limit', shown.spend_limit === null ? 'none' : `${shown.spend_limit} EUR per ${shown.spend_window ?? 'day'}`],
    ['  requests per minute', n(shown.requests_per_minute)],
    ['  requests at once', n(shown.max_in_flight)],
  ])
}

/** A usage error when no flag names a limit. */
export function requireSomeLimit(limits: object): void {
  if (!Object.keys(limits).length) throw usageError(`name at least one limit: ${trafficFlagList}`)
}
