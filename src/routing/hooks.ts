// The routing hooks a host passes to createGateway (docs/routing.md): types only, so that the gateway's options
// name them without importing the attempt loop that calls them (docs/development.md#layers).

/** What a routing hook receives. */
export interface RoutingEvent {
  requestId: string
  model: string
  /** The provider's slug; `<slug>:byok:<credential id>` when the customer's own key is used. */
  provider: string
  /** 1 for the first upstream call of the request, counting retries. */
  attempt: number
  /** 0 for the first call to this provider, then 1, 2, … for its retries. */
  retry: number
  latencyMs?: number
  error?: { status: number; type: string; message: string; error_type?: string }
}

/** Hooks for the host's logs and metrics; a hook that throws is logged and ignored. */
export interface RoutingHooks {
  /** An upstream call starts (first call to a provider, or a retry of it). */
  onAttempt?: (event: RoutingEvent) => void
  /** A call failed with a 429, 503, 529 or connection error; the same provider is asked again after `delayMs`. */
  onRetry?: (event: RoutingEvent & { delayMs: number }) => void
  /** A provider failed (after its retries); the next one (`next`) is tried. */
  onFallback?: (event: RoutingEvent & { next: { model: string; provider: string } }) => void
  /** The request was served by this call. */
  onSuccess?: (event: RoutingEvent) => void
  /** The request failed: no call served it. */
  onFailure?: (event: RoutingEvent) => void
}
