import type { GatewayContext } from '../context'
import { sweepExpired } from './sweep'

/** The first sweep runs this long after the gateway starts (then every `retention.sweepIntervalSeconds`). */
const FIRST_SWEEP_DELAY_MS = 5_000

/** The running sweep timers of a gateway. */
export interface SweepSchedule {
  /**
   * Clears the timers, tells a sweep in progress to stop at its next step, and waits for it up to `waitMs` (all the
   * time it needs when not given): a sweep still waiting on the storage then is logged and left behind, never waited for.
   */
  stop(waitMs?: number): Promise<void>
}

/**
 * Runs the expiry sweep (docs/retention.md) shortly after start, then every `retention.sweepIntervalSeconds`
 * (0: never). The timers do not keep the process alive; a sweep never overlaps the previous one.
 */
export function scheduleSweeps(ctx: GatewayContext): SweepSchedule {
  const everyMs = ctx.options.retention.sweepIntervalSeconds * 1000
  if (everyMs <= 0) return { stop: async () => {} }
  const stopping = new AbortController()
  let running: Promise<void> | undefined
  const run = () => {
    if (running || stopping.signal.aborted) return
    running = sweepExpired(ctx, { signal: stopping.signal })
      .then(
        () => undefined,
        (error) => ctx.logger.error('sweep of expired records failed; it will run again', { error: (error as Error).message }),
      )
      .finally(() => {
        running = undefined
      })
  }
  const first = setTimeout(run, Math.min(FIRST_SWEEP_DELAY_MS, everyMs))
  const interval = setInterval(run, everyMs)
  first.unref?.()
  interval.unref?.()
  return {
    async stop(waitMs) {
      clearTimeout(first)
      clearInterval(interval)
      stopping.abort()
      const sweep = running
      if (!sweep) return
      if (waitMs === undefined) return sweep
      let timer: ReturnType<typeof setTimeout> | undefined
      const ended = await Promise.race([sweep.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)))])
      clearTimeout(timer)
      if (!ended)
        ctx.logger.warn('closing without the retention sweep, which still waits on the storage: it stops at its next step, and the next start sweeps again', {
          waited_ms: Math.round(waitMs),
        })
    },
  }
}
