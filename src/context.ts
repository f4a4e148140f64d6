import type { Catalogue } from './catalogue/catalogue'
import type { Logger } from './logger'
import type { HealthTracker } from './routing/health'
import type { ResolvedOptions } from './options'
import type { AccountsStore } from './stores/accounts'
import type { HoldsStore } from './stores/budgets'
import type { ByokFeesStore } from './stores/byok-fees'
import type { ConsentsStore } from './stores/consents'
import type { CreditsStore } from './stores/credits'
import type { ExpiringStore } from './stores/expiring'
import type { KeyCountersStore } from './stores/key-counters'
import type { SpendCountersStore } from './stores/spend-counters'
import type { RateLimitStore } from './stores/rate-limits'
import type { ResponsesStore } from './stores/responses'
import type { RollupStore } from './stores/rollups'
import type { UsageStore } from './stores/usage'
import type { CodesStore } from './stores/codes'
import type { ByokStore } from './stores/byok'
import type { InFlight } from './http/in-flight'
import type { ProbeStore } from './stores/probe'
import type { StorageLiveness } from './stores/postgres-liveness'
import type { RequestLog } from './http/request-log'
import type { GatewayMetrics } from './metrics/gateway-metrics'
import type { Tracing } from './telemetry/tracing'
import type { SettlementRetries } from './billing/settlement-retries'
import type { Sessions } from './stores/sessions'
import type { ResponseCacheStore } from './stores/response-cache'

/**
 * What every route handler receives: options, stores, clock and logger of one gateway. Only the stores (src/stores/)
 * touch storage and build its keys (docs/operations.md); no layer is handed the raw storage.
 */
export interface GatewayContext {
  options: ResolvedOptions
  /** Holds on credits and credit limits while requests run (docs/money.md). */
  holds: HoldsStore
  /** Settlements the storage did not take, kept and tried again until they land (docs/operations.md#settlements-that-fail). */
  settlements: SettlementRetries
  /** Keys' spending counters (docs/keys.md). */
  keyCounters: KeyCountersStore
  /** Users' and end users' spending and request counters (docs/first-party.md#budgets-for-users-and-end-users). */
  spendCounters: SpendCountersStore
  /** BYOK request counts, pending fees and their settlement claims (docs/byok.md). */
  byokFees: ByokFeesStore
  /** Rate-limit windows (docs/limits.md#rate-limits). */
  rateLimitCounts: RateLimitStore
  /** Answers to consent requests of the PKCE browser flow (docs/pkce.md). */
  consents: ConsentsStore
  /** The records the retention sweep removes once expired (docs/retention.md). */
  expiring: ExpiringStore
  accounts: AccountsStore
  /** The host's own users as callers: from a request's session, a host user or a user id (docs/first-party.md). */
  sessions: Sessions
  credits: CreditsStore
  usage: UsageStore
  /** Per-day usage rollups behind GET /activity (docs/usage.md). */
  rollups: RollupStore
  catalogue: Catalogue
  codes: CodesStore
  health: HealthTracker
  byok: ByokStore
  /** Stored responses of the Responses API (docs/responses.md#stored-responses). */
  responses: ResponsesStore
  /** Cached answers and their bytes per org (docs/cache.md). */
  responseCache: ResponseCacheStore
  /** Key that signs consent requests of the PKCE browser flow. */
  consentKey: Uint8Array
  now: () => number
  logger: Logger
  /** When each key's use was last recorded (epoch ms), to throttle `last_used` writes. */
  lastKeyUse: Map<string, number>
  /** The requests and streams in flight, which close() drains (docs/operations.md). */
  inFlight: InFlight
  /** The storage probe of GET /health/ready (docs/operations.md#health-and-readiness). */
  probe: ProbeStore
  /** Whether the storage can recover by itself: GET /health answers 503 when not (docs/operations.md#health-and-readiness). */
  storageLiveness: StorageLiveness
  /** One log line per request (docs/operations.md#logs). */
  requestLog: RequestLog
  /** Prometheus metrics (docs/operations.md#metrics); undefined with `metrics: false`. */
  metrics?: GatewayMetrics
  /** OpenTelemetry spans (docs/operations.md#traces); undefined when off or @opentelemetry/api is not there. */
  tracing?: Tracing
}
