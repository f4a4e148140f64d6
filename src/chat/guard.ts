import { fromUnits, toUnits } from '../billing/money'
import type { GatewayContext } from '../context'
import { GatewayError } from '../errors'
import type { Principal } from '../stores/accounts'

/** Refuses with 402 before any upstream call when the org's balance is ≤ 0 or the key's credit limit is used up (decisions.md §4). */
export async function assertCanSpend(ctx: GatewayContext, principal: Principal): Promise<void> {
  const limit = principal.key.credit_limit
  const [balance, keyUsed] = await Promise.all([
    ctx.credits.balanceUnits(principal.org.id),
    limit ? ctx.atomic.getUnits(ctx.kv.key('credits', 'key', principal.key.hash, 'used')) : 0n,
  ])
  if (balance <= 0n) {
    throw new GatewayError(402, `Insufficient credits: the balance is ${fromUnits(balance)} EUR. Add credits to continue.`, { metadata: { balance: fromUnits(balance) } })
  }
  if (limit && keyUsed >= toUnits(limit)) {
    throw new GatewayError(402, `This API key's credit limit of ${limit} EUR is used up.`, { metadata: { credit_limit: limit, key_usage: fromUnits(keyUsed) } })
  }
}
