import { GatewayError } from '../errors'
import type { Logger } from '../logger'

/** What a request refused, or cut, by the shutdown is told (docs/operations.md). */
export const SHUTDOWN_MESSAGE = 'The gateway is shutting down'

/** Seconds a client refused during the shutdown is told to wait (`Retry-After`) before trying again, elsewhere. */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 5

/** How long, past the drain deadline, the requests just aborted get to bill and end before close() goes on without them. */
export const ABORT_GRACE_MS = 5_000

/** The 503 of a gateway that is shutting down: new requests get it, and work still running at the drain deadline is aborted with it. */
export function shuttingDown(): GatewayError {
  return new GatewayError(503, SHUTDOWN_MESSAGE, { headers: { 'retry-after': String(SHUTDOWN_RETRY_AFTER_SECONDS) } })
}

/** True for the error of shuttingDown() (also across bundled copies of the class). */
export function isShuttingDown(error: unknown): boolean {
  return error instanceof Error && error.name === 'GatewayError' && (error as GatewayError).status === 503 && error.message === SHUTDOWN_MESSAGE
}

/**
 * The work a gateway has in flight, so that close() can drain it (docs/operations.md): each request from its arrival
 * until its handler returns, and each stream until it is billed and closed.
 */
export interface InFlight {
  /** True once close() began: new requests are refused. */
  readonly closing: boolean
  /** Pieces of work running now. */
  readonly size: number
  /** Aborted, with shuttingDown() as its reason, when the drain deadline passes: whatever still runs ends then. */
  readonly signal: ShutdownSignal
  /** Counts a new request until the returned function is called; throws shuttingDown() once closing. */
  admit(): () => void
  /** Counts more work of a request already admitted (a stream outliving its handler), even while closing, until the returned function is called. */
  track(): () => void
  /**
   * Stops admitting requests, waits up to `timeoutMs` for the work in flight to end, then aborts the rest through
   * `signal` and waits up to ABORT_GRACE_MS for it to bill and end. Called again, returns the same drain.
   */
  drain(timeoutMs: number, logger?: Logger): Promise<void>
}

/**
 * The part of an AbortSignal the shutdown is heard through. Not an AbortSignal: workerd ties one to the request that
 * made it, and this one lives as long as the gateway, across requests (docs/edge.md#cloudflare-workers).
 */
export interface ShutdownSignal {
  readonly aborted: boolean
  readonly reason: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

// A ShutdownSignal and its abort(): every listener is called once, the first time.
function createShutdownSignal(): ShutdownSignal & { abort(reason: unknown): void } {
  // Every request and stream in flight listens (each removes its listener when it ends): a set, with no limit to warn at.
  const listeners = new Set<() => void>()
  const signal = {
    aborted: false,
    reason: undefined as unknown,
    addEventListener: (_type: 'abort', listener: () => void) => void listeners.add(listener),
    removeEventListener: (_type: 'abort', listener: () => void) => void listeners.delete(listener),
    abort(reason: unknown) {
      if (signal.aborted) return
      signal.aborted = true
      signal.reason = reason
      const called = [...listeners]
      listeners.clear()
      for (const listener of called) listener()
    },
  }
  return signal
}

/** The in-flight work of one gateway (kept on its context as `ctx.inFlight`). */
export function createInFlight(): InFlight {
  const abort = createShutdownSignal()
  let count = 0
  let closing = false
  let draining: Promise<void> | undefined
  let idle: (() => void)[] = []

  const enter = () => {
    count++
    let done = false
    return () => {
      if (done) return
      done = true
      if (--count > 0) return
      const waiting = idle
      idle = []
      for (const wake of waiting) wake()
    }
  }
  // True once nothing runs, false when `ms` passed first; leaves no timer behind.
  const idleWithin = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (count === 0) return resolve(true)
      const wake = () => {
        clearTimeout(timer)
        resolve(true)
      }
      const timer = setTimeout(() => {
        idle = idle.filter((other) => other !== wake)
        resolve(count === 0)
      }, ms)
      idle.push(wake)
    })

  return {
    get closing() {
      return closing
    },
    get size() {
      return count
    },
    signal: abort,
    admit() {
      if (closing) throw shuttingDown()
      return enter()
    },
    track: enter,
    drain(timeoutMs, logger) {
      closing = true
      return (draining ??= (async () => {
        if (await idleWithin(Math.max(0, timeoutMs))) return
        logger?.warn(`shutting down: ${count} request(s) still running after ${timeoutMs} ms are aborted`)
        abort.abort(shuttingDown())
        if (await idleWithin(ABORT_GRACE_MS)) return
        logger?.error(`shutting down: ${count} request(s) did not end within ${ABORT_GRACE_MS} ms of being aborted; closing without them`)
      })())
    },
  }
}
