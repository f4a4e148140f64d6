import { fromUnits, toUnits } from './billing/money'
import type { GatewayContext } from './context'
import { GatewayError, invalidRequest, notFound } from './errors'
import { settleByokFees } from './billing/byok-fees'
import { applyLimits, applyTraffic, limitsPatchOf, trafficPatchOf, withLimits } from './billing/spend-limits-input'
import { sweepExpired, type SweepCounts } from './maintenance/sweep'
import type { ApiKeyRecord, IssuedKey, LimitReset, Org, Principal, ResponseCacheSetting, SpendWindow, User } from './stores/account-types'
import { responseCacheSettingOf } from './cache/options'
import type { Credits, LedgerEntry, PageOptions } from './stores/credits'
import type { UsageRecord } from './stores/usage'
import { type ActivityGrouping, dayStart, daysBetween, readActivity } from './stores/activity'
import { dayOf } from './stores/rollups'
import type { HealthSnapshot } from './routing/health'
import { parseInput } from './http/validate'
import { applyRulesPatch } from './policies/rules'
import { rulesPatchSchema, type RulesPatch } from './schemas/rules'

export type { PageOptions }

/** A change of limits as the admin API takes it: each field absent (unchanged), null (removed) or its new value (a number or decimal string for `credit_limit`). */
export interface SpendLimitsInput extends TrafficLimitsInput {
  credit_limit?: string | number | null
  limit_reset?: LimitReset | null
}

/**
 * A change of a key's, an org's (or a user's) tokens, spend and requests limits as the admin API takes it
 * (docs/limits.md#tokens-spend-and-requests-in-flight): each field absent (unchanged), null (removed) or its new value.
 */
export interface TrafficLimitsInput {
  tokens_per_minute?: number | null
  tokens_per_day?: number | null
  /** EUR per `spend_window`, a number or decimal string. */
  spend_limit?: string | number | null
  spend_window?: SpendWindow | null
  requests_per_minute?: number | null
  max_in_flight?: number | null
}

/** What `admin.usage` reads by default, and at most, per call. */
export const USAGE_PAGE = { defaultLimit: 100, maxLimit: 1000 }

/** What `admin.activity` reads (docs/usage.md#usage-per-user-from-your-code-adminactivity). */
export interface ActivityQuery {
  /** The first UTC day (YYYY-MM-DD). Default: 30 days before `to`. */
  from?: string
  /** The last UTC day (YYYY-MM-DD), included. Default: today. */
  to?: string
  /** A row per user, per end user or per API key (beside day, model and provider); default none. */
  groupBy?: ActivityGrouping
  /** Only this user's requests. */
  userId?: string
  /** Only the requests made for this end user (`"(other)"`: those past the day's bound). */
  endUser?: string
  /** Only this API key's requests (its SHA-256 hex). */
  apiKeyHash?: string
}

/** One row of `admin.activity`: GET /activity's, with amounts as exact decimal strings (EUR). */
export interface ActivityUsageRow {
  date: string
  model: string
  model_permaslug: string
  provider: string
  provider_name: string
  requests: number
  prompt_tokens: number
  completion_tokens: number
  reasoning_tokens: number
  /** Credits charged, EUR. */
  usage: string
  /** BYOK: the upstream cost at the customer's own provider, EUR. */
  byok_usage_inference: string
  /** With `groupBy: 'user'`: the user (null: requests counted without their key past the day's bound). */
  user_id?: string | null
  /** With `groupBy: 'end_user'`: the end user (`"(other)"` past the day's bound; null: requests without one). */
  end_user?: string | null
  /** With `groupBy: 'api_key'`: the key's hash (null: counted without it). */
  api_key_hash?: string | null
}

/** What `admin.ensureDevKey` takes (docs/first-key.md). */
export interface DevKeyInput {
  /** The developer's email: the user is created with its own org when missing. */
  email: string
  /** EUR granted to the org when the user is created now (exact decimal; 0 for none). Default "10". */
  credits?: string | number
  /** Name of the org created with the user. Default: the email. */
  orgName?: string
  /** Label of the key, which is how a later call recognises it. Default "dev key". */
  label?: string
  /** Revoke the user's live keys of that label and issue a new one (the old key was shown only once). Default false. */
  renew?: boolean
  /** Where the key is printed when one is issued: true (the default) writes it with console.log, false nowhere, or your function. */
  print?: boolean | ((text: string) => void)
}

/** What `admin.ensureDevKey` did. */
export interface DevKey {
  /** The key, when one was issued now (shown this once); null when the user already had a live key of that label. */
  key: string | null
  /** The record of the key issued now, or of the live key already there. */
  record: ApiKeyRecord
  user: User
  org: Org
  /** True when the user (and its org, and the credits) were created now. */
  created: boolean
  credits: Credits
}

/** The host app's programmatic control of accounts, keys and credits (no HTTP route exposes it). */
export interface GatewayAdmin {
  /** Creates an org. */
  createOrg(input: { name: string; id?: string }): Promise<Org>
  /** Reads an org, or null. */
  getOrg(id: string): Promise<Org | null>
  /** Creates a user, in an existing org or in a new one. */
  createUser(input: { email: string; orgId?: string; orgName?: string; plan?: string; id?: string }): Promise<User>
  /** Reads a user, or null. */
  getUser(id: string): Promise<User | null>
  /** Finds a user by email, or null. */
  findUserByEmail(email: string): Promise<User | null>
  /** Changes a user's plan or disables the account (its keys then answer 403). */
  updateUser(id: string, patch: { plan?: string; disabled?: boolean }): Promise<User>
  /**
   * Changes a user's limits (docs/first-party.md#budgets-for-users-and-end-users): `credit_limit` (EUR, exact decimal)
   * with `limit_reset` ("daily", "weekly", "monthly"), `requests_per_minute` and `max_in_flight`; a field left out stays
   * as it is, null removes it. A bad value is a 400 naming it. Takes effect on the next request, on every instance.
   */
  setUserLimits(userId: string, limits: SpendLimitsInput): Promise<User>
  /**
   * Sets the limits each end user of an org has (the `user` field of its keys' requests, counted per end user:
   * docs/first-party.md#end-users), as `setUserLimits`; null removes them all.
   */
  setEndUserLimits(orgId: string, limits: SpendLimitsInput | null): Promise<Org>
  /**
   * Turns the response cache on or off for every request of an org's keys, or of one key (by the key or its hash),
   * over the `cache` option, with its TTL in seconds (docs/cache.md#per-key-and-per-org); null goes back to the option
   * (the key: to its org's). A request's `X-OpenRouter-Cache` header still decides for itself.
   */
  setResponseCache(target: { orgId: string } | { key: string }, setting: ResponseCacheSetting | null): Promise<Org | ApiKeyRecord>
  /**
   * Changes the built-in rules of an org, a user or a key (docs/policies.md#built-in-rules), in OpenRouter's guardrail
   * field names: `allowed_models`, `allowed_providers`, `max_price`, `enforce_zdr`, `data_collection`, `redact`; a field
   * left out stays as it is, null removes it; a bad value is a 400 naming it. Takes effect on the next request, on every instance.
   */
  setOrgRules(orgId: string, rules: RulesPatch): Promise<Org>
  /** Changes a user's built-in rules, as `setOrgRules`. */
  setUserRules(userId: string, rules: RulesPatch): Promise<User>
  /** Changes a key's built-in rules (given the key or its hash), as `setOrgRules`. */
  setKeyRules(keyOrHash: string, rules: RulesPatch): Promise<ApiKeyRecord>
  /**
   * Changes an org's own tokens, spend and requests limits, over all its keys and users
   * (docs/limits.md#tokens-spend-and-requests-in-flight); a field left out stays as it is, null removes it, and null
   * instead of the limits removes them all. A bad value is a 400 naming it. Takes effect on the next request, on every instance.
   */
  setOrgLimits(orgId: string, limits: TrafficLimitsInput | null): Promise<Org>
  /** Changes an API key's tokens, spend and requests limits (by its hash), as `setOrgLimits`; returns its record. */
  setKeyLimits(keyHash: string, limits: TrafficLimitsInput | null): Promise<ApiKeyRecord>
  /**
   * Issues an API key for a user: `key` is shown this once; `creditLimit` is a positive exact decimal (EUR), or null for
   * none, and `limitReset` makes it a limit per UTC day, week or month. `management: true` issues a management key
   * instead (OpenRouter's provisioning key): it manages the org's keys through /keys and is refused everywhere else
   * (docs/keys.md); it takes no credit limit.
   */
  issueKey(input: {
    userId: string
    label?: string
    creditLimit?: string | number | null
    limitReset?: LimitReset | null
    includeByokInLimit?: boolean
    management?: boolean
    /** Its built-in rules (docs/policies.md#built-in-rules), as `setKeyRules` takes them. */
    rules?: RulesPatch
  }): Promise<IssuedKey>
  /** Revokes a key given itself or its hash. */
  revokeKey(keyOrHash: string): Promise<ApiKeyRecord>
  /** Lists a user's keys (records, never secrets). */
  listKeys(userId: string): Promise<ApiKeyRecord[]>
  /** The user, org and key record a key belongs to; null when unknown, revoked or expired. */
  findUserByKey(key: string): Promise<Principal | null>
  /** Adds credits (exact decimal EUR, e.g. "10" or "0.1") to an org. */
  addCredits(orgId: string, amount: string | number, note?: string): Promise<Credits>
  /** Charges an org for usage (exact decimal EUR); may overdraw. */
  chargeCredits(orgId: string, amount: string | number, note?: string): Promise<Credits>
  /** An org's credits. */
  getCredits(orgId: string): Promise<Credits>
  /**
   * An org's credit ledger, oldest first (`order: 'desc'`: newest first): every grant and every charge (each request
   * charged to the credits with its generation id, each BYOK fee settlement, each admin charge), kept for ever
   * (docs/money.md). Without options, every entry; `since`/`until` (a time), `limit` and `after` (the id of the last
   * entry of the previous page) read a page.
   */
  ledger(orgId: string, options?: PageOptions): Promise<LedgerEntry[]>
  /**
   * An org's usage records, one per request served (model, provider, tokens, cost, cost_eur, BYOK, timing, attribution:
   * docs/usage.md), oldest first (`order: 'desc'`: newest first), kept `retention.usageDays`. `limit` defaults to 100
   * (at most 1000); `since`/`until` (a time) and `after` (the id of the last record of the previous page) as `ledger`.
   */
  usage(orgId: string, options?: PageOptions): Promise<UsageRecord[]>
  /**
   * An org's usage per UTC day, model and provider, split per user, end user or key with `groupBy`, over `from`..`to`
   * (UTC days, both included; default the last 30 days and today, at most `retention.usageDays` + 1 days): the rollups
   * GET /activity reads, newest day first, amounts exact (docs/usage.md#usage-per-user-from-your-code-adminactivity).
   */
  activity(orgId: string, query?: ActivityQuery): Promise<ActivityUsageRow[]>
  /**
   * Development only: makes sure `email` has a user (created with its org and `credits`, 10 EUR by default) and a live
   * key labelled "dev key", issuing and printing the key when there was none (or with `renew`). Refused (throws) when
   * NODE_ENV is "production". docs/first-key.md.
   */
  ensureDevKey(input: DevKeyInput): Promise<DevKey>
  /** Health of every provider and model this instance has called: breaker state, error rate, latency, throughput. */
  health(): HealthSnapshot[]
  /** Charges pending BYOK platform fees to credits, exactly once per request (one org, or every org). */
  settleByokFees(orgId?: string): Promise<{ settled_requests: number; charged_eur: string }>
  /** Removes expired records now (rate-limit windows, codes, consent answers, old usage…) and counts them by kind (docs/retention.md). */
  sweep(): Promise<SweepCounts>
}

/**
 * A key's credit limit as stored: null for none, else the positive exact decimal written canonically ("10.50" →
 * "10.5"), as the CLI's `--credit-limit` (docs/accounts.md). Anything else is a 400 naming
 * `creditLimit`, so that a bad limit fails here rather than on every later request of the key.
 */
function creditLimitOf(value: unknown): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string' && typeof value !== 'number')
    throw invalidRequest('creditLimit: must be a decimal string or number, or null for no limit', 'creditLimit')
  const units = toUnits(value, 'creditLimit')
  if (units <= 0n) throw invalidRequest('creditLimit: must be greater than 0 (null for no limit)', 'creditLimit')
  return fromUnits(units)
}

// A record with its rules, or without the field when none is left.
const withRules = <T extends object>(record: T, rules: ReturnType<typeof applyRulesPatch>): T => (rules ? { ...record, rules } : record)

const RESETS: readonly unknown[] = ['daily', 'weekly', 'monthly']

// A key's limit terms from issueKey's input: a management key takes none (it spends nothing).
function keyTermsOf(input: { creditLimit?: unknown; limitReset?: unknown; includeByokInLimit?: unknown; management?: unknown }) {
  if (input.limitReset !== undefined && input.limitReset !== null && !RESETS.includes(input.limitReset)) {
    throw invalidRequest('limitReset: must be "daily", "weekly", "monthly" or null', 'limitReset')
  }
  if (input.management === true && (input.creditLimit != null || input.limitReset != null || input.includeByokInLimit)) {
    throw invalidRequest('management: a management key spends nothing, so it takes no credit limit', 'management')
  }
  return {
    creditLimit: creditLimitOf(input.creditLimit),
    limitReset: (input.limitReset ?? null) as LimitReset | null,
    includeByokInLimit: input.includeByokInLimit === true,
  }
}

/** Builds the admin API over a gateway's stores. */
export function createAdmin(ctx: GatewayContext): GatewayAdmin {
  const { accounts, credits } = ctx
  const requireOrg = async (orgId: string) => {
    if (!(await accounts.getOrg(orgId))) throw notFound(`Org ${orgId} not found`)
  }
  return {
    createOrg: (input) => accounts.createOrg(input),
    getOrg: (id) => accounts.getOrg(id),
    createUser: (input) => accounts.createUser(input),
    getUser: (id) => accounts.getUser(id),
    findUserByEmail: (email) => accounts.findUserByEmail(email),
    updateUser: (id, patch) => accounts.updateUser(id, patch),
    async setUserLimits(userId, limits) {
      const patch = limitsPatchOf(limits)
      return accounts.changeUser(userId, (user) => withLimits(user, patch))
    },
    async setEndUserLimits(orgId, limits) {
      const patch = limits === null ? null : limitsPatchOf(limits)
      return accounts.changeOrg(orgId, ({ end_user_limits, ...org }) => {
        const next = patch === null ? {} : applyLimits(end_user_limits ?? {}, patch)
        return Object.keys(next).length ? { ...org, end_user_limits: next } : org
      })
    },
    async setResponseCache(target, setting) {
      const checked = setting === null ? undefined : responseCacheSettingOf(setting, ctx.options.cache.maxTtlSeconds)
      const apply = <T extends { response_cache?: ResponseCacheSetting }>({ response_cache: _, ...record }: T) =>
        (checked ? { ...record, response_cache: checked } : record) as T
      if ('orgId' in target) return accounts.changeOrg(target.orgId, apply)
      const record = await accounts.getKey(target.key)
      if (!record) throw notFound('API key not found')
      return accounts.updateKey(record.hash, apply)
    },
    async setOrgRules(orgId, rules) {
      const patch = parseInput(rulesPatchSchema, rules, 'body')
      return accounts.changeOrg(orgId, ({ rules: current, ...org }) => withRules(org, applyRulesPatch(current, patch)))
    },
    async setUserRules(userId, rules) {
      const patch = parseInput(rulesPatchSchema, rules, 'body')
      return accounts.changeUser(userId, ({ rules: current, ...user }) => withRules(user, applyRulesPatch(current, patch)))
    },
    async setKeyRules(keyOrHash, rules) {
      const patch = parseInput(rulesPatchSchema, rules, 'body')
      const record = await accounts.getKey(keyOrHash)
      if (!record) throw notFound('API key not found')
      return accounts.updateKey(record.hash, ({ rules: current, ...key }) => withRules(key, applyRulesPatch(current, patch)))
    },
    issueKey: async (input) =>
      accounts.issueKey({
        ...keyTermsOf(input),
        userId: input.userId,
        label: input.label,
        management: input.management === true,
        rules: input.rules === undefined ? undefined : applyRulesPatch(undefined, parseInput(rulesPatchSchema, input.rules, 'body')),
      }),
    async setOrgLimits(orgId, limits) {
      const patch = limits === null ? null : trafficPatchOf(limits)
      return accounts.changeOrg(orgId, ({ traffic_limits, ...org }) => {
        const next = patch === null ? {} : applyTraffic(traffic_limits, patch)
        return Object.keys(next).length ? { ...org, traffic_limits: next } : org
      })
    },
    async setKeyLimits(keyHash, limits) {
      const patch = limits === null ? null : trafficPatchOf(limits)
      return accounts.updateKey(keyHash.toLowerCase(), ({ traffic_limits, ...record }) => {
        const next = patch === null ? {} : applyTraffic(traffic_limits, patch)
        return Object.keys(next).length ? { ...record, traffic_limits: next } : record
      })
    },
    revokeKey: (keyOrHash) => accounts.revokeKey(keyOrHash),
    listKeys: (userId) => accounts.listKeys(userId),
    findUserByKey: (key) => accounts.resolveKey(key),
    async addCredits(orgId, amount, note) {
      await requireOrg(orgId)
      return credits.add(orgId, amount, note)
    },
    async chargeCredits(orgId, amount, note) {
      await requireOrg(orgId)
      await credits.chargeUnits(orgId, toUnits(amount), note ?? 'admin charge')
      return credits.get(orgId)
    },
    getCredits: (orgId) => credits.get(orgId),
    ledger: (orgId, options) => credits.ledger(orgId, options),
    usage: (orgId, options = {}) => ctx.usage.page(orgId, options, USAGE_PAGE),
    activity: (orgId, query = {}) => orgActivity(ctx, orgId, query),
    ensureDevKey: (input) => ensureDevKey(ctx, input),
    health: () => ctx.health.snapshot(),
    settleByokFees: (orgId) => settleByokFees(ctx, orgId),
    sweep: () => sweepExpired(ctx),
  }
}

const GROUPINGS: readonly unknown[] = ['user', 'end_user', 'api_key']

// A day option of admin.activity: a real UTC day, else a 400 naming it.
function dayOption(value: unknown, name: string, fallback: string): string {
  if (value === undefined) return fallback
  if (typeof value !== 'string' || Number.isNaN(dayStart(value))) throw invalidRequest(`${name}: must be a UTC day YYYY-MM-DD`, name)
  return value
}

// admin.activity: GET /activity's rows for any org, over a range of days within the rollups' retention (docs/usage.md).
async function orgActivity(ctx: GatewayContext, orgId: string, query: ActivityQuery): Promise<ActivityUsageRow[]> {
  if (query.groupBy !== undefined && !GROUPINGS.includes(query.groupBy)) throw invalidRequest('groupBy: must be "user", "end_user" or "api_key"', 'groupBy')
  for (const name of ['userId', 'endUser', 'apiKeyHash'] as const) {
    if (query[name] !== undefined && (typeof query[name] !== 'string' || !query[name])) throw invalidRequest(`${name}: must be a non-empty string`, name)
  }
  const to = dayOption(query.to, 'to', dayOf(ctx.now()))
  const from = dayOption(query.from, 'from', dayOf(dayStart(to) - 30 * 86_400_000))
  if (dayStart(from) > dayStart(to)) throw invalidRequest('from: must not be after to', 'from')
  const days = daysBetween(from, to)
  const most = ctx.options.retention.usageDays + 1
  if (days.length > most) throw invalidRequest(`from: at most ${most} days (rollups are kept retention.usageDays)`, 'from')
  const filter = { userId: query.userId, endUser: query.endUser, keyHash: query.apiKeyHash?.toLowerCase() }
  const rows = await readActivity(ctx.rollups, orgId, days, filter, query.groupBy)
  return rows.map((row) =>
    Object.assign(
      {
        date: row.date,
        model: row.model,
        model_permaslug: row.model_permaslug,
        provider: row.provider,
        provider_name: row.provider_name,
        requests: row.totals.requests,
        prompt_tokens: row.totals.prompt_tokens,
        completion_tokens: row.totals.completion_tokens,
        reasoning_tokens: row.totals.reasoning_tokens,
        usage: fromUnits(row.totals.usage),
        byok_usage_inference: fromUnits(row.totals.byok_usage_inference),
      },
      query.groupBy === 'user' ? { user_id: row.user_id } : undefined,
      query.groupBy === 'end_user' ? { end_user: row.end_user } : undefined,
      query.groupBy === 'api_key' ? { api_key_hash: row.key_hash } : undefined,
    ),
  )
}

const DEV_KEY_LABEL = 'dev key'

// admin.ensureDevKey: a first key for a developer, in any host (docs/first-key.md).
async function ensureDevKey(ctx: GatewayContext, input: DevKeyInput): Promise<DevKey> {
  const nodeEnv = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.NODE_ENV
  if (nodeEnv === 'production') {
    throw new GatewayError(
      403,
      'ensureDevKey is for development and refuses to run when NODE_ENV is "production": issue keys with admin.issueKey or `model-gateway keys create` (docs/first-key.md)',
    )
  }
  if (!input || typeof input.email !== 'string') throw invalidRequest('email: must be an email address', 'email')
  const label = input.label ?? DEV_KEY_LABEL
  if (typeof label !== 'string' || !label.trim()) throw invalidRequest('label: must not be empty', 'label')
  const grant = input.credits === undefined ? 10n * 10n ** 12n : toUnits(input.credits, 'credits')
  if (grant < 0n) throw invalidRequest('credits: must be greater than or equal to 0', 'credits')
  const { accounts, credits } = ctx

  let user = await accounts.findUserByEmail(input.email)
  let created = false
  if (!user) {
    try {
      user = await accounts.createUser({ email: input.email, orgName: input.orgName })
      created = true
    } catch (error) {
      // Another instance starting at the same time created it first: use theirs (once its record is written).
      if ((error as GatewayError).status !== 409) throw error
      for (let i = 0; i < 50 && !user; i++) {
        user = await accounts.findUserByEmail(input.email)
        if (!user) await new Promise((resolve) => setTimeout(resolve, 20))
      }
      if (!user) throw error
    }
    if (created && grant > 0n) await credits.add(user.org_id, fromUnits(grant), 'dev credits (ensureDevKey)')
  }
  const org = (await accounts.getOrg(user.org_id))!
  const now = ctx.now()
  const live = (await accounts.listKeys(user.id)).filter(
    (k) => k.label === label && !k.revoked && !k.disabled && !k.management && !(k.expires_at && Date.parse(k.expires_at) <= now),
  )
  const print = input.print === false ? undefined : typeof input.print === 'function' ? input.print : (text: string) => console.log(text)
  if (live.length && !input.renew) {
    print?.(
      `[model-gateway] ${user.email} already has a dev key (${live[0].hash.slice(0, 12)}…, issued ${live[0].created_at}); it was shown only when issued. A new one: ensureDevKey({ email, renew: true }) or \`model-gateway keys create --email ${user.email}\` (docs/first-key.md).`,
    )
    return { key: null, record: live[0], user, org, created, credits: await credits.get(org.id) }
  }
  for (const old of live) await accounts.revokeKey(old.hash)
  const { key, record } = await accounts.issueKey({ userId: user.id, label, creditLimit: null, limitReset: null, includeByokInLimit: false })
  const balance = await credits.get(org.id)
  print?.(
    `[model-gateway] Dev key for ${user.email} (org "${org.name}", balance ${balance.balance} EUR), shown only now:\n\n  ${key}\n\nSend it as "Authorization: Bearer <key>" to ${ctx.options.basePath}/… (GET ${ctx.options.basePath}/me answers who it is).`,
  )
  return { key, record, user, org, created, credits: balance }
}
