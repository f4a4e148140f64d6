import * as v from 'valibot'

const challenge = v.pipe(v.string(), v.minLength(43), v.maxLength(128), v.regex(/^[A-Za-z0-9._~-]+$/, 'must be base64url characters'))
const method = v.picklist(['S256', 'plain'])
const url = v.pipe(v.string(), v.url())

/** Body of POST /auth/keys/authorize and POST /auth/keys/code (docs/pkce.md#creating-codes-with-a-key). */
export const codeRequestSchema = v.strictObject({
  callback_url: url,
  code_challenge: challenge,
  code_challenge_method: v.optional(method, 'S256'),
  /** OpenRouter's optional terms of the key to mint (docs/keys.md): never more than the calling key's. */
  limit: v.optional(
    v.union([
      v.pipe(v.number(), v.finite(), v.minValue(0, 'must be greater than 0')),
      v.pipe(v.string(), v.regex(/^\d{1,15}(?:\.\d{1,12})?$/, 'must be a decimal number of EUR')),
    ]),
  ),
  // null: no expiry (OpenRouter's SDK sends it for an unset expiresAt).
  expires_at: v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        v.maxLength(64),
        v.regex(/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/, 'must be an ISO 8601 time'),
        v.check((s) => Number.isFinite(Date.parse(s)), 'must be an ISO 8601 time'),
      ),
    ),
  ),
  key_label: v.optional(v.pipe(v.string(), v.maxLength(200))),
  /** The minted key's `limit` starts over each UTC day, week or month (its `limit_reset`, docs/keys.md). */
  usage_limit_type: v.optional(v.picklist(['daily', 'weekly', 'monthly'])),
})

/**
 * An authorization code (docs/pkce.md#creating-codes-with-a-key), with the seed's fields and OpenRouter's `data` (`id`
 * is the same code, `app_id` an integer id of the callback origin).
 */
export const authorizationCodeSchema = v.object({
  code: v.string(),
  created_at: v.string(),
  data: v.object({ id: v.string(), app_id: v.pipe(v.number(), v.integer()), created_at: v.string() }),
})

/** Body of POST /auth/keys: the code exchange; `code_challenge_method`, when given, must be the code's. */
export const codeExchangeSchema = v.strictObject({
  code: v.pipe(v.string(), v.minLength(1)),
  code_verifier: v.pipe(v.string(), v.minLength(43), v.maxLength(128), v.regex(/^[A-Za-z0-9._~-]+$/, 'must use only [A-Za-z0-9-._~]')),
  code_challenge_method: v.optional(method),
})

/** The issued key (docs/pkce.md#the-exchange). */
export const issuedKeySchema = v.object({ key: v.string(), user_id: v.string() })

/** Query of GET /auth (docs/pkce.md#the-browser-flow). */
export const authorizeQuerySchema = v.object({
  callback_url: url,
  code_challenge: challenge,
  code_challenge_method: v.optional(method, 'S256'),
  state: v.optional(v.string()),
  response_type: v.optional(v.literal('code')),
  client_id: v.optional(v.string()),
  redirect_uri: v.optional(url),
  /** The credit limit (EUR) the app asks the key to have, as @openrouter/sdk's createAuthorizationUrl sends it: shown on the consent page, set on the key. */
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,15}(?:\.\d{1,12})?$/, 'must be a decimal number of EUR'),
      v.check((limit) => Number(limit) > 0, 'must be greater than 0'),
    ),
  ),
})
