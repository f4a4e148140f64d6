import type { HealthSnapshot } from '../routing/health'
import { Counter, Gauge, Histogram, renderMetrics } from './prometheus'

// Seconds: from a fast local answer to a long stream.
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60]
const BREAKER_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const

/** What a billed request tells the metrics. */
export interface BilledFacts {
  model: string
  provider: string
  prompt_tokens?: number
  completion_tokens?: number
  cost_eur: string
  first_token_ms?: number
  status: string
}

// The series a billed request of one model and provider adds to.
interface ModelSeries {
  billed: Map<string, { value: number }>
  billedOf: (status: string) => { value: number }
  prompt: () => { value: number }
  completion: () => { value: number }
  cost: () => { value: number }
  ttft: () => { observe(value: number): void }
}

/**
 * The gateway's Prometheus metrics (docs/operations.md#metrics): requests, their duration, time to first token,
 * tokens, cost, upstream errors by type, circuit breakers, requests in flight, live holds and kept settlements. Names follow
 * prom-client's conventions (`_total`, `_seconds`), prefixed `model_gateway_`.
 */
export function createGatewayMetrics(sources: { health: () => HealthSnapshot[]; inFlight: () => number; settlementsPending?: () => number }) {
  let holds = 0
  const requests = new Counter('model_gateway_requests_total', 'Requests answered, by route, method and status.')
  const duration = new Histogram(
    'model_gateway_request_duration_seconds',
    'Time from a request arriving to its end (a stream: billed and closed), by route.',
    DURATION_BUCKETS,
  )
  const ttft = new Histogram('model_gateway_time_to_first_token_seconds', 'Time to the first token of billed requests, by model and provider.', TTFT_BUCKETS)
  const tokens = new Counter('model_gateway_tokens_total', 'Tokens billed, by model, provider and kind (prompt, completion).')
  const cost = new Counter('model_gateway_cost_eur_total', 'EUR billed, by model and provider.')
  const billed = new Counter('model_gateway_billed_requests_total', 'Requests billed, by model, provider and how they ended (success, error, cancelled).')
  const upstreamErrors = new Counter('model_gateway_upstream_errors_total', 'Failed upstream attempts, by provider and error type.')
  const breakers = new Gauge('model_gateway_breaker_state', 'Circuit breaker of each provider and model: 0 closed, 1 half-open, 2 open.', () =>
    sources.health().map((entry) => ({
      labels: { provider: entry.provider, model: entry.model, credential: entry.credential === 'service' ? 'service' : 'byok' },
      value: BREAKER_VALUE[entry.state],
    })),
  )
  const inFlight = new Gauge('model_gateway_in_flight', 'Requests and streams in flight.', () => [{ labels: {}, value: sources.inFlight() }])
  const liveHolds = new Gauge('model_gateway_holds_active', 'Credit holds this instance placed and has not settled or released yet.', () => [
    { labels: {}, value: holds },
  ])
  // Settlements the storage did not take, kept and tried again until they land (docs/operations.md#settlements-that-fail).
  const settlementsPending = new Gauge('model_gateway_settlements_pending', 'Settlements that failed and are kept, tried again until they land.', () => [
    { labels: {}, value: sources.settlementsPending?.() ?? 0 },
  ])
  const settlementEvents = {
    kept: new Counter('model_gateway_settlements_kept_total', 'Settlements that failed and were kept to be tried again, by kind (charge, release).'),
    retried: new Counter('model_gateway_settlement_retries_total', 'Tries of kept settlements, by kind.'),
    landed: new Counter('model_gateway_settlements_landed_total', 'Kept settlements that landed on a later try, by kind.'),
    given_up: new Counter(
      'model_gateway_settlements_given_up_total',
      'Kept settlements given up and logged to charge by hand, by kind and reason (bound: past maxPending; closed: close() without a journal).',
    ),
  }
  const all = [
    requests,
    duration,
    ttft,
    tokens,
    cost,
    billed,
    upstreamErrors,
    breakers,
    inFlight,
    liveHolds,
    settlementsPending,
    ...Object.values(settlementEvents),
  ]
  // The series each request adds to, kept by their label values (as bounded as the series themselves: models,
  // providers, routes, statuses), so that a request does not build and serialise their labels again.
  const routeSeries = new Map<string, { requests: { value: number }; duration: { observe(value: number): void } }>()
  const modelSeries = new Map<string, ModelSeries>()
  const modelSeriesOf = (model: string, provider: string): ModelSeries => {
    const key = `${model}\n${provider}`
    let series = modelSeries.get(key)
    if (!series) {
      const labels = { model, provider }
      // Each series made at its first use, as `inc` and `observe` make them (none rendered at 0 before it counted).
      let prompt: { value: number } | undefined
      let completion: { value: number } | undefined
      let costSeries: { value: number } | undefined
      let ttftSeries: { observe(value: number): void } | undefined
      series = {
        billed: new Map(),
        billedOf: (status) => billed.series({ ...labels, status }),
        prompt: () => (prompt ??= tokens.series({ ...labels, kind: 'prompt' })),
        completion: () => (completion ??= tokens.series({ ...labels, kind: 'completion' })),
        cost: () => (costSeries ??= cost.series(labels)),
        ttft: () => (ttftSeries ??= ttft.series(labels)),
      }
      modelSeries.set(key, series)
    }
    return series
  }
  return {
    /** A request ended. */
    request(route: string, method: string, status: number, seconds: number): void {
      const key = `${route} ${method} ${status}`
      let series = routeSeries.get(key)
      if (!series)
        routeSeries.set(key, (series = { requests: requests.series({ route, method, status: String(status) }), duration: duration.series({ route }) }))
      series.requests.value++
      series.duration.observe(seconds)
    },
    /** A request was billed. */
    billed(facts: BilledFacts): void {
      const series = modelSeriesOf(facts.model, facts.provider)
      let byStatus = series.billed.get(facts.status)
      if (!byStatus) series.billed.set(facts.status, (byStatus = series.billedOf(facts.status)))
      byStatus.value++
      if (facts.prompt_tokens) series.prompt().value += facts.prompt_tokens
      if (facts.completion_tokens) series.completion().value += facts.completion_tokens
      series.cost().value += Number(facts.cost_eur)
      if (facts.status === 'success' && facts.first_token_ms !== undefined) series.ttft().observe(facts.first_token_ms / 1000)
    },
    /** An upstream attempt failed. */
    upstreamError(provider: string, type: string): void {
      upstreamErrors.inc({ provider, type })
    },
    /** A hold was placed (+1) or settled or released (-1). */
    holds(change: 1 | -1): void {
      holds += change
    },
    /** A settlement was kept after failing, tried again, landed on a later try, or given up (`reason`). */
    settlement(event: keyof typeof settlementEvents, kind: string, reason?: string): void {
      settlementEvents[event].inc(reason ? { kind, reason } : { kind })
    },
    /** Every metric in Prometheus's text exposition format. */
    render: (): string => renderMetrics(all),
  }
}

/** The gateway's metrics. */
export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>
