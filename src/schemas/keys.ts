import * as v from 'valibot'
import { int, nonNegativeDecimal, queryInteger } from './common'
import { rulesPatchSchema, rulesViewSchema } from './rules'
import { limitsSchema, trafficLimitsSchema, trafficPatchEntries } from './users'

/** Keys a page of GET /keys holds at most (OpenRouter's page: the 100 newest, then `offset`). */
export const KEYS_PAGE_SIZE = 100

const amount = v.number()
const nullableAmount = v.nullable(v.number())
const resetSchema = v.picklist(['daily', 'weekly', 'monthly'], 'must be "daily", "weekly", "monthly" or null')
const nameSchema = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200))
/** A credit limit in EUR: a non-negative number or plain decimal string, or null for none. */
const limitSchema = v.nullable(nonNegativeDecimal)
/** OpenRouter's expires_at: an ISO 8601 UTC time with seconds (fractions allowed), or null for never. */
const expiresAtSchema = v.nullable(
  v.pipe(
    v.string(),
    v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]00:?00)$/, 'must be an ISO 8601 UTC time with seconds, such as 2027-12-31T23:59:59Z'),
  ),
)

// Usage fields shared by GET /key and the key management routes: EUR amounts as exact JSON numbers.
const usageFields = {
  usage: amount,
  usage_daily: amount,
  usage_weekly: amount,
  usage_monthly: amount,
  byok_usage: amount,
  byok_usage_daily: amount,
  byok_usage_weekly: amount,
  byok_usage_monthly: amount,
  limit: nullableAmount,
  limit_remaining: nullableAmount,
  limit_reset: v.nullable(v.string()),
  include_byok_in_limit: v.boolean(),
  expires_at: v.nullable(v.string()),
  creator_user_id: v.nullable(v.string()),
  /** The gateway's: the key's tokens, spend and requests limits (docs/limits.md#tokens-spend-and-requests-in-flight). */
  ...trafficLimitsSchema.entries,
  /** The gateway's: the key that minted this one (docs/keys.md). */
  minted_by: v.pipe(
    v.nullable(v.string()),
    v.description('The hash of the API key that minted this key through a code (docs/keys.md), or null when it was not minted by a key'),
  ),
  /** The key's built-in rules (docs/policies.md#built-in-rules), OpenRouter's guardrail fields. */
  ...rulesViewSchema.entries,
}

/** GET /key: the calling key, in OpenRouter's shape (docs/keys.md). */
export const currentKeySchema = v.object({
  data: v.object({
    label: v.string(),
    ...usageFields,
    is_free_tier: v.boolean(),
    is_management_key: v.boolean(),
    is_provisioning_key: v.boolean(),
    organization_id: v.nullable(v.string()),
    workspace_id: v.nullable(v.string()),
    allowed_data_regions: v.array(v.string()),
    free_model_daily_requests: v.object({ limit: int(), remaining: int(), used: int() }),
    rate_limit: v.object({ requests: int(), interval: v.string(), note: v.string() }),
    user_limit: nullableAmount,
    user_limit_remaining: nullableAmount,
    user_limit_reset: v.nullable(resetSchema),
    user_usage: amount,
    user_requests_per_minute: v.nullable(int()),
    user_max_in_flight: v.nullable(int()),
    end_user_limits: v.nullable(limitsSchema),
  }),
})

/** An API key as the key management routes show it, in OpenRouter's shape (never the key itself). */
export const managedKeySchema = v.object({
  hash: v.string(),
  name: v.string(),
  label: v.string(),
  disabled: v.boolean(),
  ...usageFields,
  created_at: v.string(),
  updated_at: v.nullable(v.string()),
  external_user: v.nullable(v.string()),
  workspace_id: v.string(),
  user_id: v.string(),
  last_used: v.nullable(v.string()),
})

/** Query of GET /keys. */
export const listKeysQuerySchema = v.object({
  offset: v.optional(queryInteger(0, Number.MAX_SAFE_INTEGER), '0'),
  include_disabled: v.optional(v.picklist(['true', 'false'], 'must be true or false'), 'false'),
})

/** Body of POST /keys (OpenRouter's fields; `limit` in EUR). */
export const createKeySchema = v.strictObject({
  name: nameSchema,
  limit: v.optional(limitSchema),
  limit_reset: v.optional(v.nullable(resetSchema)),
  include_byok_in_limit: v.optional(v.boolean()),
  expires_at: v.optional(expiresAtSchema),
  creator_user_id: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))),
  ...rulesPatchSchema.entries,
  ...trafficPatchEntries,
})

/** Body of PATCH /keys/{hash}. */
export const updateKeySchema = v.strictObject({
  name: v.optional(nameSchema),
  disabled: v.optional(v.boolean()),
  limit: v.optional(limitSchema),
  limit_reset: v.optional(v.nullable(resetSchema)),
  include_byok_in_limit: v.optional(v.boolean()),
  ...rulesPatchSchema.entries,
  ...trafficPatchEntries,
})

/** Path of the routes of one key: its SHA-256 hash. */
export const keyHashParamsSchema = v.object({
  hash: v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/, 'must be the key’s SHA-256 hash (64 hex characters)')),
})

/** One key: `{ data }`; POST /keys adds `key`, shown this once. */
export const oneKeySchema = v.object({ data: managedKeySchema })
export const createdKeySchema = v.object({ data: managedKeySchema, key: v.string() })
export const keyListSchema = v.object({ data: v.array(managedKeySchema) })
export const deletedKeySchema = v.object({ deleted: v.literal(true) })
