import { placeHold, releaseOrLog, type Hold, type MaxCost } from '../billing/holds'
import type { GatewayContext } from '../context'
import { newId } from '../crypto/keys'
import { planAttempts, type Attempt, type RoutingRequest } from '../routing/plan'
import type { Principal } from '../stores/account-types'

/** One request of any capability, as the pipeline serves it (docs/capabilities.md). */
export interface CapabilityRequest<R = Response> {
  principal: Principal
  /** What routing needs: the capability, the models, the provider preferences. */
  routing: RoutingRequest
  requestId: string
  /** Adjusts the planned attempts before the hold (chat: the priced fields and `n` each provider takes). */
  refine?: (attempts: Attempt[]) => Attempt[]
  /** The most the request may cost over its attempts: held before any call (402 when the credits cannot cover it). */
  maxCost: (attempts: Attempt[]) => MaxCost
  /**
   * Tries the attempts in order (`firstSuccessful`: retries, health, fallbacks), settles the hold with the exact charge
   * and the usage record, and answers (a Response over HTTP, typed results in process: docs/first-party.md). A failure before it settled releases the hold.
   */
  run: (attempts: Attempt[], hold: Hold) => Promise<R>
}

/**
 * Serves one request of a capability: plan (only offers that serve it; 400 naming what the model serves) → hold of
 * its maximum cost → attempts → settle → response. The hold is replaced by the exact charge, or released, however
 * the request ends.
 */
export async function serveCapability<R = Response>(ctx: GatewayContext, request: CapabilityRequest<R>): Promise<R> {
  const planned = await planAttempts(ctx, request.routing, request.principal)
  const attempts = request.refine ? request.refine(planned) : planned
  const hold = await placeHold(ctx, request.principal, newId(), request.maxCost(attempts))
  try {
    return await request.run(attempts, hold)
  } catch (error) {
    await releaseOrLog(ctx, hold, request.requestId)
    throw error
  }
}
