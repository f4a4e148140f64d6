import { H3, H3Event, type EventHandler } from 'h3'
import { createStorage, type Storage } from 'unstorage'
import { createAdmin, type GatewayAdmin } from './admin'
import type { GatewayContext } from './context'
import { GatewayError, notFound } from './errors'
import { DEFAULT_BODY_LIMIT } from './http/body'
import { createInFlight } from './http/in-flight'
import { resolvePublicUrl } from './http/public-url'
import { answerError, toRouteHandler } from './routes/route-handler'
import { preflight, resolveCors } from './http/cors'
import { createConsoleLogger, silentLogger, toGatewayLogger } from './logger'
import type { GatewayOptions, ResolvedOptions } from './options'
import type { RouteDefinition } from './routes/define'
import { apiRoutes } from './routes'
import { createMetricsRoute } from './routes/metrics'
import { createOpenApiRoute } from './routes/openapi'
import { createAccountsStore } from './stores/accounts'
import { createPrincipalCache } from './stores/principal-cache'
import { createAtomicOps } from './stores/atomic'
import { createHoldOps } from './stores/holds'
import { assertAtomicEngines } from './stores/engine-kind'
import type { AtomicOps } from './stores/engine-types'
import { createHoldsStore } from './stores/budgets'
import { createByokFeesStore } from './stores/byok-fees'
import { createConsentsStore } from './stores/consents'
import { createExpiringStore } from './stores/expiring'
import { createKeyCountersStore } from './stores/key-counters'
import { createSpendCountersStore } from './stores/spend-counters'
import { createRateLimitStore } from './stores/rate-limits'
import { createResponseCacheStore } from './stores/response-cache'
import { resolveCacheOptions } from './cache/options'
import { createResponsesStore, RESPONSES_PREFIX, STORED_RESPONSE_MAX_BYTES } from './stores/responses'
import { createRollupStore, DEFAULT_END_USERS_PER_DAY } from './stores/rollups'
import { createCreditsStore } from './stores/credits'
import { createKv, type Kv } from './stores/kv'
import { createProbeStore } from './stores/probe'
import { boundAtomic, boundHolds, boundKv, storageBoundFor } from './stores/bounded'
import { reportRedisErrors } from './stores/redis-errors'
import { storageTimeoutOption } from './stores/storage-timeout'
import { watchPostgres } from './stores/postgres-liveness'
import { createRequestLog } from './http/request-log'
import { createGatewayMetrics } from './metrics/gateway-metrics'
import { tracingFor } from './telemetry/tracing'
import { boundAppended, ownedStorage } from './stores/records'
import { createUsageStore } from './stores/usage'
import { createCodesStore } from './stores/codes'
import { deriveKey } from './crypto/tokens'
import { createCatalogue } from './catalogue/catalogue'
import { applyCatalogueOption } from './catalogue/catalogue-file'
import { createHealthTracker } from './routing/health'
import { resolveRoutingOptions } from './routing/routing-options'
import { createByokStore } from './stores/byok'
import { createSecretBox } from './crypto/secrets'
import { randomBytes, toBase64Url } from './crypto/hash'
import { settleByokFees } from './billing/byok-fees'
import { chargesOnceOn, createSettlementRetries, resolveSettlementRetries } from './billing/settlement-retries'
import { resolveRetention } from './maintenance/retention-options'
import { scheduleSweeps } from './maintenance/schedule'
import { indexLegacyCredentials } from './stores/byok-legacy'
import { DEFAULT_KEY_PREFIX } from './crypto/keys'
import { version } from './version'
import { createClient } from './client/client'
import type { ClientPrincipal, GatewayClient } from './client/types'
import { createSessions } from './stores/sessions'
import { resolveSessionOption } from './auth/session-option'
import { createHostUsersStore } from './stores/host-users'

/** A gateway: the h3 app with every route, each route's own handler, a fetch function, the admin API and close(). */
export interface Gateway {
  /** The h3 app serving every route under the base path (unknown paths answer the 404 envelope). */
  app: H3
  /** One self-contained h3 handler per route, by operationId (`getMe`, `createChatCompletion`, …), to mount one by one. */
  handlers: Record<string, EventHandler>
  /** The route definitions (method, path, schemas) the app serves. */
  routes: RouteDefinition[]
  /** Serves a web-standard Request. */
  fetch: (request: Request) => Promise<Response>
  /**
   * The error envelope (with the request id and CORS headers) answering `request` with `error`, for a failure met
   * before the gateway served it: an adapter's body parser refusing the body (docs/adapters.md#express).
   */
  answerError: (error: unknown, request: Request) => Response
  /** Programmatic accounts, keys and credits for the host app. */
  admin: GatewayAdmin
  /**
   * The gateway called from the host's server code without HTTP (docs/first-party.md#the-in-process-client), acting
   * as a request's session user (its h3 event), a host user, a gateway user id, or an API key.
   */
  client: (who: ClientPrincipal) => GatewayClient
  /** This instance's Prometheus metrics in the text exposition format (docs/operations.md#metrics); empty with `metrics: false`. */
  metrics: () => string
  /** The context every handler receives (stores, options, clock, logger). */
  context: GatewayContext
  /**
   * Internal: the raw storage and the atomic layer the stores work on, for tests that inspect or corrupt records.
   * Not an API: key layouts may change (src/stores/ owns them, docs/operations.md).
   */
  internals: GatewayInternals
  /**
   * Shuts down: refuses new requests (503), lets those in flight end up to `drainTimeoutMs` and aborts (and bills) the
   * rest, then releases what the gateway opened (its timers, the default in-memory storage). docs/operations.md.
   */
  close: () => Promise<void>
}

/** The raw storage under the stores (Gateway.internals): not an API. */
export interface GatewayInternals {
  storage: Storage
  kv: Kv
  atomic: AtomicOps
}

// A number option that must be positive and finite when given.
function positiveOption(value: number | undefined, name: string): number | undefined {
  if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw new TypeError(`model-gateway: \`${name}\` must be a positive number`)
  return value
}

// byok.maxCredentials: a whole number of at least 1 (docs/byok.md).
function maxCredentialsOption(value: number | undefined): number {
  if (value === undefined) return 50
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError('model-gateway: `byok.maxCredentials` must be a whole number of at least 1')
  return value
}

// bodyLimits (docs/limits.md#body-size): count_tokens takes what /messages takes unless told otherwise.
function resolveBodyLimits(limits: GatewayOptions['bodyLimits'] = {}): ResolvedOptions['bodyLimits'] {
  const chat = limits.chat ?? 10 * 1024 * 1024
  return {
    default: limits.default ?? DEFAULT_BODY_LIMIT,
    chat,
    transcription: limits.transcription ?? 25 * 1024 * 1024,
    countTokens: positiveOption(limits.countTokens, 'bodyLimits.countTokens') ?? chat,
  }
}

function maxKeysPerOrgOption(value: number | undefined): number {
  if (value === undefined) return 1000
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError('model-gateway: `keys.maxPerOrg` must be a whole number of at least 1')
  return value
}

// activity.endUsersPerDay: a whole number of at least 1 (docs/usage.md#usage-per-user-and-per-end-user).
function endUsersPerDayOption(value: number | undefined): number {
  if (value === undefined) return DEFAULT_END_USERS_PER_DAY
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError('model-gateway: `activity.endUsersPerDay` must be a whole number of at least 1')
  return value
}

function resolveOptions(options: GatewayOptions, warn: (message: string) => void): ResolvedOptions {
  const basePath = `/${(options.basePath ?? '/api/v1').replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '')
  let secret = options.secret
  if (!secret) {
    secret = toBase64Url(randomBytes(32))
    warn('no `secret` given: using a random one, so encrypted records and signed tokens will not survive a restart')
  } else if (secret.length < 32) {
    throw new TypeError('model-gateway: `secret` must be at least 32 characters')
  }
  const session = resolveSessionOption(options.session)
  return {
    storagePrefix: options.storagePrefix ?? 'gateway',
    // The catalogue file's prices and models, before the catalogue is built (docs/catalogue.md).
    providers: applyCatalogueOption(options.providers ?? [], options.catalogue, options.logger),
    modelOverrides: options.modelOverrides ?? {},
    exchangeRates: { EUR: '1', USD: '0.86', ...options.exchangeRates },
    upstreamTimeoutMs: options.upstreamTimeoutMs ?? 120_000,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    modelRefreshSeconds: options.modelRefreshSeconds ?? 600,
    chatLinkTemplate: options.chatLinkTemplate ?? '/?model={id}',
    basePath,
    publicUrl: resolvePublicUrl(options.publicUrl),
    secret,
    keyPrefix: options.keyPrefix ?? DEFAULT_KEY_PREFIX,
    keyTtlSeconds: options.keyTtlSeconds,
    keys: { maxPerOrg: maxKeysPerOrgOption(options.keys?.maxPerOrg) },
    defaultPlan: options.defaultPlan ?? 'free',
    publicCatalogue: options.publicCatalogue ?? true,
    bodyLimits: resolveBodyLimits(options.bodyLimits),
    lastUsedIntervalSeconds: options.lastUsedIntervalSeconds ?? 60,
    authCache: options.authCache ?? {},
    requestTimeoutMs: options.requestTimeoutMs ?? 300_000,
    previousSecrets: options.previousSecrets ?? [],
    byok: {
      freeRequestAllowance: options.byok?.freeRequestAllowance ?? 1_000_000,
      platformFeeRate: options.byok?.platformFeeRate ?? '0.05',
      settlementIntervalSeconds: options.byok?.settlementIntervalSeconds ?? 3600,
      maxCredentials: maxCredentialsOption(options.byok?.maxCredentials),
    },
    retention: resolveRetention(options.retention),
    cache: resolveCacheOptions(options.cache),
    activity: { endUsersPerDay: endUsersPerDayOption(options.activity?.endUsersPerDay) },
    holdTtlSeconds: positiveOption(options.holdTtlSeconds, 'holdTtlSeconds') ?? 900,
    abortedStreamUsageWaitMs: options.abortedStreamUsageWaitMs ?? 30_000,
    settlementRetries: resolveSettlementRetries(options.settlementRetries),
    ...resolveRoutingOptions(options),
    drainTimeoutMs: positiveOption(options.drainTimeoutMs, 'drainTimeoutMs') ?? 30_000,
    storageTimeoutMs: storageTimeoutOption(options.storageTimeoutMs),
    rateLimits: options.rateLimits ?? {},
    hooks: options.hooks ?? {},
    policies: options.policies ?? [],
    auth: { ...options.auth, returnToParam: options.auth?.returnToParam ?? 'return_to', codeTtlSeconds: options.auth?.codeTtlSeconds ?? 600 },
    session,
    cors: resolveCors(options.cors, session?.trustedOrigins),
  }
}

// Every price must convert to EUR exactly: check the rates once, at creation, rather than on a paid request.
function assertPricesConvertible(options: ResolvedOptions) {
  for (const [currency, rate] of Object.entries(options.exchangeRates)) {
    if (!/^\d+(?:\.\d+)?$/.test(rate)) throw new TypeError(`model-gateway: exchangeRates.${currency} must be a decimal string, got ${JSON.stringify(rate)}`)
  }
  const slugs = new Set<string>()
  for (const provider of options.providers) {
    if (slugs.has(provider.slug)) throw new TypeError(`model-gateway: two providers have the slug ${provider.slug}`)
    slugs.add(provider.slug)
    for (const model of provider.models) {
      const currency = options.modelOverrides[model.id]?.pricing?.currency ?? model.pricing.currency ?? 'USD'
      if (!options.exchangeRates[currency])
        throw new TypeError(`model-gateway: no exchange rate to EUR for ${currency} (model ${model.id} of ${provider.slug}); set exchangeRates.${currency}`)
    }
  }
}

function createContext(options: GatewayOptions, storage: Storage): { ctx: GatewayContext; internals: GatewayInternals } {
  const logger = options.logger === false ? silentLogger : toGatewayLogger(options.logger ?? createConsoleLogger())
  const resolved = resolveOptions(options, (message) => logger.warn(message))
  const now = options.clock ?? Date.now
  const rawKv = createKv(storage, resolved.storagePrefix)
  assertAtomicEngines(storage, resolved.storagePrefix, options.atomic)
  // Every wait for a storage on a network is bounded: 503 past it, never a hang (docs/operations.md#when-the-storage-fails).
  const bound = storageBoundFor(storage, resolved.storagePrefix, options.atomic, resolved.storageTimeoutMs)
  const kv = bound ? boundKv(rawKv, bound) : rawKv
  const atomic = bound ? boundAtomic(createAtomicOps(storage, options.atomic), bound) : createAtomicOps(storage, options.atomic)
  const holdOps = createHoldOps(storage, options.atomic)
  const catalogue = createCatalogue({
    providers: resolved.providers,
    overrides: resolved.modelOverrides,
    logger,
    basePath: resolved.basePath,
    refreshSeconds: resolved.modelRefreshSeconds,
    timeoutMs: resolved.upstreamTimeoutMs,
    now,
  })
  assertPricesConvertible(resolved)
  const principalCache = createPrincipalCache(kv, resolved.authCache, logger)
  // Read by the gauges when the metrics render: the context is complete by then.
  const metrics =
    options.metrics === false
      ? undefined
      : createGatewayMetrics({
          health: () => ctx.health.snapshot(),
          inFlight: () => ctx.inFlight.size,
          settlementsPending: () => ctx.settlements.pending,
        })
  const tracing = tracingFor(options.tracing)
  const ctx: GatewayContext = {
    options: resolved,
    holds: createHoldsStore({ kv, atomic, ops: bound ? boundHolds(holdOps, bound) : holdOps }),
    keyCounters: createKeyCountersStore({ kv, atomic }),
    spendCounters: createSpendCountersStore({ kv, atomic }),
    byokFees: createByokFeesStore({ kv, atomic }),
    rateLimitCounts: createRateLimitStore({ kv, atomic }),
    consents: createConsentsStore({ kv, atomic }),
    expiring: createExpiringStore(kv, rawKv),
    now,
    logger,
    accounts: createAccountsStore({
      kv,
      atomic,
      now,
      keyPrefix: resolved.keyPrefix,
      keyTtlSeconds: resolved.keyTtlSeconds,
      defaultPlan: resolved.defaultPlan,
      cache: principalCache,
      maxKeysPerOrg: resolved.keys.maxPerOrg,
    }),
    credits: createCreditsStore({ kv, atomic, now }),
    sessions: undefined as never, // set below, over the accounts and credits stores
    usage: createUsageStore(kv),
    rollups: createRollupStore({ kv, atomic, endUsersPerDay: resolved.activity.endUsersPerDay }),
    codes: createCodesStore({ kv, atomic, now, ttlSeconds: resolved.auth.codeTtlSeconds }),
    consentKey: deriveKey(resolved.secret, 'consent-request'),
    health: createHealthTracker({ ...resolved.health, now }),
    byok: createByokStore({ kv, atomic, now, box: createSecretBox(resolved.secret, resolved.previousSecrets), maxCredentials: resolved.byok.maxCredentials }),
    responses: createResponsesStore({
      kv,
      atomic,
      now,
      retentionDays: resolved.retention.responsesDays,
      maxBytes: STORED_RESPONSE_MAX_BYTES,
      maxBytesPerOrg: resolved.retention.responsesBytesPerOrg,
      holdMs: resolved.holdTtlSeconds * 1000,
    }),
    responseCache: createResponseCacheStore({ kv, atomic, now }),
    catalogue,
    lastKeyUse: new Map(),
    inFlight: createInFlight(),
    probe: createProbeStore(kv),
    // PostgreSQL connections' errors are heard (a connection for life's failure crashed the process) and logged.
    storageLiveness: watchPostgres(storage, resolved.storagePrefix, logger),
    requestLog: createRequestLog(logger, now, {
      log: logger !== silentLogger,
      ended: metrics && ((route, line, seconds) => metrics.request(route, line.method, line.status ?? 500, seconds)),
      tracing,
    }),
    metrics,
    tracing,
    // Last: it opens its journal, if any, whose settlements a former process left are tried once the context is built.
    settlements: createSettlementRetries({
      settle: (input) => ctx.holds.settle(input),
      chargesOnce: chargesOnceOn(storage, resolved.storagePrefix, options.atomic),
      options: resolved.settlementRetries,
      logger,
      now,
      metrics,
    }),
  }
  ctx.sessions = createSessions({
    session: resolved.session,
    accounts: ctx.accounts,
    credits: ctx.credits,
    hostUsers: createHostUsersStore({ kv, atomic }),
    now,
    logger,
  })
  return { ctx, internals: { storage, kv, atomic } }
}

/** Creates a gateway: every `/api/v1` route (docs/api.md#routes) on h3, over the given storage and providers. */
export function createGateway(options: GatewayOptions = {}): Gateway {
  const ownsStorage = !options.storage
  const storage = options.storage ?? ownedStorage(createStorage())
  const { ctx, internals } = createContext(options, storage)
  // A gateway without a provider serves no model: said at once, not found out from a 404 (docs/providers.md).
  if (!ctx.options.providers.length)
    ctx.logger.warn(
      'no provider is configured: the gateway serves no model and /models is empty; give createGateway({ providers: [...] }), e.g. demo() for the offline demo models or openai({ apiKey }) (docs/providers.md)',
    )
  // The Redis client's connection errors go to the logger, never to stderr (docs/operations.md#when-the-storage-fails).
  const stopRedisErrors = reportRedisErrors(storage, ctx.options.storagePrefix, ctx.logger)
  // What the default in-memory storage appends per request is bounded (docs/retention.md#the-default-in-memory-storage).
  if (ownsStorage) {
    const prefix = ctx.options.storagePrefix
    const appended = ['usage', 'generation-ids', 'ledger', RESPONSES_PREFIX].map((kind) => (prefix ? `${prefix}:${kind}:` : `${kind}:`))
    // A stored response the bound deletes no longer counts against its org's cap (docs/responses.md#stored-responses).
    const tell = (key: string, record: unknown) =>
      void ctx.responses.evicted(key, record).catch((error) => ctx.logger.error('uncounting a stored response failed', { error: String(error) }))
    const evicted = { prefix: appended[3], tell }
    boundAppended(storage, { prefixes: appended, max: ctx.options.retention.inMemoryRecords, evicted })
  }
  const { basePath, publicCatalogue } = ctx.options
  const routes = [...apiRoutes]
  // GET /metrics only when asked for (docs/operations.md#metrics), and then in the OpenAPI document too.
  if (options.metrics && options.metrics.route === true) routes.push(createMetricsRoute(options.metrics.bearerToken))
  routes.push(createOpenApiRoute([...routes], { basePath, version, publicCatalogue }))

  const handlers: Record<string, EventHandler> = {}
  const byPath = new Map<string, Map<string, EventHandler>>()
  for (const route of routes) {
    const handler = toRouteHandler(route, ctx)
    handlers[route.operationId] = handler
    const methods = byPath.get(route.path) ?? new Map<string, EventHandler>()
    methods.set(route.method, handler)
    byPath.set(route.path, methods)
  }

  const app = new H3({
    silent: true,
    onError: (error, event) => answerError(error.cause instanceof GatewayError ? error.cause : error, event, ctx),
  })
  // One handler per path dispatches on the method, so that a known path with another method answers 405 with Allow;
  // OPTIONS is a CORS preflight (src/http/cors.ts), unless CORS is off.
  const { cors } = ctx.options
  for (const [path, methods] of byPath) {
    const allow = [...methods.keys(), ...(methods.has('GET') ? ['HEAD'] : [])].join(', ')
    app.all(basePath + path, (event) => {
      const method = event.req.method === 'HEAD' ? 'GET' : event.req.method
      const handler = methods.get(method)
      if (handler) return handler(event)
      if (cors && method === 'OPTIONS') return preflight(event, cors)
      return answerError(
        new GatewayError(405, `Method ${event.req.method} is not allowed on ${basePath}${path}; allowed: ${allow}`, { headers: { allow } }),
        event,
        ctx,
      )
    })
  }
  // OpenRouter's clients begin the browser flow at the site root: @openrouter/sdk's createAuthorizationUrl builds
  // `<origin>/auth?…` whatever the API's path. The same handler answers there (docs/pkce.md#the-browser-flow); a host
  // that mounts handlers one by one mounts `handlers.beginAuthorization` at `/auth`.
  if (basePath) {
    const begin = handlers.beginAuthorization
    app.all('/auth', (event) => {
      if (event.req.method === 'GET' || event.req.method === 'HEAD') return begin(event)
      if (cors && event.req.method === 'OPTIONS') return preflight(event, cors)
      return answerError(
        new GatewayError(405, `Method ${event.req.method} is not allowed on /auth; allowed: GET, HEAD`, { headers: { allow: 'GET, HEAD' } }),
        event,
        ctx,
      )
    })
  }
  app.all('/**', (event) =>
    cors && event.req.method === 'OPTIONS'
      ? preflight(event, cors)
      : answerError(notFound(`No route for ${event.req.method} ${event.url.pathname}`), event, ctx),
  )

  // Pending BYOK fees are settled periodically (and on demand through the admin API).
  const settleEvery = ctx.options.byok.settlementIntervalSeconds
  const settlement =
    settleEvery > 0
      ? setInterval(() => {
          settleByokFees(ctx).catch((error) => ctx.logger.error('BYOK settlement failed; it will run again', { error: (error as Error).message }))
        }, settleEvery * 1000)
      : undefined
  settlement?.unref?.()
  // Expired records are swept where the storage does not expire them itself (docs/retention.md).
  const sweeps = scheduleSweeps(ctx)
  // Credentials stored by 0.1 (before the per-org index) are indexed once, in the background (docs/byok.md).
  indexLegacyCredentials(internals.kv, internals.atomic)
    .then((orgs) => orgs && ctx.logger.info(`indexed the BYOK credentials of ${orgs} org(s) stored by an earlier version`))
    .catch((error) =>
      ctx.logger.error('indexing BYOK credentials of an earlier version failed; it runs again at the next start', { error: (error as Error).message }),
    )

  let closing: Promise<void> | undefined
  return {
    app,
    handlers,
    routes,
    fetch: async (request) => app.fetch(request),
    answerError: (error, request) => answerError(error, new H3Event(request), ctx),
    admin: createAdmin(ctx),
    client: (who) => createClient(ctx, who),
    metrics: () => ctx.metrics?.render() ?? '',
    context: ctx,
    internals,
    // Drains first (docs/operations.md): new requests are refused, those in flight end or are aborted at the deadline
    // and billed; only then do the timers stop and the storage it owns close. A second call awaits the same close.
    close() {
      return (closing ??= (async () => {
        const deadline = performance.now() + ctx.options.drainTimeoutMs
        await ctx.inFlight.drain(ctx.options.drainTimeoutMs, ctx.logger)
        // Settlements kept while the storage failed get the rest of the drain to land; what is left stays in the
        // journal, or is logged to charge by hand (docs/operations.md#settlements-that-fail).
        await ctx.settlements.close(Math.max(0, deadline - performance.now()))
        clearInterval(settlement)
        ctx.accounts.stopCache()
        ctx.storageLiveness.stop()
        // A sweep still waiting on the storage is not waited for past the drain's deadline.
        await sweeps.stop(Math.max(0, deadline - performance.now()))
        stopRedisErrors()
        if (ownsStorage) await storage.dispose()
      })())
    },
  }
}
