import type { GatewayContext } from '../context'
import type { Budget } from '../stores/engine-types'

/** A live request's hold, renewed until its request ends. */
interface LiveHold {
  budgets: Budget[]
  /** When it is next renewed (performance.now(): real time, whatever the gateway's clock says). */
  due: number
  renewing: boolean
}

/** The live holds of one gateway, renewed by one timer. */
interface Renewals {
  live: Map<string, LiveHold>
  timer: ReturnType<typeof setInterval> | undefined
}

const renewalsOf = new WeakMap<GatewayContext, Renewals>()

/** How often a hold is renewed: every third of `holdTtlSeconds`, at least 50 ms apart (docs/money.md). */
const periodOf = (ctx: GatewayContext): number => Math.max((ctx.options.holdTtlSeconds * 1000) / 3, 50)

// Renews one hold; a hold no longer live (it expired while the process stalled) is logged once and left, a renewal that
// failed (storage unreachable) is logged and tried again at the next sweep.
async function renew(ctx: GatewayContext, live: Map<string, LiveHold>, id: string, hold: LiveHold): Promise<void> {
  hold.renewing = true
  const now = ctx.now()
  try {
    const renewed = await ctx.holds.renew({ id, budgets: hold.budgets, expiresAt: now + ctx.options.holdTtlSeconds * 1000, now })
    if (renewed === 0 && live.get(id) === hold) {
      ctx.logger.warn('a hold expired while its request was still running; the request is still charged exactly when it ends', { hold_id: id })
      live.delete(id)
      return
    }
  } catch (error) {
    ctx.logger.warn('renewing a hold failed; tried again shortly', { hold_id: id, error: String(error) })
  }
  hold.due = performance.now() + periodOf(ctx)
  hold.renewing = false
}

/**
 * Renews a live request's hold every third of `holdTtlSeconds` until the returned function is called (docs/money.md),
 * so that only a dead process's hold expires. One timer per gateway sweeps its live holds every sixth of the TTL (a
 * hold is renewed at most half its TTL after its last renewal), instead of a timer per request: a request adds and
 * removes one map entry.
 */
export function keepRenewed(ctx: GatewayContext, id: string, budgets: Budget[]): () => void {
  let renewals = renewalsOf.get(ctx)
  if (!renewals) renewalsOf.set(ctx, (renewals = { live: new Map(), timer: undefined }))
  const { live } = renewals
  const hold: LiveHold = { budgets, due: performance.now() + periodOf(ctx), renewing: false }
  live.set(id, hold)
  if (!renewals.timer) {
    const own = renewals
    own.timer = setInterval(() => {
      // Stopped once nothing is left to renew (started again by the next hold).
      if (own.live.size === 0) {
        clearInterval(own.timer)
        own.timer = undefined
        return
      }
      const now = performance.now()
      for (const [holdId, entry] of own.live) if (!entry.renewing && entry.due <= now) void renew(ctx, own.live, holdId, entry)
    }, periodOf(ctx) / 2)
    own.timer.unref?.()
  }
  return () => {
    if (live.get(id) === hold) live.delete(id)
  }
}
