import type { GatewayContext } from '../context'
import { usageKeyParts } from './rules'

/**
 * Removes the BYOK settlement records that belong with usage records removed by retention (docs/retention.md): the
 * claim `byok-settled:<id>` and a still pending fee `byok-pending:<org>:<id>`. `usageKeys` are relative to `usage`.
 * Returns how many of each it removed.
 */
export async function removeByokClaims(ctx: GatewayContext, usageKeys: string[]): Promise<{ settled: number; pending: number }> {
  if (!usageKeys.length) return { settled: 0, pending: 0 }
  const [settled, pending] = await Promise.all([ctx.byokFees.settledIds(), ctx.byokFees.pendingKeys()])
  const settledIds = new Set(settled)
  const pendingKeys = new Set(pending)
  const settledRemovals: string[] = []
  const pendingRemovals: { org: string; id: string }[] = []
  for (const key of usageKeys) {
    const { org, id } = usageKeyParts(key)
    if (settledIds.has(id)) settledRemovals.push(id)
    if (pendingKeys.has(`${org}:${id}`)) pendingRemovals.push({ org, id })
  }
  await ctx.byokFees.removeRecords(settledRemovals, pendingRemovals)
  const settledCount = settledRemovals.length
  const pendingCount = pendingRemovals.length
  if (pendingCount) ctx.logger.warn('retention removed BYOK fees that were never settled, with their usage records', { count: pendingCount })
  return { settled: settledCount, pending: pendingCount }
}
