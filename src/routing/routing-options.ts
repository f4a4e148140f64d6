import type { GatewayOptions, ResolvedOptions } from '../options'

// A whole number within bounds, or the default; anything else is refused when the gateway is created.
function wholeNumber(value: number | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < min) throw new TypeError(`model-gateway: \`${name}\` must be a whole number of at least ${min}, got ${value}`)
  return value
}

/** The router's options with their defaults (docs/routing.md), checked: a bad value throws a TypeError naming it. */
export function resolveRoutingOptions(options: GatewayOptions): Pick<ResolvedOptions, 'health' | 'retry'> {
  const health = options.health ?? {}
  const retry = options.retry ?? {}
  const resolved = {
    health: {
      failureThreshold: wholeNumber(health.failureThreshold, 'health.failureThreshold', 3, 1),
      cooldownMs: wholeNumber(health.cooldownMs, 'health.cooldownMs', 30_000, 0),
      windowSize: wholeNumber(health.windowSize, 'health.windowSize', 20, 1),
      maxEntries: wholeNumber(health.maxEntries, 'health.maxEntries', 10_000, 1),
    },
    retry: {
      maxRetries: wholeNumber(retry.maxRetries, 'retry.maxRetries', 2, 0),
      baseDelayMs: wholeNumber(retry.baseDelayMs, 'retry.baseDelayMs', 250, 0),
      maxDelayMs: wholeNumber(retry.maxDelayMs, 'retry.maxDelayMs', 10_000, 0),
    },
  }
  if (resolved.retry.maxRetries > 10) throw new TypeError('model-gateway: `retry.maxRetries` must be at most 10')
  return resolved
}
