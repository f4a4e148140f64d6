// The records of orgs, users and API keys, and what a bearer key resolves to (docs/keys.md): types only, so that
// the accounts store, the authentication cache and the key stores all use them without importing one another
// (docs/development.md#layers).

import type { ProviderKeys } from '../http/provider-keys'
import type { PiiKind } from '../policies/pii'

/** An organisation: the billing entity whose credits its users share. */
export interface Org {
  id: string
  name: string
  created_at: string
  /** The limits each end user of the org's keys has (OpenRouter's `user` field: docs/first-party.md#end-users); absent: none. */
  end_user_limits?: SpendLimits
  /** The org's own response cache setting (docs/cache.md#per-key-and-per-org); absent: the gateway's `cache` option. */
  response_cache?: ResponseCacheSetting
  /** The org's built-in rules (docs/policies.md#built-in-rules); absent: none. */
  rules?: Rules
  /** The org's own tokens, spend and requests limits, over all its keys and users (docs/limits.md#tokens-spend-and-requests-in-flight). */
  traffic_limits?: TrafficLimits
}

/** A key's or an org's own response cache setting (docs/cache.md#per-key-and-per-org): on or off, and its TTL in seconds. */
export interface ResponseCacheSetting {
  enabled: boolean
  ttl_seconds?: number
}

/**
 * Built-in rules of a key, a user or an org (docs/policies.md#built-in-rules), in OpenRouter's guardrail field names;
 * a field absent: no such rule. Those of the org, the user and the key all apply, the strictest winning.
 */
export interface Rules {
  /** Model ids (or `vendor/*`) requests may name; lowercase. */
  allowed_models?: string[]
  /** Provider slugs requests may be routed to; lowercase. */
  allowed_providers?: string[]
  /** OpenRouter's `provider.max_price`, as canonical decimal strings: applied to every request as if it sent it. */
  max_price?: { prompt?: string; completion?: string; request?: string; image?: string }
  /** Only providers whose data policy retains no prompts (as `provider.zdr: true` on every request). */
  enforce_zdr?: boolean
  /** `deny`: only providers whose data policy trains on no prompts (as `provider.data_collection: "deny"`). */
  data_collection?: 'allow' | 'deny'
  /** Personal data replaced in what goes to the provider and in what is answered; `kinds` absent: every kind. */
  redact?: { input: boolean; output: boolean; kinds?: PiiKind[] }
}

/** The window a spend limit counts: one UTC minute, hour or day (docs/limits.md#tokens-spend-and-requests-in-flight). */
export type SpendWindow = 'minute' | 'hour' | 'day'

/**
 * Limits on what a key, a user, an end user or an org may use per window (docs/limits.md#tokens-spend-and-requests-in-flight):
 * tokens per UTC minute and day, EUR per window, requests per minute and requests at once. null (or absent): no such limit.
 */
export interface TrafficLimits {
  /** Tokens (prompt and completion) a UTC minute admits at most. */
  tokens_per_minute?: number | null
  /** Tokens a UTC day admits at most. */
  tokens_per_day?: number | null
  /** Most spent per `spend_window`, in EUR (a canonical decimal string). */
  spend_limit?: string | null
  /** The window `spend_limit` counts. */
  spend_window?: SpendWindow | null
  /** Requests a UTC minute admits at most. */
  requests_per_minute?: number | null
  /** Requests running at once at most. */
  max_in_flight?: number | null
}

/**
 * Limits on a user's or an end user's requests (docs/first-party.md#budgets-for-users-and-end-users): what they may
 * spend (per UTC day, week or month when `limit_reset` is set), how many requests a UTC minute may admit, and how
 * many may run at once. null (or absent): no such limit.
 */
export interface SpendLimits extends TrafficLimits {
  /** Most they may spend, in EUR (a canonical decimal string), or null for no limit. */
  credit_limit?: string | null
  /** When set, `credit_limit` is what they may spend per UTC day, week or month. */
  limit_reset?: LimitReset | null
}

/** A user of one org, with its own limits (docs/first-party.md#budgets-for-users-and-end-users). */
export interface User extends SpendLimits {
  /** The user's built-in rules (docs/policies.md#built-in-rules); absent: none. */
  rules?: Rules
  id: string
  org_id: string
  email: string
  plan: string
  disabled: boolean
  created_at: string
  /** The host app's own id of a user its session signed in (docs/first-party.md#host-users). */
  host_id?: string
}

/** When a key's credit limit starts over: each UTC day, week (from Monday) or month (docs/keys.md). */
export type LimitReset = 'daily' | 'weekly' | 'monthly'

/** What the gateway keeps of an API key: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  hash: string
  user_id: string
  org_id: string
  label: string
  created_at: string
  last_used: string | null
  expires_at: string | null
  revoked: boolean
  revoked_at: string | null
  /** Most this key may spend, in EUR (decimal string), or null for no limit. */
  credit_limit: string | null
  /** When set, `credit_limit` is what the key may spend per UTC day, week or month (docs/keys.md). */
  limit_reset?: LimitReset | null
  /** The upstream cost of requests a customer's own provider key (BYOK) served counts against the limit too. */
  include_byok_in_limit?: boolean
  /** A key minted by another key (docs/keys.md): the keys above it, nearest first, whose limits bound it too. */
  ancestors?: KeyAncestor[]
  /** A management key (OpenRouter's provisioning key): it only manages the org's keys (docs/keys.md). */
  management?: boolean
  /** Disabled through PATCH /keys/{hash}: it answers 401 until enabled again. */
  disabled?: boolean
  /** Deleted through DELETE /keys/{hash}: revoked, and gone from the key management routes. */
  deleted_at?: string
  /** The user who created the key through the key management routes, when not its own user. */
  creator_user_id?: string
  /** When the key management routes last changed it. */
  updated_at?: string
  /** How many times the record was changed since it was issued (absent: never). */
  rev?: number
  /** The key's own response cache setting (docs/cache.md#per-key-and-per-org), over its org's. */
  response_cache?: ResponseCacheSetting
  /** The key's built-in rules (docs/policies.md#built-in-rules); absent: none. */
  rules?: Rules
  /** Its tokens, spend and requests limits (docs/limits.md#tokens-spend-and-requests-in-flight); absent: none. */
  traffic_limits?: TrafficLimits
}

/**
 * A key above a minted key: its hash and credit limit (with its reset and BYOK rule when set), copied when the key was
 * minted and read afresh from the key's record whenever the minted key is used.
 */
export interface KeyAncestor {
  hash: string
  credit_limit: string | null
  limit_reset?: LimitReset | null
  include_byok_in_limit?: boolean
  /** Its built-in rules, which bound the keys it minted too (docs/policies.md#built-in-rules). */
  rules?: Rules
  /** Its tokens, spend and requests limits, which bound the keys it minted too (docs/limits.md#tokens-spend-and-requests-in-flight). */
  traffic_limits?: TrafficLimits
}

/** What a new key is issued with. */
export interface IssueKeyInput {
  userId: string
  label?: string
  /** Most it may spend, in EUR (a canonical decimal string), or null for no limit. */
  creditLimit?: string | null
  /** Its limit starts over each UTC day, week or month. */
  limitReset?: LimitReset | null
  /** BYOK upstream cost counts against its limit too. */
  includeByokInLimit?: boolean
  /** Epoch ms when it expires. */
  expiresAt?: number
  ancestors?: KeyAncestor[]
  /** A management key: it only manages the org's keys. */
  management?: boolean
  /** The user who created it, when not its own user. */
  creatorUserId?: string
  /** Its built-in rules (docs/policies.md#built-in-rules). */
  rules?: Rules
  /** Its tokens, spend and requests limits. */
  trafficLimits?: TrafficLimits
}

/** A freshly issued key: `key` is shown this once and never stored. */
export interface IssuedKey {
  key: string
  record: ApiKeyRecord
}

/** The user, org and key a request acts as: a bearer key's, or a host session's (docs/first-party.md). */
export interface Principal {
  /** The API key; for a host session, the user's session key (docs/first-party.md#session-keys), never a bearer secret. */
  key: ApiKeyRecord
  user: User
  org: Org
  /** How the caller authenticated: a bearer key (absent) or the host's session (docs/first-party.md). */
  via?: 'key' | 'session'
  /** The end user the request is made for (OpenRouter's `user` field), when it names one (docs/first-party.md#end-users). */
  endUser?: string
  /** The request's own provider keys (`X-Provider-API-Keys`, docs/byok.md#keys-for-one-request): this request only, never stored. */
  providerKeys?: ProviderKeys
}
