import type { GatewayContext } from '../context'
import { GatewayError } from '../errors'
import type { KeyAncestor, Principal } from '../stores/account-types'
import type { Budget, CounterCharge, WrittenRecord } from '../stores/engine-types'
import { keyBudget, keyCharges, resetWindow } from './key-usage'
import { fromUnits } from './money'
import { RecordNotWrittenError } from '../stores/record-not-written'
import { isRelease } from './settlement-retries'
import { keepRenewed } from './hold-renewals'
import { type LimitBudget, limitBudgets, limitCharges, limitRefusal } from './spend-limits'

/** A hold on an org's credits (and its key's credit limits) for one request, replaced by its exact charge when it ends (docs/money.md). */
export interface Hold {
  /** The EUR ledger units held. */
  readonly units: bigint
  /**
   * Replaces the hold by the exact charge in EUR ledger units, and adds to the usage counters of the request's key and
   * the keys above it (docs/keys.md); only the first call (or release) counts. A request a customer's own key served
   * (BYOK) charges the org nothing now and gives `byok`: the fee its key's usage counts and the upstream cost. `records`
   * (the charge's ledger entry, the usage record and its generation pointer) are written in the same step; `once` (the
   * full key of one of them) makes the step run once however often it is sent (HoldOps.settle). `tokens` (the
   * provider's prompt and completion tokens) count against the tokens limits (docs/limits.md#tokens-spend-and-requests-in-flight);
   * `counters` (the day's rollups: docs/usage.md) are added in the same step.
   */
  settle(chargeEurUnits: bigint, options?: SettleOptions): Promise<void>
  /**
   * Releases the hold without charging anything (no provider served the request); a no-op once settled. A settlement
   * or release the storage does not take is kept and tried again until it lands (settle and release then resolve),
   * except a charge on the in-process engine, which throws (docs/operations.md#settlements-that-fail).
   */
  release(): Promise<void>
}

/** What a hold's settlement writes and counts besides the charge (Hold.settle). */
export interface SettleOptions {
  byok?: ByokCharge
  records?: WrittenRecord[]
  once?: string
  tokens?: number
  counters?: CounterCharge[]
}

/** What a request a customer's own provider key served adds to its key's usage: the platform fee, and the upstream cost. */
export interface ByokCharge {
  feeEurUnits: bigint
  upstreamEurUnits: bigint
}

/** The keys whose limits and usage a principal's request counts against: its own and those of the keys that minted it. */
const keysOf = (principal: Principal): KeyAncestor[] => [principal.key, ...(principal.key.ancestors ?? [])]

/**
 * The budgets a principal's request counts against at `now`: the org's credits, its key's credit limit, those of
 * the keys that minted it (a limit that resets counts the current window's spending: docs/keys.md), then its user's
 * and end user's limits (docs/first-party.md#budgets-for-users-and-end-users), and the tokens, spend and requests
 * limits of its key and org, a request holding `maxTokens` on the tokens ones
 * (docs/limits.md#tokens-spend-and-requests-in-flight). `keys[i]` is the key of budget i
 * (null for the others), `limits[i]` the user's or end user's limit of budget i (null for the others).
 */
export function budgetsOf(
  ctx: GatewayContext,
  principal: Principal,
  now = ctx.now(),
  maxTokens = 0,
): { budgets: Budget[]; kinds: ('org' | 'key' | 'limit')[]; keys: (KeyAncestor | null)[]; limits: (LimitBudget | null)[] } {
  const orgId = principal.org.id
  const budgets: Budget[] = [ctx.holds.orgBudget(orgId)]
  const kinds: ('org' | 'key' | 'limit')[] = ['org']
  const keys: (KeyAncestor | null)[] = [null]
  const limits: (LimitBudget | null)[] = [null]
  for (const key of keysOf(principal)) {
    const budget = keyBudget(ctx, key, now)
    if (!budget) continue
    budgets.push(budget)
    kinds.push('key')
    keys.push(key)
    limits.push(null)
  }
  for (const limit of limitBudgets(ctx, principal, now, maxTokens)) {
    budgets.push(limit.budget)
    kinds.push('limit')
    keys.push(null)
    limits.push(limit)
  }
  return { budgets, kinds, keys, limits }
}

/** What a request may cost at most, and how to explain a refusal. */
export interface MaxCost {
  /** The most the request can cost, in EUR ledger units. */
  eurUnits: bigint
  /** The completion tokens that `available` EUR units could pay for (named in the 402), when the request has any. */
  affordableTokens?: (available: bigint) => number
  /** The completion tokens the hold assumes at most. */
  maxTokens?: number
  /**
   * The most the request can cost when a customer's own key (BYOK) serves it and its upstream cost counts too (upstream
   * cost plus fee): what a key whose limit includes BYOK usage holds. Absent: `eurUnits`.
   */
  withByokEurUnits?: bigint
  /**
   * The most tokens the request may use (its prompt estimate and its most completion tokens), held on the tokens limits
   * (docs/limits.md#tokens-spend-and-requests-in-flight); absent: 1.
   */
  maxTotalTokens?: number
}

/**
 * Places the hold of a request's maximum cost before any upstream call (docs/money.md): atomically against the org's
 * balance minus its live holds and against each credit limit on the way; 402 when one cannot cover it, naming the
 * completion tokens it could afford.
 */
export async function placeHold(ctx: GatewayContext, principal: Principal, id: string, cost: MaxCost): Promise<Hold> {
  const now = ctx.now()
  const { budgets, kinds, keys, limits } = budgetsOf(ctx, principal, now, cost.maxTotalTokens)
  const withByok = cost.withByokEurUnits
  if (withByok !== undefined && withByok > cost.eurUnits)
    keys.forEach((key, i) => {
      if (key?.include_byok_in_limit) budgets[i].units = withByok
    })
  let result: Awaited<ReturnType<GatewayContext['holds']['place']>>
  try {
    result = await ctx.holds.place({ id, units: cost.eurUnits, now, expiresAt: now + ctx.options.holdTtlSeconds * 1000, budgets })
  } catch (error) {
    // The command may have run all the same (a reply lost, a wait given up): the hold it may have left would refuse the
    // org's next requests until it expires, so its release is kept and tried until the storage answers.
    await ctx.settlements.keep({ id, kind: 'release', org_id: principal.org.id, input: { id, budgets, charges: budgets.map(() => 0n) } }, error)
    throw error
  }
  if (!result.ok && limits[result.index]) throw limitRefusal(limits[result.index]!, result.available, budgets[result.index].units ?? cost.eurUnits, now)
  if (!result.ok)
    throw insufficient(
      result.available,
      { ...cost, eurUnits: budgets[result.index].units ?? cost.eurUnits },
      kinds[result.index] as 'org' | 'key',
      principal,
      keys[result.index],
      now,
    )
  ctx.metrics?.holds(1)
  let done = false
  const stopRenewing = keepRenewed(ctx, id, budgets)
  const settle = async (charge: bigint, options: SettleOptions = {}) => {
    const { byok, records, once, tokens = 0 } = options
    if (done) return
    done = true
    stopRenewing()
    ctx.metrics?.holds(-1)
    // The org's credits take the charge; the keys' usage counters (among them the keys' budgets) and the user's and end
    // user's are charged in the windows of the time the request ends, so a request that spans midnight counts in the
    // new day; a request a provider served counts in the minute it ends for the requests per minute.
    const usage = { usage: byok ? byok.feeEurUnits : charge, byok: byok ? byok.upstreamEurUnits : 0n }
    const endedAt = ctx.now()
    const served = charge !== 0n || byok !== undefined || Boolean(records?.length)
    const input = {
      id,
      budgets,
      charges: budgets.map((_, i) => (i === 0 ? charge : 0n)),
      counters: [
        ...keyCharges(ctx, keysOf(principal), usage, endedAt),
        ...limitCharges(ctx, principal, usage.usage, served, endedAt, tokens),
        ...(options.counters ?? []),
      ],
      records,
      once,
    }
    try {
      await ctx.holds.settle(input)
    } catch (error) {
      // A settlement the storage did not take is kept and tried again until it lands, exactly once (its `once`):
      // docs/operations.md#settlements-that-fail. Not a charge on the in-process engine, whose step may have been
      // partly applied; nor a charge made whose record was not written.
      const kind = isRelease(input) ? 'release' : 'charge'
      if (error instanceof RecordNotWrittenError || !ctx.settlements.retries(kind)) throw error
      await ctx.settlements.keep({ id, kind, org_id: principal.org.id, input }, error)
    }
  }
  return { units: cost.eurUnits, settle, release: () => settle(0n) }
}

function insufficient(available: bigint, cost: MaxCost, kind: 'org' | 'key', principal: Principal, key: KeyAncestor | null, now: number): GatewayError {
  const affordable = cost.affordableTokens && available > 0n ? Math.max(0, cost.affordableTokens(available)) : 0
  const tokens =
    cost.maxTokens !== undefined
      ? ` You asked for up to ${cost.maxTokens} completion tokens, but can afford ${affordable}: lower max_tokens${kind === 'org' ? ' or add credits' : ''}.`
      : ''
  const resetsAt = key?.limit_reset ? new Date(resetWindow(key.limit_reset, now).end).toISOString() : undefined
  const subject =
    kind === 'org'
      ? `Insufficient credits: this request may cost up to ${fromUnits(cost.eurUnits)} EUR, and ${fromUnits(available > 0n ? available : 0n)} EUR is available (balance less requests in flight).`
      : `This API key's credit limit cannot cover this request: it may cost up to ${fromUnits(cost.eurUnits)} EUR, and ${fromUnits(available > 0n ? available : 0n)} EUR of the limit is left${resetsAt ? ` (its ${key!.limit_reset} limit starts over at ${resetsAt})` : ''}.`
  return new GatewayError(402, subject + tokens, {
    metadata: {
      required: fromUnits(cost.eurUnits),
      available: fromUnits(available),
      ...(cost.maxTokens !== undefined ? { requested_tokens: cost.maxTokens, affordable_tokens: affordable } : {}),
      ...(kind === 'key' ? { credit_limit: key?.credit_limit ?? principal.key.credit_limit } : {}),
      ...(resetsAt ? { limit_reset: key!.limit_reset, limit_resets_at: resetsAt } : {}),
    },
  })
}

/** Releases a hold, logging (never throwing) when storage fails and the release could not be kept for retry: the hold then expires by itself. */
export async function releaseOrLog(ctx: GatewayContext, hold: Hold, requestId: string): Promise<void> {
  await hold.release().catch((error) => ctx.logger.error('releasing a hold failed; it expires by itself', { request_id: requestId, error: String(error) }))
}
