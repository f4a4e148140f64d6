import * as v from 'valibot'
import { int, nonNegativeDecimal } from './common'

// The limits of a user and of an org's end users (docs/first-party.md#budgets-for-users-and-end-users).

const resetSchema = v.picklist(['daily', 'weekly', 'monthly'], 'must be "daily", "weekly", "monthly" or null')
const countSchema = v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(1_000_000))
const tokensSchema = v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(10_000_000_000))
const windowSchema = v.picklist(['minute', 'hour', 'day'], 'must be "minute", "hour", "day" or null')

/** A change of tokens, spend and requests limits (docs/limits.md#tokens-spend-and-requests-in-flight): each field absent, null or its new value. */
export const trafficPatchEntries = {
  tokens_per_minute: v.optional(v.nullable(tokensSchema)),
  tokens_per_day: v.optional(v.nullable(tokensSchema)),
  spend_limit: v.optional(v.nullable(nonNegativeDecimal)),
  spend_window: v.optional(v.nullable(windowSchema)),
  requests_per_minute: v.optional(v.nullable(countSchema)),
  max_in_flight: v.optional(v.nullable(countSchema)),
}

/** Tokens, spend and requests limits as they are, each null when not set (`spend_limit` in EUR, a decimal string). */
export const trafficLimitsSchema = v.object({
  tokens_per_minute: v.nullable(int()),
  tokens_per_day: v.nullable(int()),
  spend_limit: v.nullable(v.string()),
  spend_window: v.nullable(windowSchema),
  requests_per_minute: v.nullable(int()),
  max_in_flight: v.nullable(int()),
})

/** A change of limits: each field absent (unchanged), null (no such limit) or its new value. */
export const limitsPatchSchema = v.strictObject({
  credit_limit: v.optional(v.nullable(nonNegativeDecimal)),
  limit_reset: v.optional(v.nullable(resetSchema)),
  ...trafficPatchEntries,
})

/** The limits as they are: each null when not set (`credit_limit` in EUR, a decimal string). */
export const limitsSchema = v.object({
  credit_limit: v.nullable(v.string()),
  limit_reset: v.nullable(resetSchema),
  ...trafficLimitsSchema.entries,
})

/** A user's limits with what they used (EUR as decimal strings; `limit_remaining` null without a credit limit). */
export const userLimitsSchema = v.object({
  ...limitsSchema.entries,
  usage: v.string(),
  usage_daily: v.string(),
  usage_weekly: v.string(),
  usage_monthly: v.string(),
  limit_remaining: v.nullable(v.string()),
  requests_this_minute: int(),
  in_flight: v.nullable(int()),
})

/** Path of the routes of one user: its id. */
export const userParamsSchema = v.object({ id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) })

/** A user as PATCH /users/{id} answers it: `{ data }`. */
export const oneUserSchema = v.object({
  data: v.object({
    id: v.string(),
    email: v.string(),
    org_id: v.string(),
    plan: v.string(),
    disabled: v.boolean(),
    limits: userLimitsSchema,
  }),
})
