import type { GatewayContext } from '../context'
import { decimal, multiply, toLedgerUnits } from './decimal'
import { fromUnits } from './money'
import type { RequestCost } from './cost'

/** The BYOK usage period: the calendar month in UTC (decisions.md §7). */
export function periodOf(nowMs: number): { start: number; end: number; id: string } {
  const date = new Date(nowMs)
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
  const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
  return { start, end, id: new Date(start).toISOString().slice(0, 7) }
}

/** The fee a BYOK request owes: nothing within the period's free allowance, then the fee rate × its upstream cost. */
export async function assessByokFee(ctx: GatewayContext, orgId: string, cost: RequestCost, counted: boolean): Promise<{ free: boolean; units: bigint; eurUnits: bigint }> {
  if (!counted) return { free: true, units: 0n, eurUnits: 0n }
  const { freeRequestAllowance, platformFeeRate } = ctx.options.byok
  const n = await ctx.atomic.increment(ctx.kv.key('byok-requests', orgId, periodOf(ctx.now()).id), 1)
  if (n <= freeRequestAllowance) return { free: true, units: 0n, eurUnits: 0n }
  const rate = decimal(platformFeeRate)
  const scaled = (units: bigint) => toLedgerUnits(multiply({ coefficient: units, scale: 12 }, rate))
  return { free: false, units: scaled(cost.units), eurUnits: scaled(cost.eurUnits) }
}

/** Notes a counted BYOK request as pending settlement. */
export async function notePending(ctx: GatewayContext, orgId: string, recordId: string, feeEurUnits: bigint): Promise<void> {
  await Promise.all([
    ctx.kv.set({ id: recordId, fee_eur: fromUnits(feeEurUnits) }, 'byok-pending', orgId, recordId),
    ctx.kv.set({ org_id: orgId }, 'byok-orgs', orgId),
  ])
}

/**
 * Settles pending BYOK fees: each pending request is claimed once in storage (of concurrent settlements, across
 * instances too, exactly one wins it), and the org is charged the sum of the fees it claimed.
 */
export async function settleByokFees(ctx: GatewayContext, orgId?: string): Promise<{ settled_requests: number; charged_eur: string }> {
  const orgs = orgId ? [orgId] : await ctx.kv.list('byok-orgs')
  let settled = 0
  let charged = 0n
  for (const org of orgs) {
    let sum = 0n
    for (const id of await ctx.kv.list('byok-pending', org)) {
      const pending = await ctx.kv.get<{ fee_eur: string }>('byok-pending', org, id)
      if (!pending) continue
      const at = new Date(ctx.now()).toISOString()
      if (await ctx.atomic.setIfAbsent(ctx.kv.key('byok-settled', id), { at, fee_eur: pending.fee_eur })) {
        sum += toLedgerUnits(decimal(pending.fee_eur))
        settled++
      }
      await ctx.kv.remove('byok-pending', org, id)
    }
    if (sum > 0n) await ctx.credits.chargeUnits(org, sum, 'BYOK platform fees')
    charged += sum
  }
  return { settled_requests: settled, charged_eur: fromUnits(charged) }
}

/** The current period's BYOK figures of an org (api.md 2.6); they reconcile by construction. */
export async function byokUsage(ctx: GatewayContext, orgId: string) {
  const period = periodOf(ctx.now())
  const records = (await ctx.usage.list(orgId, { from: period.start, to: period.end })).filter((r) => r.is_byok && r.byok_counted)
  const settledFlags = await Promise.all(records.map((r) => ctx.storage.hasItem(ctx.kv.key('byok-settled', r.id))))
  const { freeRequestAllowance, platformFeeRate } = ctx.options.byok
  let upstream = 0n
  let fee = 0n
  let feeCharged = 0n
  records.forEach((record, i) => {
    const recordFee = toLedgerUnits(decimal(record.cost_eur))
    upstream += toLedgerUnits(decimal(record.upstream_cost_eur ?? '0'))
    fee += recordFee
    if (settledFlags[i]) feeCharged += recordFee
  })
  const successful = records.length
  const settled = settledFlags.filter(Boolean).length
  const allowanceUsed = records.filter((r) => r.byok_free).length
  return {
    period_start: new Date(period.start).toISOString(),
    period_end: new Date(period.end).toISOString(),
    successful_requests: successful,
    settled_requests: settled,
    pending_settlement_requests: successful - settled,
    free_request_allowance: freeRequestAllowance,
    allowance_used: allowanceUsed,
    allowance_remaining: Math.max(0, freeRequestAllowance - allowanceUsed),
    chargeable_requests: successful - allowanceUsed,
    estimated_upstream_cost_eur: fromUnits(upstream),
    service_platform_fee_eur: fromUnits(fee),
    service_platform_fee_charged_eur: fromUnits(feeCharged),
    service_platform_fee_pending_eur: fromUnits(fee - feeCharged),
    platform_fee_rate: platformFeeRate,
  }
}
