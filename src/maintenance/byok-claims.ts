import type { GatewayContext } from '../context'
import { usageKeyParts } from './rules'

/**
 * Removes the BYOK settlement records that belong with usage records removed by retention (docs/retention.md): the
 * claim `byok-settled:<id>` and a still pending fee `byok-pending:<org>:<id>`. `usageKeys` are relative to `usage`.
 * Returns how many of each it removed.
 */
export async function removeByokClaims(ctx: GatewayContext, usageKeys: string[]): Promise<{ settled: number; pending: number }> {
  if (!usageKeys.length) return { settled: 0, pending: 0 }
  const [settled, pending] = await Promise.all([ctx.kv.list('byok-settled'), ctx.kv.list('byok-pending')])
  const settledIds = new Set(settled)
  const pendingKeys = new Set(pending)
  const removals: string[] = []
  let settledCount = 0
  let pendingCount = 0
  for (const key of usageKeys) {
    const { org, id } = usageKeyParts(key)
    if (settledIds.has(id)) {
      removals.push(ctx.kv.key('byok-settled', id))
      settledCount++
    }
    if (pendingKeys.has(`${org}:${id}`)) {
      removals.push(ctx.kv.key('byok-pending', org, id))
      pendingCount++
    }
  }
  for (let i = 0; i < removals.length; i += 32) await Promise.all(removals.slice(i, i + 32).map((key) => ctx.storage.removeItem(key)))
  if (pendingCount) ctx.logger.warn('retention removed BYOK fees that were never settled, with their usage records', { count: pendingCount })
  return { settled: settledCount, pending: pendingCount }
}
