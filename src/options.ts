import type { Storage } from 'unstorage'
import type { H3Event } from 'h3'
import type { Logger } from './logger'
import type { RoutingHooks } from './routing/hooks'
import type { GatewayPolicy } from './policies/types'
import type { AtomicOption } from './stores/engine-types'
import type { Provider, ProviderModel } from './contracts'
import type { CatalogueFile } from './catalogue/catalogue-file'
import type { CorsOption, ResolvedCors } from './http/cors'
import type { AuthCacheOptions } from './stores/principal-cache'
import type { SettlementRetriesOptions } from './billing/settlement-retries'
import type { NewSessionUser, SessionUser } from './stores/sessions'
import type { ResponseCacheOptions } from './stores/response-cache'

export type { NewSessionUser, SessionUser } from './stores/sessions'

/** Options of createGateway. Every value not given takes its default (docs/configuration.md). */
export interface GatewayOptions {
  /** Where the gateway keeps its records: any unstorage Storage. Default: in-memory (lost on restart). */
  storage?: Storage
  /**
   * How counters, holds and claims are made atomic (docs/operations.md#several-instances): `auto` (default) by the
   * storage's driver (Redis, PostgreSQL through db0, or an in-process lock for memory and files; any other driver is
   * refused); `local` accepts the in-process lock for any driver that only this process uses.
   */
  atomic?: AtomicOption
  /**
   * Prometheus metrics (docs/operations.md#metrics): collected by default and read with `gateway.metrics()`; with
   * `route: true` also served at GET /metrics (behind `Authorization: Bearer <bearerToken>` when one is given);
   * `false` collects none.
   */
  metrics?: false | { route?: boolean; bearerToken?: string }
  /**
   * OpenTelemetry traces through the host's @opentelemetry/api (docs/operations.md#traces): on when that package can
   * be loaded (a no-op until the host registers an SDK); `false` turns them off.
   */
  tracing?: false
  /** Key prefix of every record in `storage`. Default `gateway`. */
  storagePrefix?: string
  /** Upstream providers (`openai()`, `openaiCompatible()`, `demo()`, …). Default: none. */
  providers?: Provider[]
  /**
   * A catalogue file (a path, read once at creation, or its parsed contents): per provider, models whose fields replace
   * the built-in ones (those it leaves out are kept) and models it adds, so that prices can be refreshed without a
   * release (docs/catalogue.md). A bad file throws a TypeError naming the field. Default: the built-in catalogue only.
   */
  catalogue?: string | CatalogueFile
  /** Changes to catalogue models by id (prices, context length, …), applied to every provider serving them. */
  modelOverrides?: Record<string, Partial<Omit<ProviderModel, 'id'>>>
  /** EUR per unit of each pricing currency, as exact decimal strings. Default `{ EUR: '1', USD: '0.86' }`. */
  exchangeRates?: Record<string, string>
  /** Per-attempt upstream timeout: no byte for this long fails the attempt. Default 120000 ms. */
  upstreamTimeoutMs?: number
  /** Interval of SSE keep-alive comments while a stream waits for upstream. Default 15000 ms. */
  keepAliveMs?: number
  /** Discovered models (local servers) are listed again after this long. Default 600 s. */
  modelRefreshSeconds?: number
  /** Link of a model in the RSS feed with use_rss_chat_links; `{id}` is replaced. Default `/?model={id}` on the request's origin. */
  chatLinkTemplate?: string
  /** Path the API lives under. Default `/api/v1`. */
  basePath?: string
  /**
   * The site's public address (`https://gateway.example`, no path), used for every absolute link the gateway builds
   * (RSS links, the sign-in return address) instead of the request's Host header. Set it in production, above all
   * behind a proxy. Default: the request's own origin.
   */
  publicUrl?: string
  /** Secret for encryption and signing (32+ characters). Default: random per process, with a warning. */
  secret?: string
  /** Former secrets, still accepted to decrypt stored BYOK keys while they are re-encrypted under `secret`. */
  previousSecrets?: string[]
  /** Current time in epoch milliseconds; inject one in tests. Default `Date.now`. */
  clock?: () => number
  /** Where logs go; `false` for none. Default: console, `info` and above. */
  logger?: Logger | false
  /** Prefix of issued API keys. Default `sk-service-v1-`. */
  keyPrefix?: string
  /** Lifetime of issued API keys in seconds. Default: keys never expire. */
  keyTtlSeconds?: number
  /** API keys per org (docs/keys.md#how-many-keys-an-org-may-have). */
  keys?: KeysOptions
  /** Plan of users created without one. Default `free`. */
  defaultPlan?: string
  /** Serve `/models`, `/models/count` and `/providers` without a key. Default true. */
  publicCatalogue?: boolean
  /**
   * Body size limits in bytes (docs/limits.md#body-size): `countTokens` (POST /messages/count_tokens) defaults to
   * `chat`, so that any request /messages takes can be counted.
   */
  bodyLimits?: { default?: number; chat?: number; transcription?: number; countTokens?: number }
  /** How often a key's `last_used` is written at most, in seconds. Default 60. */
  lastUsedIntervalSeconds?: number
  /**
   * The authentication cache (docs/keys.md#the-authentication-cache): resolved keys kept `ttlMs` (default 5000; 0: off),
   * emptied at once by a change to a key or user here, and within `epochPollMs` (default 1000) on other instances.
   */
  authCache?: AuthCacheOptions
  /** Key issuance by PKCE: the host app owns sign-in, the gateway owns consent and keys. */
  auth?: AuthOptions
  /**
   * The host's own signed-in users as callers (docs/first-party.md): a request without a key acts as the user the
   * host's session names, created on first use.
   */
  session?: SessionOptions
  /**
   * CORS for browser apps (docs/api.md#cors): preflights answered, every API response readable by pages
   * of any origin, never with credentials. `{ origins: ['https://app.example'] }` allows only those; `false` turns it
   * off (OPTIONS then answers 405). A bad origin throws a TypeError at creation. Default: any origin.
   */
  cors?: CorsOption
  /** Overall deadline of a request's attempts (until the first chunk of a stream). Default 300000 ms; past it: 408. */
  requestTimeoutMs?: number
  /** The circuit breaker per provider, model and credential (docs/routing.md). */
  health?: HealthOptionsInput
  /** Retries of the same provider on 429, 503, 529 and connection errors, before the next one (docs/routing.md). */
  retry?: RetryOptionsInput
  /** How long `close()` lets requests in flight finish before it aborts and bills them. Default 30000 ms. */
  drainTimeoutMs?: number
  /**
   * The longest the gateway waits for its storage in one operation (a read, a counter, a hold, a settlement): past it a
   * request answers 503 (`metadata.error_type: storage_unavailable`), never hangs on a stalled storage
   * (docs/operations.md#when-the-storage-fails). Default 5000 ms. The gateway's own memory storage and files are not bounded.
   */
  storageTimeoutMs?: number
  /** Requests per window, per API key and per org; unset: no limit. Counted in storage, so they hold across instances. */
  rateLimits?: { key?: RateLimit; org?: RateLimit }
  /** Events of each attempt, fallback, success and failure, for the host's logs and metrics. */
  hooks?: RoutingHooks
  /**
   * Policies in the request path, run in order on every capability (docs/policies.md#policy-hooks): each may allow,
   * deny or rewrite a request, deny or map a whole answer, and filter a streamed answer's text.
   */
  policies?: GatewayPolicy[]
  /** Customers' own provider keys (docs/byok.md). */
  byok?: ByokOptions
  /** How long usage records are kept, and how often expired records are swept (docs/retention.md). */
  retention?: RetentionOptions
  /** GET /activity's rollups (docs/usage.md#usage-per-user-and-per-end-user). */
  activity?: ActivityOptions
  /** The response cache (docs/cache.md#configuration): off unless a request, key or org asks for it, or `enabled`. */
  cache?: ResponseCacheOptions
  /** A request's hold on credits left by a process that died expires after this long; a running request renews its own (docs/money.md). Default 900 s. */
  holdTtlSeconds?: number
  /** How long a reasoning model's stream whose client left is still read for its provider's usage report (docs/money.md). Default 30000 ms; 0: not at all. */
  abortedStreamUsageWaitMs?: number
  /**
   * Settlements the storage did not take (an outage after a provider served the request) are kept and tried again
   * until they land, exactly once (docs/operations.md#settlements-that-fail): at most `maxPending` (10000) at once,
   * and, with `journal` (a file path), written there so that those a killed process left land at its next start.
   */
  settlementRetries?: SettlementRetriesOptions
}

/** API keys per org (docs/keys.md#how-many-keys-an-org-may-have). */
export interface KeysOptions {
  /**
   * Live (not revoked) keys an org may have at most, management keys included; issuing one more (minting,
   * POST /keys, admin.issueKey) is a 403 until keys are deleted or revoked. Default 1000.
   */
  maxPerOrg?: number
}

/** BYOK billing: a free allowance per period, then a platform fee on the estimated upstream cost. */
export interface ByokOptions {
  /** Free BYOK requests per org and period. Default 1000000. */
  freeRequestAllowance?: number
  /** Fee owed per chargeable request, as a fraction of its estimated upstream cost (exact decimal). Default '0.05'. */
  platformFeeRate?: string
  /** How often pending fees are settled (charged to credits); 0 turns the timer off. Default 3600 s. */
  settlementIntervalSeconds?: number
  /** Credentials an org may store; creating one more is a 400 (docs/byok.md). Default 50. */
  maxCredentials?: number
}

/** GET /activity's rollups (docs/usage.md#usage-per-user-and-per-end-user). */
export interface ActivityOptions {
  /**
   * Distinct end users (OpenRouter's `user` field) per org and UTC day whose usage is kept apart in the rollups; the
   * day's further end users are counted together under `"(other)"`, so that callers' strings never grow the rollups
   * without bound. Default 1000.
   */
  endUsersPerDay?: number
}

/** What is kept, for how long (docs/retention.md). */
export interface RetentionOptions {
  /** Usage records older than this many days are deleted. Default 90. */
  usageDays?: number
  /** How often expired records (rate-limit windows, codes, old usage…) are swept; 0 turns the sweep off. Default 600 s. */
  sweepIntervalSeconds?: number
  /** Stored responses of POST /responses are deleted this many days after they were made (docs/responses.md). Default 30. */
  responsesDays?: number
  /**
   * The most JSON bytes an org's stored responses of POST /responses hold together; a request that would store more
   * is refused with a 400 before any provider is called (docs/responses.md#stored-responses). Default 104857600
   * (100 MiB); 0: no cap.
   */
  responsesBytesPerOrg?: number
  /**
   * The gateway's own default in-memory storage (no `storage` given) keeps at most this many usage records, as many
   * generation pointers, as many ledger entries and as many stored responses; the oldest go first, so that its memory stays bounded
   * (docs/retention.md#the-default-in-memory-storage). Default 50000; 0: no bound. A storage you pass is not bounded.
   */
  inMemoryRecords?: number
  /**
   * A revoked or deleted API key's record, with everything kept about it (its list entries, spending counters, …), is
   * removed by the sweep this many days after it was revoked; it still answers 401 (docs/retention.md#revoked-and-deleted-keys).
   * Default `usageDays` (usage records and /activity name keys by hash); 0: at the next sweep.
   */
  revokedKeysDays?: number
}

/** A fixed-window rate limit. */
export interface RateLimit {
  requests: number
  windowSeconds: number
}

/** What a consent page shows and posts back (the built-in one: src/auth/consent-page.ts). */
export interface ConsentInfo {
  /** The origin of the app asking for a key (from its callback URL). */
  appOrigin: string
  callbackUrl: string
  /** The signed-in user's email. */
  userEmail: string
  /** Where the form posts (`POST …/auth/consent`). */
  formAction: string
  /** The signed consent request: send it back as the `request` field, with `decision` = `approve` or `deny`. */
  request: string
  /** The credit limit the app asked the key to have, in EUR (a decimal string), when it asked for one. */
  limit?: string
}

/** How the host's signed-in users call the gateway without a key (docs/first-party.md). */
export interface SessionOptions {
  /**
   * The user the host's session (cookie, session store, JWT) says is signed in for this request, or null; a string is
   * taken as the user's id. Called only for requests that send no key: a key, when sent, wins.
   */
  user: (event: H3Event) => SessionUser | string | null | undefined | Promise<SessionUser | string | null | undefined>
  /** Called once, when a host user is first seen: the org it joins, its plan, the credits its new org is granted. */
  onNewUser?: (user: SessionUser) => NewSessionUser | undefined | Promise<NewSessionUser | undefined>
  /**
   * Origins besides the gateway's own whose pages may make session requests that change state (POST, PATCH, DELETE);
   * any other cross-site one is refused with 403 (docs/first-party.md#cross-site-requests).
   */
  trustedOrigins?: string[]
}

/** How the host app takes part in the PKCE browser flow. */
export interface AuthOptions {
  /** The id of the user signed in to the host app for this request (from its session cookie…), or null. */
  resolveUser?: (event: H3Event) => string | null | undefined | Promise<string | null | undefined>
  /** The host's sign-in page; the gateway sends people there with `returnToParam` set to where they were going. */
  signInUrl?: string
  /** Query parameter of the return address. Default `return_to`. */
  returnToParam?: string
  /** When set, only callback URLs on these origins are accepted. */
  allowedCallbackOrigins?: string[]
  /** The host's own consent page: HTML (or a Response) with a form posting `request` and `decision` to `formAction`. */
  consentPage?: (info: ConsentInfo) => string | Response | Promise<string | Response>
  /** Lifetime of authorization codes and consent requests. Default 600 s. */
  codeTtlSeconds?: number
}

/** GatewayOptions with every default filled in. */
export interface ResolvedOptions {
  storagePrefix: string
  providers: Provider[]
  modelOverrides: Record<string, Partial<Omit<ProviderModel, 'id'>>>
  exchangeRates: Record<string, string>
  upstreamTimeoutMs: number
  keepAliveMs: number
  modelRefreshSeconds: number
  chatLinkTemplate: string
  basePath: string
  /** The origin of `publicUrl` (`https://gateway.example`), when set. */
  publicUrl?: string
  secret: string
  keyPrefix: string
  keyTtlSeconds?: number
  keys: Required<KeysOptions>
  defaultPlan: string
  publicCatalogue: boolean
  bodyLimits: { default: number; chat: number; transcription: number; countTokens: number }
  lastUsedIntervalSeconds: number
  authCache: AuthCacheOptions
  requestTimeoutMs: number
  previousSecrets: string[]
  byok: Required<ByokOptions>
  retention: Required<RetentionOptions>
  activity: Required<ActivityOptions>
  holdTtlSeconds: number
  abortedStreamUsageWaitMs: number
  settlementRetries: { maxPending: number; journal?: string }
  health: Required<HealthOptionsInput>
  retry: Required<RetryOptionsInput>
  drainTimeoutMs: number
  storageTimeoutMs: number
  rateLimits: { key?: RateLimit; org?: RateLimit }
  hooks: RoutingHooks
  policies: readonly GatewayPolicy[]
  auth: Required<Pick<AuthOptions, 'returnToParam' | 'codeTtlSeconds'>> & Omit<AuthOptions, 'returnToParam' | 'codeTtlSeconds'>
  /** The session option with its trusted origins checked; undefined when the host has no session principals. */
  session?: Omit<SessionOptions, 'trustedOrigins'> & { trustedOrigins: ReadonlySet<string> }
  cors: ResolvedCors
  cache: Required<ResponseCacheOptions>
}

/** The circuit breaker's options (docs/routing.md). */
export interface HealthOptionsInput {
  /** Consecutive failures that open the breaker. Default 3. */
  failureThreshold?: number
  /** How long an open breaker skips the provider before one probe is let through. Default 30000 ms. */
  cooldownMs?: number
  /** Outcomes kept per provider, model and credential (latency, throughput, error rate). Default 20. */
  windowSize?: number
  /** Providers, models and credentials tracked at most; the least recently used are forgotten. Default 10000. */
  maxEntries?: number
}

/** Retries of one provider before the router moves on (docs/routing.md). */
export interface RetryOptionsInput {
  /** Retries of the same provider after a 429, 503, 529 or connection error. Default 2; 0: none. */
  maxRetries?: number
  /** First backoff ceiling; the n-th retry waits a random time up to `baseDelayMs · 2^(n-1)` (full jitter). Default 250 ms. */
  baseDelayMs?: number
  /** Longest wait before a retry, `Retry-After` included: a longer one moves on to the next provider. Default 10000 ms. */
  maxDelayMs?: number
}
