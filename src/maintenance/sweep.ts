import type { GatewayContext } from '../context'
import { removeByokClaims } from './byok-claims'
import { expiryRules, type ExpiryRule, type SweepKind } from './rules'

/** Records one sweep removed, by kind; `byok_claims` are the BYOK settlement records removed with usage records. */
export type SweepCounts = Record<SweepKind, number> & { byok_claims: number }

/** Options of one sweep. */
export interface SweepOptions {
  /** At most this many deletions per kind in one run; the next run goes on. Default 1000. */
  limit?: number
}

/** Deletions per kind in one run, unless told otherwise. */
export const DEFAULT_SWEEP_LIMIT = 1000
/** Records read, or removed, at once. */
const BATCH = 32

async function inBatches<T>(items: T[], work: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH) await Promise.all(items.slice(i, i + BATCH).map(work))
}

/** The expired keys of one rule (relative to its prefix), oldest first where keys tell their age, at most `limit`. */
async function findExpired(ctx: GatewayContext, rule: ExpiryRule, keys: string[], now: number, limit: number): Promise<string[]> {
  const dated: { key: string; at: number }[] = []
  const unread: string[] = []
  for (const key of keys) {
    const at = rule.fromKey?.(key)
    if (at === undefined) {
      if (rule.expiredRecord) unread.push(key)
    } else if (at <= now) {
      dated.push({ key, at })
    }
  }
  const expired = dated
    .sort((a, b) => a.at - b.at)
    .slice(0, limit)
    .map((d) => d.key)
  for (let i = 0; i < unread.length && expired.length < limit; i += BATCH) {
    const batch = unread.slice(i, i + BATCH)
    const records = await Promise.all(batch.map((key) => ctx.expiring.read(rule.kind, key)))
    batch.forEach((key, j) => {
      if (expired.length < limit && records[j] !== null && rule.expiredRecord!(records[j], now)) expired.push(key)
    })
  }
  return expired
}

// Removes expired records through their rule's own removal; one that fails stays for the next run. How many it removed.
async function removeEach(ctx: GatewayContext, rule: ExpiryRule, expired: string[]): Promise<number> {
  let removed = 0
  await inBatches(expired, async (key) => {
    const done = await rule.remove!(key).catch((error) => {
      ctx.logger.warn('sweep: could not remove an expired record; the next run tries again', { kind: rule.kind, key, error: String(error) })
      return false
    })
    if (done) removed++
  })
  return removed
}

/**
 * Removes expired records that the storage does not expire by itself (docs/retention.md): rate-limit windows,
 * authorization codes, consent answers, past BYOK request counters, usage records older than the retention with
 * their BYOK settlement records, generation pointers and usage rollups (docs/usage.md), and revoked or deleted keys
 * with everything kept about them. Ledger entries are never removed. Work is bounded: at most `limit` deletions per
 * kind per run (a revoked key and its records count as one). Returns the counts removed by kind.
 */
export async function sweepExpired(ctx: GatewayContext, options: SweepOptions = {}): Promise<SweepCounts> {
  const limit = options.limit ?? DEFAULT_SWEEP_LIMIT
  const now = ctx.now()
  const counts: SweepCounts = {
    rate_limit_windows: 0,
    codes: 0,
    consent_answers: 0,
    byok_request_counters: 0,
    usage_records: 0,
    generation_ids: 0,
    usage_rollups: 0,
    stored_responses: 0,
    revoked_keys: 0,
    byok_claims: 0,
  }
  for (const rule of expiryRules(ctx)) {
    if (rule.expiresOnItsOwn && ctx.expiring.expiresByItself(rule.kind)) continue
    await rule.before?.()
    const keys = await ctx.expiring.list(rule.kind)
    const expired = await findExpired(ctx, rule, keys, now, limit)
    counts[rule.kind] = rule.remove ? await removeEach(ctx, rule, expired) : expired.length
    if (!rule.remove) await inBatches(expired, (key) => ctx.expiring.remove(rule.kind, key))
    if (rule.kind === 'usage_records') {
      const claims = await removeByokClaims(ctx, expired)
      counts.byok_claims = claims.settled + claims.pending
    }
    if (expired.length)
      ctx.logger.debug('sweep: removed expired records', { kind: rule.kind, removed: expired.length, listed: keys.length, more: expired.length === limit })
  }
  if (Object.values(counts).some((n) => n > 0)) ctx.logger.info('sweep removed expired records', { ...counts })
  return counts
}
