import type { GatewayContext } from '../context'
import { GatewayError } from '../errors'
import type { Principal } from '../stores/accounts'
import type { Budget } from '../stores/holds'
import { fromUnits, toUnits } from './money'

/** A hold on an org's credits (and its key's credit limits) for one request, replaced by its exact charge when it ends (docs/money.md). */
export interface Hold {
  /** The EUR ledger units held. */
  readonly units: bigint
  /** Replaces the hold by the exact charge in EUR ledger units; only the first call (or release) counts. */
  settle(chargeEurUnits: bigint): Promise<void>
  /** Releases the hold without charging anything (no provider served the request); a no-op once settled. */
  release(): Promise<void>
}

/** Storage key of a key's spent-credits counter (what its credit limit is checked against). */
export const keyUsedKey = (ctx: GatewayContext, keyHash: string): string => ctx.kv.key('credits', 'key', keyHash, 'used')

/** The budgets a principal's request counts against: the org's credits, its key's credit limit, and those of the keys that minted it. */
export function budgetsOf(ctx: GatewayContext, principal: Principal): { budgets: Budget[]; kinds: ('org' | 'key')[] } {
  const orgId = principal.org.id
  const budgets: Budget[] = [{ usedKey: ctx.kv.key('credits', orgId, 'used'), holdsKey: ctx.kv.key('holds', 'org', orgId), limit: { key: ctx.kv.key('credits', orgId, 'granted') } }]
  const kinds: ('org' | 'key')[] = ['org']
  for (const key of [principal.key, ...(principal.key.ancestors ?? [])]) {
    if (!key.credit_limit) continue
    budgets.push({ usedKey: keyUsedKey(ctx, key.hash), holdsKey: ctx.kv.key('holds', 'key', key.hash), limit: { units: toUnits(key.credit_limit, 'credit_limit') } })
    kinds.push('key')
  }
  return { budgets, kinds }
}

/** What a request may cost at most, and how to explain a refusal. */
export interface MaxCost {
  /** The most the request can cost, in EUR ledger units. */
  eurUnits: bigint
  /** The completion tokens that `available` EUR units could pay for (named in the 402), when the request has any. */
  affordableTokens?: (available: bigint) => number
  /** The completion tokens the hold assumes at most. */
  maxTokens?: number
}

/**
 * Places the hold of a request's maximum cost before any upstream call (docs/money.md): atomically against the org's
 * balance minus its live holds and against each credit limit on the way; 402 when one cannot cover it, naming the
 * completion tokens it could afford.
 */
export async function placeHold(ctx: GatewayContext, principal: Principal, id: string, cost: MaxCost): Promise<Hold> {
  const { budgets, kinds } = budgetsOf(ctx, principal)
  const now = ctx.now()
  const result = await ctx.holds.place({ id, units: cost.eurUnits, now, expiresAt: now + ctx.options.holdTtlSeconds * 1000, budgets })
  if (!result.ok) throw insufficient(result.available, cost, kinds[result.index], principal)
  let done = false
  const settle = async (charge: bigint) => {
    if (done) return
    done = true
    await ctx.holds.settle({ id, budgets, charges: budgets.map(() => charge) })
  }
  return { units: cost.eurUnits, settle, release: () => settle(0n) }
}

function insufficient(available: bigint, cost: MaxCost, kind: 'org' | 'key', principal: Principal): GatewayError {
  const affordable = cost.affordableTokens && available > 0n ? Math.max(0, cost.affordableTokens(available)) : 0
  const tokens = cost.maxTokens !== undefined
    ? ` You asked for up to ${cost.maxTokens} completion tokens, but can afford ${affordable}: lower max_tokens${kind === 'org' ? ' or add credits' : ''}.`
    : ''
  const subject = kind === 'org'
    ? `Insufficient credits: this request may cost up to ${fromUnits(cost.eurUnits)} EUR, and ${fromUnits(available > 0n ? available : 0n)} EUR is available (balance less requests in flight).`
    : `This API key's credit limit cannot cover this request: it may cost up to ${fromUnits(cost.eurUnits)} EUR, and ${fromUnits(available > 0n ? available : 0n)} EUR of the limit is left.`
  return new GatewayError(402, subject + tokens, {
    metadata: {
      required: fromUnits(cost.eurUnits),
      available: fromUnits(available),
      ...(cost.maxTokens !== undefined ? { requested_tokens: cost.maxTokens, affordable_tokens: affordable } : {}),
      ...(kind === 'key' ? { credit_limit: principal.key.credit_limit } : {}),
    },
  })
}

/** Releases a hold, logging (never throwing) when storage fails: the hold then expires by itself. */
export async function releaseOrLog(ctx: GatewayContext, hold: Hold, requestId: string): Promise<void> {
  await hold.release().catch((error) => ctx.logger.error('releasing a hold failed; it expires by itself', { request_id: requestId, error: String(error) }))
}
