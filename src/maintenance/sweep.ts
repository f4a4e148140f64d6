import type { GatewayContext } from '../context'
import { removeByokClaims } from './byok-claims'
import { expiryRules, type ExpiryRule, type SweepKind } from './rules'

/** Records one sweep removed, by kind; `byok_claims` are the BYOK settlement records removed with usage records. */
export type SweepCounts = Record<SweepKind, number> & { byok_claims: number }

/** Options of one sweep. */
export interface SweepOptions {
  /** At most this many deletions per kind in one run; the next run goes on. Default 1000. */
  limit?: number
  /** Once aborted (the gateway closes), the sweep stops before its next step and returns what it removed so far. */
  signal?: AbortSignal
  /** How long it works at most before it lets the event loop run other work, in ms. Default 10. */
  sliceMs?: number
}

/** Deletions per kind in one run, unless told otherwise. */
export const DEFAULT_SWEEP_LIMIT = 1000
/** Records read, or removed, at once. */
const BATCH = 32

// Lets requests run between the sweep's steps once it has worked for `sliceMs`: on a storage that answers at once (the
// default in-memory one) a sweep would otherwise be one block of the event loop from start to end (docs/retention.md#the-sweep).
function timeSlicer(sliceMs: number): () => Promise<void> | undefined {
  let since = performance.now()
  const turn = (resolve: () => void) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0))
  return () => {
    if (performance.now() - since < sliceMs) return undefined
    return new Promise<void>(turn).then(() => {
      since = performance.now()
    })
  }
}

// Works through the items a batch at a time, until the signal is aborted; returns how many it did.
async function inBatches<T>(items: T[], work: (item: T) => Promise<unknown>, signal?: AbortSignal): Promise<number> {
  let done = 0
  for (; done < items.length && !signal?.aborted; done += BATCH) await Promise.all(items.slice(done, done + BATCH).map(work))
  return Math.min(done, items.length)
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
      if (expired.length < limit && records[j] !== null && rule.expiredRecord!(records[j], now, key)) expired.push(key)
    })
  }
  return expired
}

// Removes expired records through their rule's own removal; one that fails stays for the next run. How many it removed.
async function removeEach(ctx: GatewayContext, rule: ExpiryRule, expired: string[], signal?: AbortSignal): Promise<number> {
  let removed = 0
  await inBatches(
    expired,
    async (key) => {
      const done = await rule.remove!(key).catch((error) => {
        ctx.logger.warn('sweep: could not remove an expired record; the next run tries again', { kind: rule.kind, key, error: String(error) })
        return false
      })
      if (done) removed++
    },
    signal,
  )
  return removed
}

/**
 * Removes expired records that the storage does not expire by itself (docs/retention.md): rate-limit windows,
 * authorization codes, consent answers, past BYOK request counters, end users' counters of past windows, usage records older than the retention with
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
    end_user_counters: 0,
    usage_records: 0,
    generation_ids: 0,
    usage_rollups: 0,
    stored_responses: 0,
    revoked_keys: 0,
    cached_answers: 0,
    byok_claims: 0,
  }
  const signal = options.signal
  const letOthersRun = timeSlicer(options.sliceMs ?? 10)
  for (const rule of expiryRules(ctx)) {
    await letOthersRun()
    if (signal?.aborted) break
    if (rule.expiresOnItsOwn && ctx.expiring.expiresByItself(rule.kind)) continue
    await rule.before?.()
    const keys = await ctx.expiring.list(rule.kind)
    await letOthersRun()
    if (signal?.aborted) break
    const expired = await findExpired(ctx, rule, keys, now, limit)
    if (signal?.aborted) break
    // Usage records are removed whole once begun: their BYOK claims go with them, and a later sweep would not find those.
    const stopAt = rule.kind === 'usage_records' ? undefined : signal
    counts[rule.kind] = rule.remove
      ? await removeEach(ctx, rule, expired, stopAt)
      : await inBatches(expired, (key) => ctx.expiring.remove(rule.kind, key), stopAt)
    if (rule.kind === 'usage_records') {
      const claims = await removeByokClaims(ctx, expired)
      counts.byok_claims = claims.settled + claims.pending
    }
    if (counts[rule.kind])
      ctx.logger.debug('sweep: removed expired records', { kind: rule.kind, removed: counts[rule.kind], listed: keys.length, more: expired.length === limit })
  }
  if (Object.values(counts).some((n) => n > 0)) ctx.logger.info('sweep removed expired records', { ...counts })
  return counts
}
