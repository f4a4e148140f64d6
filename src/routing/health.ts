/** Options of the health tracker (the circuit breaker of decisions.md §8: "a provider that failed recently cools down"). */
export interface HealthOptions {
  /** Outcomes kept per provider and model. Default 20. */
  windowSize: number
  /** Consecutive failures that open the breaker. Default 3. */
  failureThreshold: number
  /** How long an open breaker skips the provider before one probe is let through. Default 30 s. */
  cooldownMs: number
  now: () => number
}

/** The breaker of one provider and model: closed (used), open (skipped until `retryAt`), half-open (one probe out). */
export type BreakerState = 'closed' | 'open' | 'half-open'

/** What the host sees of one provider and model. */
export interface HealthSnapshot {
  provider: string
  model: string
  state: BreakerState
  /** Outcomes in the window. */
  requests: number
  failures: number
  error_rate: number
  consecutive_failures: number
  latency_p50_ms: number | null
  /** Completion tokens per second of successful requests in the window (median), when known. */
  throughput_tps: number | null
  /** When an open breaker lets a probe through (ISO time). */
  retry_at: string | null
}

interface Outcome {
  ok: boolean
  latencyMs: number
  tokensPerSecond?: number
}

interface Entry {
  outcomes: Outcome[]
  consecutiveFailures: number
  openedAt?: number
  probing: boolean
}

const median = (values: number[]): number | null => {
  if (!values.length) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

/** Rolling health per provider and model, in this process, with a circuit breaker. */
export function createHealthTracker(options: HealthOptions) {
  const entries = new Map<string, Entry>()
  const keyOf = (provider: string, model: string) => `${provider}\u0000${model}`
  const entryOf = (provider: string, model: string) => {
    const key = keyOf(provider, model)
    let entry = entries.get(key)
    if (!entry) entries.set(key, (entry = { outcomes: [], consecutiveFailures: 0, probing: false }))
    return entry
  }
  const stateOf = (entry: Entry | undefined): BreakerState => {
    if (!entry || entry.openedAt === undefined) return 'closed'
    return options.now() - entry.openedAt >= options.cooldownMs ? 'half-open' : 'open'
  }

  return {
    /** The breaker's state for a provider and model. */
    state: (provider: string, model: string): BreakerState => stateOf(entries.get(keyOf(provider, model))),

    /** True when an attempt may go to this provider now; a half-open breaker lets exactly one probe through. */
    admit(provider: string, model: string): boolean {
      const entry = entries.get(keyOf(provider, model))
      const state = stateOf(entry)
      if (state === 'closed') return true
      if (state === 'open' || entry!.probing) return false
      entry!.probing = true
      return true
    },

    /** Records an attempt's outcome: failures open the breaker after the threshold; a success closes it. */
    record(provider: string, model: string, outcome: Outcome): void {
      const entry = entryOf(provider, model)
      entry.outcomes.push(outcome)
      if (entry.outcomes.length > options.windowSize) entry.outcomes.shift()
      entry.probing = false
      if (outcome.ok) {
        entry.consecutiveFailures = 0
        entry.openedAt = undefined
      } else {
        entry.consecutiveFailures++
        if (entry.openedAt !== undefined || entry.consecutiveFailures >= options.failureThreshold) entry.openedAt = options.now()
      }
    },

    /** 0 for a provider to try first (healthy, or due for its probe), 1 for one that failed recently but is not cooling down. */
    penalty(provider: string, model: string): 0 | 1 {
      const entry = entries.get(keyOf(provider, model))
      return entry && stateOf(entry) === 'closed' && entry.consecutiveFailures > 0 ? 1 : 0
    },

    /** Median latency (ms) of the window's successes, or null. */
    latency: (provider: string, model: string): number | null =>
      median((entries.get(keyOf(provider, model))?.outcomes ?? []).filter((o) => o.ok).map((o) => o.latencyMs)),

    /** Median completion tokens per second of the window's successes, or null. */
    throughput: (provider: string, model: string): number | null =>
      median((entries.get(keyOf(provider, model))?.outcomes ?? []).flatMap((o) => (o.ok && o.tokensPerSecond !== undefined ? [o.tokensPerSecond] : []))),

    /** Every tracked provider and model, for the host (admin API). */
    snapshot(): HealthSnapshot[] {
      return [...entries.entries()].map(([key, entry]) => {
        const [provider, model] = key.split('\u0000')
        const failures = entry.outcomes.filter((o) => !o.ok).length
        const state = stateOf(entry)
        return {
          provider,
          model,
          state,
          requests: entry.outcomes.length,
          failures,
          error_rate: entry.outcomes.length ? failures / entry.outcomes.length : 0,
          consecutive_failures: entry.consecutiveFailures,
          latency_p50_ms: median(entry.outcomes.filter((o) => o.ok).map((o) => o.latencyMs)),
          throughput_tps: median(entry.outcomes.flatMap((o) => (o.ok && o.tokensPerSecond !== undefined ? [o.tokensPerSecond] : []))),
          retry_at: state === 'closed' || entry.openedAt === undefined ? null : new Date(entry.openedAt + options.cooldownMs).toISOString(),
        }
      })
    },
  }
}

/** The health tracker's operations. */
export type HealthTracker = ReturnType<typeof createHealthTracker>
