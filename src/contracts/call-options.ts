/** What every upstream call receives. */
export interface CallOptions {
  /** Aborted when the client goes away or the deadline passes. */
  signal: AbortSignal
  /** Per-attempt timeout in milliseconds (no byte from upstream for this long fails the attempt). */
  timeoutMs: number
  /** A customer's own key (BYOK) to use instead of the provider's. */
  apiKey?: string
  /** Headers every call of this attempt carries: the trace context (`traceparent`, docs/operations.md#traces). */
  headers?: Record<string, string>
}
