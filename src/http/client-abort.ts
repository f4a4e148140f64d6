import type { H3Event } from 'h3'

// A fetch Request follows the signal it was given only through a weak reference to its own AbortController: once
// nothing holds the Request, the client's abort is lost. Each controller keeps the Request it follows alive.
const followed = new WeakMap<AbortSignal, object>()

/**
 * An AbortController of this request alone, aborted when its client goes away: on Node from the response's 'close'
 * before it finished (without the AbortController srvx builds for `event.req.signal`), elsewhere from that signal.
 * Its owner may abort it too (a deadline, a cancelled stream): everything the request started stops.
 */
export function clientAbortController(event: H3Event): AbortController {
  const controller = new AbortController()
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
