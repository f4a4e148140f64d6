import type { H3Event } from 'h3'

// A fetch Request follows the signal it was given only through a weak reference to its own AbortController: once
// nothing holds the Request, the client's abort is lost. Each controller keeps the Request it follows alive.
const followed = new WeakMap<AbortSignal, object>()

// The one controller of each request, so that the route handler can stop what the request started (abortRequest).
const controllers = new WeakMap<H3Event, AbortController>()

/**
 * The AbortController of this request alone (one per request), aborted when its client goes away: on Node from the
 * response's 'close' before it finished (without the AbortController srvx builds for `event.req.signal`), elsewhere
 * from that signal. Its owner may abort it too (a deadline, a cancelled stream, the gateway shutting down:
 * abortRequest): everything the request started stops.
 */
export function clientAbortController(event: H3Event): AbortController {
  const made = controllers.get(event)
  if (made) return made
  const controller = new AbortController()
  controllers.set(event, controller)
  const res = event.runtime?.node?.res
  if (res) {
    if (res.destroyed && !res.writableFinished) controller.abort()
    else res.once('close', () => void (res.writableFinished || controller.abort()))
    return controller
  }
  const signal = event.req.signal
  if (signal.aborted) controller.abort(signal.reason)
  else {
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true })
    followed.set(controller.signal, event.req)
  }
  return controller
}

/** Aborts the request's controller, if its route made one, with `reason` (the gateway's shutdown: docs/operations.md). */
export function abortRequest(event: H3Event, reason: unknown): void {
  controllers.get(event)?.abort(reason)
}
