import { fromUnits, toUnits } from './billing/money'
import type { GatewayContext } from './context'
import { invalidRequest, notFound } from './errors'
import { settleByokFees } from './billing/byok-fees'
import { sweepExpired, type SweepCounts } from './maintenance/sweep'
import type { ApiKeyRecord, IssuedKey, LimitReset, Org, Principal, User } from './stores/accounts'
import type { Credits, LedgerEntry } from './stores/credits'
import type { HealthSnapshot } from './routing/health'

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
  /** An org's credit ledger, oldest first. */
  ledger(orgId: string): Promise<LedgerEntry[]>
  /** Health of every provider and model this instance has called: breaker state, error rate, latency, throughput. */
  health(): HealthSnapshot[]
  /** Charges pending BYOK platform fees to credits, exactly once per request (one org, or every org). */
  settleByokFees(orgId?: string): Promise<{ settled_requests: number; charged_eur: string }>
  /** Removes expired records now (rate-limit windows, codes, consent answers, old usage…) and counts them by kind (docs/retention.md). */
  sweep(): Promise<SweepCounts>
}

/**
 * A key's credit limit as stored: null for none, else the positive exact decimal written canonically ("10.50" →
 * "10.5"), as the CLI's `--credit-limit` (README "Accounts, keys and credits"). Anything else is a 400 naming
 * `creditLimit`, so that a bad limit fails here rather than on every later request of the key.
 */
function creditLimitOf(value: unknown): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string' && typeof value !== 'number') throw invalidRequest('creditLimit: must be a decimal string or number, or null for no limit', 'creditLimit')
  const units = toUnits(value, 'creditLimit')
  if (units <= 0n) throw invalidRequest('creditLimit: must be greater than 0 (null for no limit)', 'creditLimit')
  return fromUnits(units)
}

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
    issueKey: async (input) => accounts.issueKey({ ...keyTermsOf(input), userId: input.userId, label: input.label, management: input.management === true }),
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
    ledger: (orgId) => credits.ledger(orgId),
    health: () => ctx.health.snapshot(),
    settleByokFees: (orgId) => settleByokFees(ctx, orgId),
    sweep: () => sweepExpired(ctx),
  }
}
