import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import type { Principal } from '../stores/account-types'
import { answerHit } from './hit'
import { recordMiss } from './miss'
import { cachePlanOf } from './plan'

/** A capability request as the cache sees it, after authentication and validation (docs/cache.md). */
export interface CachedRequest {
  principal: Principal
  /** The route's path (`/chat/completions`, …): part of the key. */
  route: string
  headers: Headers
  body: unknown
  requestId: string
  tags: () => GenerationTags
}

/**
 * Serves a capability request through the response cache (docs/cache.md): when the request, its key, its org or the
 * options turn the cache on, a live cached answer of the same request is replayed (no provider called, charged the
 * hit fee), else `serve` answers and its answer is recorded for the next one. Without the cache, `serve` alone.
 */
export function serveThroughCache(ctx: GatewayContext, request: CachedRequest, serve: () => unknown): unknown {
  const plan = cachePlanOf(ctx, request.headers, request.principal, request.route, request.body)
  // Without the cache, `serve`'s own promise (none of this function's).
  return plan ? servedThroughCache(ctx, request, plan, serve) : serve()
}

async function servedThroughCache(
  ctx: GatewayContext,
  request: CachedRequest,
  plan: NonNullable<ReturnType<typeof cachePlanOf>>,
  serve: () => unknown,
): Promise<unknown> {
  const startedAt = ctx.now()
  const entry = await ctx.responseCache.get(plan.orgId, plan.hash).catch((error) => {
    ctx.logger.warn('reading the response cache failed; served by a provider', { request_id: request.requestId, error: String(error) })
    return null
  })
  if (entry) return answerHit(ctx, entry, { principal: request.principal, requestId: request.requestId, tags: request.tags(), plan, startedAt })
  const result = await serve()
  return result instanceof Response ? recordMiss(ctx, plan, result, request.requestId) : result
}
