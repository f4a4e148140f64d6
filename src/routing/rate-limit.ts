import type { GatewayContext } from '../context'
import { GatewayError } from '../errors'
import type { RateLimit } from '../options'
import type { Principal } from '../stores/account-types'

/**
 * Counts a request against the key's and the org's limits (docs/limits.md#rate-limits): fixed windows counted with an
 * atomic increment in storage, so several instances share them. Returns the X-RateLimit-* headers of the tightest
 * limit; over a limit: 429 with Retry-After. Without rate limits, undefined at once (no promise).
 */
export function applyRateLimits(ctx: GatewayContext, principal: Principal): Promise<Record<string, string>> | undefined {
  const { key, org } = ctx.options.rateLimits
  if (!key && !org) return undefined
  const scopes: ['key' | 'org', string, RateLimit][] = []
  // A minted key's requests count against the keys above it too (docs/keys.md).
  if (key) for (const hash of [principal.key.hash, ...(principal.key.ancestors ?? []).map((a) => a.hash)]) scopes.push(['key', hash, key])
  if (org) scopes.push(['org', principal.org.id, org])
  return countedLimits(ctx, scopes)
}

async function countedLimits(ctx: GatewayContext, scopes: ['key' | 'org', string, RateLimit][]): Promise<Record<string, string>> {
  const now = ctx.now()
  const counted = await Promise.all(
    scopes.map(async ([scope, id, limit]) => {
      const windowMs = limit.windowSeconds * 1000
      const windowStart = Math.floor(now / windowMs) * windowMs
      const count = await ctx.rateLimitCounts.count(scope, id, windowStart, limit.windowSeconds)
      return { scope, limit, count, resetMs: windowStart + windowMs }
    }),
  )
  const tightest = counted.reduce((a, b) => (b.limit.requests - b.count < a.limit.requests - a.count ? b : a))
  const headers = {
    'x-ratelimit-limit': String(tightest.limit.requests),
    'x-ratelimit-remaining': String(Math.max(0, tightest.limit.requests - tightest.count)),
    'x-ratelimit-reset': String(Math.ceil(tightest.resetMs / 1000)),
  }
  const exceeded = counted.find((c) => c.count > c.limit.requests)
  if (exceeded) {
    const retryAfter = Math.max(1, Math.ceil((exceeded.resetMs - now) / 1000))
    throw new GatewayError(
      429,
      `Rate limit exceeded: ${exceeded.limit.requests} requests per ${exceeded.limit.windowSeconds} s for this ${exceeded.scope === 'key' ? 'API key' : 'organisation'}; retry in ${retryAfter} s`,
      {
        headers: { ...headers, 'retry-after': String(retryAfter) },
        metadata: { scope: exceeded.scope },
      },
    )
  }
  return headers
}
