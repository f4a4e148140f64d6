import type { GatewayContext } from '../context'
import { sweepExpired } from './sweep'

/** The first sweep runs this long after the gateway starts (then every `retention.sweepIntervalSeconds`). */
const FIRST_SWEEP_DELAY_MS = 5_000

/** The running sweep timers of a gateway. */
export interface SweepSchedule {
  /** Clears the timers and waits for a sweep in progress to finish. */
  stop(): Promise<void>
}

/**
 * Runs the expiry sweep (docs/retention.md) shortly after start, then every `retention.sweepIntervalSeconds`
 * (0: never). The timers do not keep the process alive; a sweep never overlaps the previous one.
 */
export function scheduleSweeps(ctx: GatewayContext): SweepSchedule {
  const everyMs = ctx.options.retention.sweepIntervalSeconds * 1000
  if (everyMs <= 0) return { stop: async () => {} }
  let running: Promise<void> | undefined
  const run = () => {
    if (running) return
    running = sweepExpired(ctx)
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
  first.unref()
  interval.unref()
  return {
    async stop() {
      clearTimeout(first)
      clearInterval(interval)
      await running
    },
  }
}
