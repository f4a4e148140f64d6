import type { GatewayContext } from '../context'
import type { CounterCharge } from '../stores/engine-types'
import type { UsageRecord } from '../stores/usage'

/**
 * A billed request's rollup counters for its settlement's step (docs/usage.md): at once, with no promise, when its day's
 * entry is known; none when finding the entry failed (storage unreachable: logged, and the charge goes on without them).
 */
export function rollupCounters(
  ctx: GatewayContext,
  record: UsageRecord,
  names: { model_permaslug: string; provider_name: string },
): CounterCharge[] | Promise<CounterCharge[]> {
  const failed = (error: unknown): CounterCharge[] => {
    ctx.logger.error('usage rollup failed: GET /activity misses this request', { id: record.id, org_id: record.org_id, error: (error as Error).message })
    return []
  }
  try {
    const counting = ctx.rollups.counters(record, names)
    return Array.isArray(counting) ? counting : counting.catch(failed)
  } catch (error) {
    return failed(error)
  }
}
