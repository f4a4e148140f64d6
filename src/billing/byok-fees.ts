import type { GatewayContext } from '../context'
import type { FeeClaim } from '../stores/byok-fees'
import { newId } from '../crypto/keys'
import { decimal, multiply, toLedgerUnits } from './decimal'
import { fromUnits } from './money'
import type { RequestCost } from './cost'

/** The BYOK usage period: the calendar month in UTC (docs/byok.md#fees-and-settlement). */
export function periodOf(nowMs: number): { start: number; end: number; id: string } {
  const date = new Date(nowMs)
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
  const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
  return { start, end, id: new Date(start).toISOString().slice(0, 7) }
}

/** The platform fee on an amount in ledger units: the fee rate × the amount, rounded once (docs/byok.md). */
export function platformFee(ctx: GatewayContext, units: bigint): bigint {
  return toLedgerUnits(multiply({ coefficient: units, scale: 12 }, decimal(ctx.options.byok.platformFeeRate)))
}

/** The fee a BYOK request owes: nothing within the period's free allowance, then the fee rate × its upstream cost. */
export async function assessByokFee(
  ctx: GatewayContext,
  orgId: string,
  cost: RequestCost,
  counted: boolean,
): Promise<{ free: boolean; units: bigint; eurUnits: bigint }> {
  if (!counted) return { free: true, units: 0n, eurUnits: 0n }
  const { freeRequestAllowance } = ctx.options.byok
  // The period's counter expires a day after the period ends where storage has TTLs (docs/retention.md).
  const now = ctx.now()
  const period = periodOf(now)
  const n = await ctx.byokFees.countRequest(orgId, period.id, Math.ceil((period.end - now) / 1000) + 86_400)
  if (n <= freeRequestAllowance) return { free: true, units: 0n, eurUnits: 0n }
  return { free: false, units: platformFee(ctx, cost.units), eurUnits: platformFee(ctx, cost.eurUnits) }
}

/**
 * Settles pending BYOK fees (docs/byok.md): each pending request is claimed and its fee added to the org's used
 * credits in one atomic step, so of concurrent settlements (across instances too) exactly one charges it, and a
 * settlement stopped by a storage error leaves each fee either charged and claimed or neither: a retry charges
 * exactly what is still owed. The org's ledger gets one entry for what this run charged, after the charges.
 */
export async function settleByokFees(ctx: GatewayContext, orgId?: string): Promise<{ settled_requests: number; charged_eur: string }> {
  const orgs = orgId ? [orgId] : await ctx.byokFees.orgs()
  const run = newId() // names this run's claims, to tell after an error whether a claim (and its charge) was ours
  let settled = 0
  let charged = 0n
  for (const org of orgs) {
    let sum = 0n
    try {
      for (const id of await ctx.byokFees.pendingIds(org)) {
        const pending = await ctx.byokFees.pending(org, id)
        if (!pending) continue
        const fee = toLedgerUnits(decimal(pending.fee_eur))
        if (await claimFee(ctx, org, id, { at: new Date(ctx.now()).toISOString(), fee_eur: pending.fee_eur, run }, fee)) {
          sum += fee
          settled++
        }
        await ctx.byokFees.removePending(org, id)
      }
    } finally {
      charged += sum
      if (sum > 0n) await recordCharge(ctx, org, sum)
    }
  }
  return { settled_requests: settled, charged_eur: fromUnits(charged) }
}

// Claims one request's fee and charges it in one atomic step; true when this run did. When the step fails, it may
// still have happened (a reply lost after the script ran): a stored claim says who made it. This run's counts as
// done (and in the ledger line); another's as settled by it; none, or no answer, stops the run with the error, the
// fee still pending for the next one.
async function claimFee(ctx: GatewayContext, orgId: string, id: string, claim: FeeClaim, fee: bigint): Promise<boolean> {
  try {
    return await ctx.byokFees.claimAndCharge(orgId, id, claim, fee)
  } catch (error) {
    const stored = await ctx.byokFees.claimOf(id).catch(() => null)
    if (!stored) throw error
    return stored.run === claim.run
  }
}

// The ledger line of a settlement, written after the charges it sums: the money is already exact in the counter,
// so a failed write is logged, never retried into a second charge.
async function recordCharge(ctx: GatewayContext, orgId: string, units: bigint): Promise<void> {
  try {
    await ctx.credits.recordCharge(orgId, units, 'BYOK platform fees')
  } catch (error) {
    ctx.logger.error('BYOK fees were charged but their ledger entry could not be written', {
      org_id: orgId,
      amount: fromUnits(units),
      error: (error as Error).message,
    })
  }
}

/** The current period's BYOK figures of an org (docs/byok.md#fees-and-settlement); they reconcile by construction. */
export async function byokUsage(ctx: GatewayContext, orgId: string) {
  const period = periodOf(ctx.now())
  const records = (await ctx.usage.list(orgId, { from: period.start, to: period.end })).filter((r) => r.is_byok && r.byok_counted)
  const settledFlags = await Promise.all(records.map((r) => ctx.byokFees.isSettled(r.id)))
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
