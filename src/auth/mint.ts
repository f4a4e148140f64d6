import { limitLeft } from '../billing/key-usage'
import { fromUnits, toUnits } from '../billing/money'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest } from '../errors'
import type { ApiKeyRecord, KeyAncestor, LimitReset, Principal } from '../stores/account-types'
import { ancestorOf, isUsableKey } from '../stores/accounts'
import type { MintTerms } from '../stores/codes'
import { tooManyKeys } from '../stores/key-cap'

/** How many keys deep a chain of keys minting keys may go. */
export const MAX_MINT_DEPTH = 8

/** What a key asks of the key it mints (the optional fields of the code-creation body). */
export interface MintRequest {
  limit?: string | number
  /** null: no expiry asked. */
  expires_at?: string | null
  key_label?: string
  /** The limit starts over each UTC day, week or month (OpenRouter's usage_limit_type). */
  usage_limit_type?: LimitReset
}

const usedUp = () => new GatewayError(402, "This API key's credit limit is used up: it cannot mint a key")

/**
 * The terms of a key minted by `principal`'s key (docs/keys.md), checked when the code is created: a key at its
 * credit limit, at the end of a chain MAX_MINT_DEPTH deep, or of an org at its cap of live keys, mints nothing.
 */
export async function mintTerms(ctx: GatewayContext, principal: Principal, asked: MintRequest): Promise<MintTerms> {
  const parent = principal.key
  if ((parent.ancestors?.length ?? 0) + 1 >= MAX_MINT_DEPTH) throw new GatewayError(403, `Keys minted by minted keys may nest at most ${MAX_MINT_DEPTH} deep`)
  const limit = asked.limit === undefined ? undefined : toUnits(asked.limit, 'limit')
  if (limit !== undefined && limit <= 0n) throw invalidRequest('limit: must be greater than 0', 'limit')
  const expiresAt = asked.expires_at == null ? undefined : Date.parse(asked.expires_at)
  if (expiresAt !== undefined && !(expiresAt > ctx.now())) throw invalidRequest('expires_at: must be a future ISO 8601 time', 'expires_at')
  if ((await remainingLimit(ctx, [parent, ...(parent.ancestors ?? [])])) === 0n) throw usedUp()
  // An org at its cap of live keys is told now, not only when the code is exchanged (where the cap is enforced).
  const max = ctx.options.keys.maxPerOrg
  if ((await ctx.accounts.liveKeyCount(principal.org.id)) >= max) throw tooManyKeys(max)
  return {
    parent_hash: parent.hash,
    ...(limit !== undefined ? { limit: fromUnits(limit) } : {}),
    ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
    ...(asked.key_label !== undefined ? { label: asked.key_label } : {}),
    ...(asked.usage_limit_type !== undefined ? { limit_reset: asked.usage_limit_type } : {}),
  }
}

// The least credit left under the limits of these keys (null: none of them has a limit), never below 0; a limit that
// resets has what is left of its current window (docs/keys.md).
async function remainingLimit(ctx: GatewayContext, keys: KeyAncestor[]): Promise<bigint | null> {
  const now = ctx.now()
  let least: bigint | null = null
  for (const key of keys) {
    const left = await limitLeft(ctx, key, now)
    if (left !== null && (least === null || left < least)) least = left
  }
  return least
}

/**
 * What the exchanged key is issued with, from its code's terms: never more than its parent (docs/keys.md): a credit
 * limit at most what the parent's limits have left (reset each day, week or month when asked), an expiry no later than
 * the parent's, and the parent's chain, so
 * its spending and its requests count against every key above it. Null when the parent, or any key above it, was
 * revoked, deleted or disabled or has expired since (its codes are void: docs/pkce.md#the-exchange).
 */
export async function mintedKeyInput(
  ctx: GatewayContext,
  terms: MintTerms,
): Promise<{ creditLimit: string | null; limitReset?: LimitReset; expiresAt?: number; ancestors: KeyAncestor[]; label?: string } | null> {
  const parent: ApiKeyRecord | null = await ctx.accounts.getKey(terms.parent_hash)
  if (!parent || !isUsableKey(parent, ctx.now())) return null
  const above = parent.ancestors?.length ? await ctx.accounts.currentAncestors(parent.ancestors) : []
  if (above === null) return null
  const parentExpiry = parent.expires_at ? Date.parse(parent.expires_at) : undefined
  const ancestors: KeyAncestor[] = [ancestorOf(parent), ...above]
  const left = await remainingLimit(ctx, ancestors)
  const asked = terms.limit === undefined ? null : toUnits(terms.limit)
  const limit = left === null ? asked : asked === null || left < asked ? left : asked
  const expiries = [terms.expires_at, parentExpiry].filter((t): t is number => t !== undefined)
  return {
    creditLimit: limit === null ? null : fromUnits(limit),
    // A limit per day, week or month (its spending still counts against every key above it, in all).
    ...(terms.limit_reset && limit !== null ? { limitReset: terms.limit_reset } : {}),
    ...(expiries.length ? { expiresAt: Math.min(...expiries) } : {}),
    ancestors,
    ...(terms.label !== undefined ? { label: terms.label } : {}),
  }
}
