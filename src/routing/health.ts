/** Options of the health tracker (the circuit breaker of docs/routing.md). */
export interface HealthOptions {
  /** Outcomes kept per provider, model and credential. Default 20. */
  windowSize: number
  /** Consecutive failures that open the breaker. Default 3. */
  failureThreshold: number
  /** How long an open breaker skips the provider before one probe is let through; also a probe's lease. Default 30 s. */
  cooldownMs: number
  /** Entries kept at most; the least recently used are forgotten first. Default 10,000. */
  maxEntries: number
  now: () => number
}

/** What the health of one way to serve a model is kept by: provider, model, and credential (a BYOK id; none: the service's key). */
export interface HealthKey {
  provider: string
  model: string
  /** The customer's credential (BYOK) the attempt uses; undefined for the service's own key. */
  credential?: string
}

/** The breaker of one provider, model and credential: closed (used), open (skipped until `retry_at`), half-open (one probe out). */
export type BreakerState = 'closed' | 'open' | 'half-open'

/** A permission to call a provider: `probe` when it is the one call a half-open breaker lets through. */
export interface Admission {
  probe: boolean
}

/** What the host sees of one provider, model and credential. */
export interface HealthSnapshot {
  provider: string
  model: string
  /** `service` for the gateway's own key, else the BYOK credential's id. */
  credential: string
  /** The breaker's state, for those it applies to (`open_for`). */
  state: BreakerState
  /** Who an open breaker applies to: `everyone`, or the one org whose own failures opened it; null when closed. */
  open_for: string | null
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
  /** A half-open breaker's probe is out. */
  probing: boolean
}

interface Outcome {
  ok: boolean
  latencyMs: number
  tokensPerSecond?: number
}

interface Entry {
  key: HealthKey
  outcomes: Outcome[]
  /** Completion tokens per second of the last served answers (the window's size at most). */
  speeds: number[]
  consecutiveFailures: number
  /** Distinct orgs of the current run of failures (two at most: enough to know it is not one org's doing). */
  failingOrgs: string[]
  openedAt?: number
  /** The org an open breaker applies to; undefined: everyone. */
  openFor?: string
  /** When the half-open breaker's probe went out. */
  probeSince?: number
}

const median = (values: number[]): number | null => {
  if (!values.length) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

// Tokens per second measured: the served answers' (recordThroughput), and any given with an outcome.
const speedsOf = (entry: Entry | undefined): number[] =>
  entry ? [...entry.speeds, ...entry.outcomes.flatMap((o) => (o.ok && o.tokensPerSecond !== undefined ? [o.tokensPerSecond] : []))] : []

const idOf = (key: HealthKey) => `${key.provider}\u0000${key.model}\u0000${key.credential ?? ''}`

/**
 * Rolling health per provider, model and credential, in this process, with a circuit breaker (docs/routing.md):
 * consecutive provider failures open it; when they all came from one org, it is open for that org only. After the
 * cool-down one probe goes through, and whatever ends the probe releases it.
 */
export function createHealthTracker(options: HealthOptions) {
  const entries = new Map<string, Entry>()

  const entryOf = (key: HealthKey): Entry => {
    const id = idOf(key)
    let entry = entries.get(id)
    if (entry)
      entries.delete(id) // re-inserted last: the map's order is least recently used first
    else entry = { key: { ...key }, outcomes: [], speeds: [], consecutiveFailures: 0, failingOrgs: [] }
    entries.set(id, entry)
    if (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!)
    return entry
  }
  const appliesTo = (entry: Entry, org: string | undefined) => entry.openFor === undefined || entry.openFor === org
  const stateOf = (entry: Entry | undefined, org: string | undefined): BreakerState => {
    if (!entry || entry.openedAt === undefined || !appliesTo(entry, org)) return 'closed'
    return options.now() - entry.openedAt >= options.cooldownMs ? 'half-open' : 'open'
  }
  const probeOut = (entry: Entry) => entry.probeSince !== undefined && options.now() - entry.probeSince < options.cooldownMs

  return {
    /** The breaker's state for a provider, model and credential, as the org sees it. */
    state: (key: HealthKey, org?: string): BreakerState => stateOf(entries.get(idOf(key)), org),

    /**
     * May an attempt go there now? A closed breaker admits; an open one refuses; a half-open one admits one probe at
     * a time (a probe never ended within a cool-down frees the place). The admission goes back to `record` or `release`.
     */
    admit(key: HealthKey, org?: string): Admission | null {
      const entry = entries.get(idOf(key))
      const state = stateOf(entry, org)
      if (state === 'closed') return { probe: false }
      if (state === 'open' || probeOut(entry!)) return null
      entry!.probeSince = options.now()
      return { probe: true }
    },

    /** When the breaker lets a probe through for the org (epoch ms); null when it is closed. */
    retryAt(key: HealthKey, org?: string): number | null {
      const entry = entries.get(idOf(key))
      return entry?.openedAt === undefined || !appliesTo(entry, org) ? null : entry.openedAt + options.cooldownMs
    },

    /**
     * Records an outcome of the provider (never one caused by the request or its client): a success closes the
     * breaker; failures open it at the threshold, for the one org that had them all, or for everyone.
     */
    record(key: HealthKey, org: string | undefined, outcome: Outcome): void {
      const entry = entryOf(key)
      entry.outcomes.push(outcome)
      if (entry.outcomes.length > options.windowSize) entry.outcomes.shift()
      entry.probeSince = undefined
      if (outcome.ok) {
        entry.consecutiveFailures = 0
        entry.failingOrgs = []
        entry.openedAt = entry.openFor = undefined
        return
      }
      entry.consecutiveFailures++
      const tenant = org ?? ''
      if (!entry.failingOrgs.includes(tenant) && entry.failingOrgs.length < 2) entry.failingOrgs.push(tenant)
      if (entry.openedAt !== undefined || entry.consecutiveFailures >= options.failureThreshold) {
        entry.openedAt = options.now()
        entry.openFor = entry.failingOrgs.length > 1 ? undefined : entry.failingOrgs[0]
      }
    },

    /** Ends an admission with no verdict on the provider (the request was refused as invalid, or its client left). */
    release(key: HealthKey, admission: Admission): void {
      if (!admission.probe) return
      const entry = entries.get(idOf(key))
      if (entry) entry.probeSince = undefined
    },

    /** Order of preference by health: 0 healthy or due for its probe, 1 failed recently, 2 cooling down or probing. */
    penalty(key: HealthKey, org?: string): 0 | 1 | 2 {
      const entry = entries.get(idOf(key))
      const state = stateOf(entry, org)
      if (state === 'open' || (state === 'half-open' && probeOut(entry!))) return 2
      return state === 'closed' && entry && appliesTo(entry, org) && entry.consecutiveFailures > 0 ? 1 : 0
    },

    /** Median latency (ms) of the window's successes, or null. */
    latency: (key: HealthKey): number | null => median((entries.get(idOf(key))?.outcomes ?? []).filter((o) => o.ok).map((o) => o.latencyMs)),

    /** Records how fast a served answer was generated (completion tokens per second), for `sort: 'throughput'` and the endpoints' figures. */
    recordThroughput(key: HealthKey, tokensPerSecond: number): void {
      if (!Number.isFinite(tokensPerSecond) || tokensPerSecond <= 0) return
      const entry = entryOf(key)
      entry.speeds.push(tokensPerSecond)
      if (entry.speeds.length > options.windowSize) entry.speeds.shift()
    },

    /** Median completion tokens per second of the last served answers, or null. */
    throughput: (key: HealthKey): number | null => median(speedsOf(entries.get(idOf(key)))),

    /**
     * p50, p75, p90 and p99 (nearest rank, ascending) of the window's successful latencies (ms) or completion tokens
     * per second, or null with none: what `/models/{author}/{slug}/endpoints` shows and `provider.preferred_*` compare.
     */
    percentiles(key: HealthKey, metric: 'latency' | 'throughput'): { p50: number; p75: number; p90: number; p99: number } | null {
      const outcomes = (entries.get(idOf(key))?.outcomes ?? []).filter((o) => o.ok)
      const values = metric === 'latency' ? outcomes.map((o) => o.latencyMs) : speedsOf(entries.get(idOf(key)))
      if (!values.length) return null
      const sorted = values.sort((a, b) => a - b)
      const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]
      return { p50: at(50), p75: at(75), p90: at(90), p99: at(99) }
    },

    /** Successful outcomes of the window in percent (0–100), or null when it holds none. */
    uptime(key: HealthKey): number | null {
      const outcomes = entries.get(idOf(key))?.outcomes ?? []
      return outcomes.length ? (outcomes.filter((o) => o.ok).length / outcomes.length) * 100 : null
    },

    /** Every tracked provider, model and credential, for the host (admin API). */
    snapshot(): HealthSnapshot[] {
      return [...entries.values()].map((entry) => {
        const failures = entry.outcomes.filter((o) => !o.ok).length
        const open = entry.openedAt !== undefined
        const state = stateOf(entry, entry.openFor)
        return {
          provider: entry.key.provider,
          model: entry.key.model,
          credential: entry.key.credential ?? 'service',
          state,
          open_for: !open ? null : (entry.openFor ?? 'everyone'),
          requests: entry.outcomes.length,
          failures,
          error_rate: entry.outcomes.length ? failures / entry.outcomes.length : 0,
          consecutive_failures: entry.consecutiveFailures,
          latency_p50_ms: median(entry.outcomes.filter((o) => o.ok).map((o) => o.latencyMs)),
          throughput_tps: median(speedsOf(entry)),
          retry_at: open ? new Date(entry.openedAt! + options.cooldownMs).toISOString() : null,
          probing: probeOut(entry),
        }
      })
    },
  }
}

/** The health tracker's operations. */
export type HealthTracker = ReturnType<typeof createHealthTracker>
