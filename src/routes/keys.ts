import { keyUsage } from '../billing/key-usage'
import { userUsage } from '../billing/spend-limits'
import { applyTraffic, limitsOf, trafficFieldsOf, trafficLimitsOf } from '../billing/spend-limits-input'
import { fromUnits, toUnits } from '../billing/money'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest, notFound } from '../errors'
import { ExactNumber } from '../http/exact-json'
import { applyRulesPatch, rulesView } from '../policies/rules'
import type { RulesPatch } from '../schemas/rules'
import {
  KEYS_PAGE_SIZE,
  createKeySchema,
  createdKeySchema,
  currentKeySchema,
  deletedKeySchema,
  keyHashParamsSchema,
  keyListSchema,
  listKeysQuerySchema,
  oneKeySchema,
  updateKeySchema,
} from '../schemas/keys'
import type { ApiKeyRecord, Principal } from '../stores/account-types'
import { defineRoute } from './define'

const tag = 'API Keys'
const exact = (units: bigint) => new ExactNumber(fromUnits(units))
const exactOrNull = (units: bigint | null) => (units === null ? null : exact(units))
const iso = (ms: number) => new Date(ms).toISOString()

// The usage and limit fields GET /key and the key management routes share (docs/keys.md): EUR, exact.
async function usageFields(ctx: GatewayContext, record: ApiKeyRecord, now: number) {
  const used = await keyUsage(ctx, record, now)
  return {
    limit: record.credit_limit === null ? null : exact(toUnits(record.credit_limit)),
    limit_remaining: exactOrNull(used.limit_remaining),
    limit_reset: record.limit_reset ?? null,
    include_byok_in_limit: record.include_byok_in_limit === true,
    usage: exact(used.usage),
    usage_daily: exact(used.usage_daily),
    usage_weekly: exact(used.usage_weekly),
    usage_monthly: exact(used.usage_monthly),
    byok_usage: exact(used.byok_usage),
    byok_usage_daily: exact(used.byok_usage_daily),
    byok_usage_weekly: exact(used.byok_usage_weekly),
    byok_usage_monthly: exact(used.byok_usage_monthly),
    expires_at: record.expires_at,
    creator_user_id: record.creator_user_id ?? record.user_id,
    // Its tokens, spend and requests limits (docs/limits.md#tokens-spend-and-requests-in-flight).
    ...trafficLimitsOf(record.traffic_limits),
    minted_by: record.ancestors?.[0]?.hash ?? null,
    ...rulesView(record.rules),
  }
}

// The rule fields of a POST or PATCH body (docs/policies.md#built-in-rules).
const rulesPatchOf = (body: RulesPatch): RulesPatch => {
  const { allowed_models, allowed_providers, max_price, enforce_zdr, data_collection, redact } = body
  return { allowed_models, allowed_providers, max_price, enforce_zdr, data_collection, redact }
}

/** A key as the key management routes show it, in OpenRouter's shape (`workspace_id` is its org). */
async function managedKey(ctx: GatewayContext, record: ApiKeyRecord, now: number) {
  return {
    hash: record.hash,
    name: record.label,
    label: record.label,
    disabled: record.revoked || record.disabled === true,
    ...(await usageFields(ctx, record, now)),
    created_at: record.created_at,
    updated_at: record.updated_at ?? null,
    external_user: null,
    workspace_id: record.org_id,
    user_id: record.user_id,
    last_used: record.last_used,
  }
}

// Only the ordinary keys of the management key's org can be managed; anything else is 404, revealing nothing.
function checkManaged(record: ApiKeyRecord | null, principal: Principal): ApiKeyRecord {
  if (!record || record.org_id !== principal.org.id || record.management || record.deleted_at) throw notFound('API key not found')
  return record
}

const limitOf = (limit: string | number | null) => (limit === null ? null : fromUnits(toUnits(limit, 'limit')))

/** GET /key: the calling key (any kind), with its limit and usage (OpenRouter's shape, docs/keys.md). */
export const currentKeyRoute = defineRoute({
  method: 'GET',
  path: '/key',
  operationId: 'getCurrentKey',
  summary: 'The calling API key: its limit, usage per UTC day, week and month, and kind',
  tag,
  auth: 'key',
  keyKind: 'any',
  status: 200,
  response: currentKeySchema,
  async handler({ ctx, principal }) {
    const { key, org } = principal
    const now = ctx.now()
    const [fields, credits, userUsed] = await Promise.all([usageFields(ctx, key, now), ctx.credits.get(org.id), userUsage(ctx, principal.user, now)])
    const { user } = principal
    const limit = ctx.options.rateLimits.key
    return {
      data: {
        label: key.label,
        ...fields,
        // OpenRouter's free tier: an account that never bought credits.
        is_free_tier: toUnits(credits.total_credits) === 0n,
        is_management_key: key.management === true,
        is_provisioning_key: key.management === true,
        organization_id: org.id,
        workspace_id: org.id,
        allowed_data_regions: ['global'],
        // No `:free` model variants are served here, so there is no free-model quota to report.
        free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
        rate_limit: limit
          ? { requests: limit.requests, interval: `${limit.windowSeconds}s`, note: 'Requests this key may make per interval (429 beyond)' }
          : { requests: -1, interval: 'none', note: 'No per-key rate limit is configured' },
        // The key's user's limits and the org's end users' (docs/first-party.md#budgets-for-users-and-end-users): extra
        // fields, OpenRouter's shape above unchanged.
        user_limit: user.credit_limit == null ? null : exact(toUnits(user.credit_limit)),
        user_limit_remaining: exactOrNull(userUsed.limit_remaining),
        user_limit_reset: user.limit_reset ?? null,
        user_usage: exact(userUsed.usage),
        user_requests_per_minute: user.requests_per_minute ?? null,
        user_max_in_flight: user.max_in_flight ?? null,
        end_user_limits: org.end_user_limits ? limitsOf(org.end_user_limits) : null,
      },
    }
  },
})

/** GET /keys: the org's API keys, newest first, 100 a page (management key). */
export const listKeysRoute = defineRoute({
  method: 'GET',
  path: '/keys',
  operationId: 'listKeys',
  summary: 'List the organisation’s API keys (management key)',
  tag,
  auth: 'key',
  keyKind: 'management',
  status: 200,
  query: listKeysQuerySchema,
  response: keyListSchema,
  async handler({ ctx, principal, query }) {
    const now = ctx.now()
    // One page read from the org's key index: only its own records (docs/keys.md#the-key-routes).
    const page = await ctx.accounts.pageOrgKeys(principal.org.id, query.include_disabled === 'true' ? 'all' : 'enabled', query.offset, KEYS_PAGE_SIZE)
    return { data: await Promise.all(page.map((record) => managedKey(ctx, record, now))) }
  },
})

/** POST /keys: issues an API key in the org; the key is in this answer only (management key). */
export const createKeyRoute = defineRoute({
  method: 'POST',
  path: '/keys',
  operationId: 'createKey',
  summary: 'Create an API key (management key); the key is shown once',
  tag,
  auth: 'key',
  keyKind: 'management',
  status: 201,
  body: createKeySchema,
  response: createdKeySchema,
  async handler({ ctx, principal, body }) {
    const { user, org } = principal
    const now = ctx.now()
    let creator = user.id
    if (body.creator_user_id) {
      const member = await ctx.accounts.getUser(body.creator_user_id)
      if (!member || member.org_id !== org.id) throw invalidRequest('creator_user_id: not a user of this organisation', 'creator_user_id')
      creator = member.id
    }
    let expiresAt: number | undefined
    if (body.expires_at) {
      expiresAt = Date.parse(body.expires_at)
      if (!(expiresAt > now)) throw invalidRequest('expires_at: must be in the future', 'expires_at')
    }
    const { key, record } = await ctx.accounts.issueKey({
      userId: user.id,
      label: body.name,
      creditLimit: limitOf(body.limit ?? null),
      limitReset: body.limit_reset ?? null,
      includeByokInLimit: body.include_byok_in_limit === true,
      trafficLimits: applyTraffic(undefined, trafficFieldsOf(body)),
      expiresAt,
      creatorUserId: creator,
      rules: applyRulesPatch(undefined, rulesPatchOf(body)),
    })
    return { data: await managedKey(ctx, record, now), key }
  },
})

/** GET /keys/{hash}: one of the org's API keys (management key). */
export const getKeyRoute = defineRoute({
  method: 'GET',
  path: '/keys/:hash',
  operationId: 'getKey',
  summary: 'Read one API key (management key)',
  tag,
  auth: 'key',
  keyKind: 'management',
  status: 200,
  params: keyHashParamsSchema,
  response: oneKeySchema,
  async handler({ ctx, principal, params }) {
    const record = checkManaged(await ctx.accounts.getKey(params.hash.toLowerCase()), principal)
    return { data: await managedKey(ctx, record, ctx.now()) }
  },
})

/**
 * PATCH /keys/{hash}: renames, disables or enables a key and changes its limit (management key). One atomic step, so
 * concurrent changes (on any instance) never undo each other or a revocation; a revoked key cannot be enabled (409).
 */
export const updateKeyRoute = defineRoute({
  method: 'PATCH',
  path: '/keys/:hash',
  operationId: 'updateKey',
  summary: 'Rename, disable or enable an API key, or change its limit (management key)',
  tag,
  auth: 'key',
  keyKind: 'management',
  status: 200,
  params: keyHashParamsSchema,
  body: updateKeySchema,
  response: oneKeySchema,
  async handler({ ctx, principal, params, body }) {
    const now = ctx.now()
    const creditLimit = body.limit === undefined ? undefined : limitOf(body.limit)
    const traffic = trafficFieldsOf(body)
    const record = await ctx.accounts.updateKey(params.hash.toLowerCase(), (current) => {
      checkManaged(current, principal)
      if (body.disabled === false && current.revoked) throw new GatewayError(409, 'This key was revoked: it cannot be enabled again', { param: 'disabled' })
      const next: ApiKeyRecord = { ...current, updated_at: iso(now) }
      if (body.name !== undefined) next.label = body.name
      if (body.disabled !== undefined) next.disabled = body.disabled
      if (creditLimit !== undefined) next.credit_limit = creditLimit
      if (body.limit_reset !== undefined) next.limit_reset = body.limit_reset
      if (body.include_byok_in_limit !== undefined) next.include_byok_in_limit = body.include_byok_in_limit
      const rules = applyRulesPatch(current.rules, rulesPatchOf(body))
      if (rules) next.rules = rules
      else delete next.rules
      if (Object.keys(traffic).length) {
        const limits = applyTraffic(current.traffic_limits, traffic)
        if (Object.keys(limits).length) next.traffic_limits = limits
        else delete next.traffic_limits
      }
      return next
    })
    return { data: await managedKey(ctx, record, now) }
  },
})

/** DELETE /keys/{hash}: deletes a key: it answers 401 from then on (management key). */
export const deleteKeyRoute = defineRoute({
  method: 'DELETE',
  path: '/keys/:hash',
  operationId: 'deleteKey',
  summary: 'Delete an API key (management key)',
  tag,
  auth: 'key',
  keyKind: 'management',
  status: 200,
  params: keyHashParamsSchema,
  response: deletedKeySchema,
  async handler({ ctx, principal, params }) {
    await ctx.accounts.deleteKey(params.hash.toLowerCase(), (current) => checkManaged(current, principal))
    return { deleted: true as const }
  },
})

/** The API key routes (docs/keys.md), in OpenRouter's shapes. */
export const keyRoutes = [currentKeyRoute, listKeysRoute, createKeyRoute, getKeyRoute, updateKeyRoute, deleteKeyRoute]
