import * as v from 'valibot'
import { int, queryInteger, uuidSchema } from './common'

const MAX_SAFE = Number.MAX_SAFE_INTEGER
const slug = v.pipe(v.string(), v.minLength(1), v.maxLength(64))
/** Bytes a credential's secret may have at most (docs/byok.md). */
export const MAX_SECRET_BYTES = 16 * 1024
const secret = v.pipe(v.string(), v.minLength(1), v.maxBytes(MAX_SECRET_BYTES, `must be at most ${MAX_SECRET_BYTES} bytes`))
/** Entries of `allowed_api_key_hashes`, `allowed_models` and `allowed_user_ids` (docs/limits.md). */
export const MAX_ALLOWED_ENTRIES = 1000
/** Characters of a user id in `allowed_user_ids`, and of `workspace_id`. */
export const MAX_USER_ID = 128
const hashes = v.pipe(v.array(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/i, 'must be a SHA-256 hex digest'))), v.maxLength(MAX_ALLOWED_ENTRIES))

/**
 * A BYOK credential as returned (never with its secret), with the fields OpenRouter's SDK reads beside the seed's
 * (docs/api.md#openrouter-compatibility; what each means here: docs/byok.md#credentials).
 */
export const credentialSchema = v.object({
  id: uuidSchema,
  provider: v.string(),
  name: v.string(),
  label: v.string(),
  allowed_api_key_hashes: v.array(v.string()),
  allowed_models: v.array(v.string()),
  allowed_user_ids: v.array(v.string()),
  always_use: v.boolean(),
  is_required: v.boolean(),
  is_byok_only: v.boolean(),
  declared_zdr: v.nullable(v.boolean()),
  is_fallback: v.boolean(),
  disabled: v.boolean(),
  sort_order: int(),
  workspace_id: v.string(),
  created_at: v.string(),
  last_used: v.nullable(v.string()),
})

// An allow-list: null (as OpenRouter's SDK sends for "no restriction") is the empty list.
const allowList = (list: v.GenericSchema<string[], string[]>) =>
  v.optional(
    v.pipe(
      v.nullable(list),
      v.transform((value) => value ?? []),
    ),
  )

const editable = {
  // null: the default name (create), unchanged (update).
  name: v.optional(
    v.pipe(
      v.nullable(v.pipe(v.string(), v.maxLength(200))),
      v.transform((name) => name ?? undefined),
    ),
  ),
  label: v.optional(v.pipe(v.string(), v.maxLength(200))),
  allowed_api_key_hashes: allowList(hashes),
  allowed_models: allowList(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(256))), v.maxLength(MAX_ALLOWED_ENTRIES))),
  allowed_user_ids: allowList(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_USER_ID))), v.maxLength(MAX_ALLOWED_ENTRIES))),
  always_use: v.optional(v.boolean()),
  is_required: v.optional(v.boolean()),
  is_byok_only: v.optional(v.boolean()),
  declared_zdr: v.optional(v.nullable(v.boolean())),
  is_fallback: v.optional(v.boolean()),
  disabled: v.optional(v.boolean()),
  sort_order: v.optional(v.pipe(v.number(), v.integer(), v.minValue(-MAX_SAFE), v.maxValue(MAX_SAFE))),
  workspace_id: v.optional(v.pipe(v.string(), v.maxLength(MAX_USER_ID))),
}

/** Body of POST /byok (docs/byok.md#credentials). */
export const createCredentialSchema = v.strictObject({ key: secret, provider: slug, ...editable })

/** Body of PATCH /byok/{id}: the same fields but provider; `key` rotates the secret. */
export const updateCredentialSchema = v.strictObject({ key: v.optional(secret), ...editable })

/** Body of POST /byok/test: a key that is tested, never stored. */
export const testCredentialSchema = v.strictObject({ key: secret, provider: slug })

/** Query of GET /byok (docs/api.md#pagination). */
export const listCredentialsQuerySchema = v.object({
  offset: v.optional(queryInteger(0, MAX_SAFE), '0'),
  limit: v.optional(queryInteger(1, 100), '100'),
  provider: v.optional(slug),
})

/** The result of a credential test (docs/api.md#byok-credentials). */
export const testResultSchema = v.object({
  provider: v.string(),
  success: v.boolean(),
  checks: v.array(v.object({ target: v.string(), ok: v.boolean(), latency_ms: int(), message: v.string() })),
})

/** BYOK figures of the current period (docs/byok.md#fees-and-settlement). */
export const byokUsageSchema = v.object({
  period_start: v.pipe(v.string(), v.isoTimestamp()),
  period_end: v.pipe(v.string(), v.isoTimestamp()),
  successful_requests: int(),
  settled_requests: int(),
  pending_settlement_requests: int(),
  free_request_allowance: int(),
  allowance_used: int(),
  allowance_remaining: int(),
  chargeable_requests: int(),
  estimated_upstream_cost_eur: v.string(),
  service_platform_fee_eur: v.string(),
  service_platform_fee_charged_eur: v.string(),
  service_platform_fee_pending_eur: v.string(),
  platform_fee_rate: v.string(),
})
