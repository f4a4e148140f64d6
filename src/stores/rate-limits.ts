import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/** Rate-limit windows (docs/limits.md#rate-limits): one atomic counter per scope, id and fixed window, `ratelimit:<scope>:<id>:<windowStart>`. */
export function createRateLimitStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  return {
    /** Counts one request in a window (start epoch ms) and returns the window's count; the counter expires `windowSeconds` + 1 s after it began. */
    count: (scope: 'key' | 'org', id: string, windowStart: number, windowSeconds: number): Promise<number> =>
      atomic.increment(kv.key('ratelimit', scope, id, String(windowStart)), 1, windowSeconds + 1),
  }
}

/** The rate-limit store's operations. */
export type RateLimitStore = ReturnType<typeof createRateLimitStore>
