import { GatewayError, toGatewayError } from '../errors'
import type { RequestLog } from '../http/request-log'
import type { Logger } from '../logger'
import type { GatewayMetrics } from '../metrics/gateway-metrics'
import { isUpstreamError, UpstreamError, upstreamErrorOf } from '../providers/upstream-error'
import type { ByokStore } from '../stores/byok'
import type { Admission, HealthKey, HealthTracker } from './health'
import type { RoutingEvent, RoutingHooks } from './hooks'
import type { CallOptions } from '../contracts'
import type { Attempt } from './plan'
import type { OtelSpan } from '../telemetry/otel'
import type { Tracing } from '../telemetry/tracing'

/** What the health of an attempt is kept by: its provider, model and credential (docs/routing.md). */
export const healthKeyOf = (attempt: Attempt): HealthKey => ({
  provider: attempt.offer.provider.slug,
  model: attempt.entry.id,
  credential: attempt.credential?.id,
})

// The provider as hooks and logs name it: the customer's key is told apart from the service's.
const labelOf = (attempt: Attempt) => (attempt.credential ? `${attempt.offer.provider.slug}:byok:${attempt.credential.id}` : attempt.offer.provider.slug)

/**
 * What the attempt loop uses of a gateway (its context is one): the deadline, timeout, retry options and hooks, the
 * health it admits by and records to, the customers' secrets it opens, its clock, logs, metrics and traces.
 */
export interface AttemptServices {
  options: {
    requestTimeoutMs: number
    upstreamTimeoutMs: number
    retry: { maxRetries: number; baseDelayMs: number; maxDelayMs: number }
    hooks: RoutingHooks
  }
  health: Pick<HealthTracker, 'admit' | 'retryAt' | 'release' | 'record'>
  byok: Pick<ByokStore, 'secretOf' | 'touch'>
  now: () => number
  logger: Logger
  requestLog: Pick<RequestLog, 'traceOf'>
  metrics?: Pick<GatewayMetrics, 'upstreamError'>
  tracing?: Tracing
}

function emit<K extends keyof RoutingHooks>(ctx: AttemptServices, name: K, event: Parameters<NonNullable<RoutingHooks[K]>>[0]) {
  try {
    ;(ctx.options.hooks[name] as ((e: typeof event) => void) | undefined)?.(event)
  } catch (error) {
    ctx.logger.warn(`routing hook ${name} threw`, { error: (error as Error).message })
  }
}

// Never let a customer's secret reach a client or a log through a provider's error message.
function redactSecret(error: GatewayError, secret: string | undefined): GatewayError {
  if (!secret || !JSON.stringify(error.toJSON()).includes(secret.slice(0, 12))) return error
  const scrub = (text: string) => text.split(secret).join('[redacted]').split(secret.slice(0, 12)).join('[redacted]')
  if (isUpstreamError(error)) return error.scrubbed(scrub)
  const metadata = error.metadata && JSON.parse(scrub(JSON.stringify(error.metadata)))
  return new GatewayError(error.status, scrub(error.message), { metadata, headers: error.headers })
}

// The error as hooks, logs, metrics and spans name it: an upstream error by its kind, any other by its envelope.
const describe = (error: GatewayError) => ({
  status: error.status,
  type: error.type,
  message: error.message,
  error_type: isUpstreamError(error) ? error.kind : (error.metadata?.error_type as string | undefined),
})

/** What one request's search for a provider shares: where it stands, and how it ends. */
interface Search<T> {
  ctx: AttemptServices
  requestId: string
  org: string | undefined
  call: (attempt: Attempt, options: CallOptions) => Promise<T>
  signal: AbortSignal
  deadline: { passed: boolean; at: number }
  /** Upstream calls made so far, retries included. */
  tries: number
  /** Asked before each fallback (an attempt failed, `next` is about to be tried); false ends the search with that failure. */
  beforeFallback?: (next: Attempt) => Promise<boolean>
  /** The client's own signal, when `signal` does not follow it (a stream's upstream call): checked before every call. */
  client?: AbortSignal
}

type CandidateOutcome<T> = { ok: true; result: T } | { ok: false; error: GatewayError; fallback: boolean; event: RoutingEvent }

/**
 * Serves a request from the first attempt that succeeds (docs/routing.md): each provider is retried on 429, 503, 529
 * and connection errors (backoff with full jitter, or its `Retry-After`, within the deadline), then the next is tried
 * on any failure of the provider (5xx, timeouts, malformed answers); an error caused by the request is answered as it
 * is. An open breaker skips its provider, but when nothing else is left the one whose cool-down ends first is tried
 * anyway. The deadline bounds the whole search (408). `beforeFallback`, when given, is asked before each fallback and
 * can end the search with the last failure instead (embeddings: docs/embeddings.md#batches).
 */
export async function firstSuccessful<T>(
  ctx: AttemptServices,
  attempts: Attempt[],
  input: {
    signal: AbortSignal
    requestId: string
    org: string | undefined
    abort?: AbortController
    beforeFallback?: (next: Attempt) => Promise<boolean>
    /**
     * The client's own signal when `signal` does not follow it (a stream keeps its upstream call apart from its client):
     * no upstream call is made once it aborted (docs/money.md: a client that left before a provider answered pays nothing).
     */
    client?: AbortSignal
  },
  call: (attempt: Attempt, options: CallOptions) => Promise<T>,
): Promise<{ result: T; attempt: Attempt; tries: number }> {
  // One controller for the client going away and the deadline (cheaper than AbortSignal.any per request): the
  // caller's own when it lends it (`abort`, whose signal is `signal`), else one that follows `signal`, whose abort
  // keeps reaching it after this returns (a stream goes on reading through it). A timer of our own, cleared at the
  // end (AbortSignal.timeout would linger for the whole deadline per request).
  const controller = input.abort ?? new AbortController()
  const deadline = { passed: false, at: performance.now() + ctx.options.requestTimeoutMs }
  if (!input.abort) {
    if (input.signal.aborted) controller.abort(input.signal.reason)
    else input.signal.addEventListener('abort', () => controller.abort(input.signal.reason), { once: true })
  }
  const deadlineTimer = setTimeout(() => {
    deadline.passed = true
    controller.abort()
  }, ctx.options.requestTimeoutMs)
  try {
    const search = {
      ctx,
      requestId: input.requestId,
      org: input.org,
      call,
      signal: controller.signal,
      deadline,
      tries: 0,
      beforeFallback: input.beforeFallback,
      client: input.client,
    }
    return await tryInOrder(search, attempts)
  } finally {
    clearTimeout(deadlineTimer)
  }
}

async function tryInOrder<T>(search: Search<T>, attempts: Attempt[]): Promise<{ result: T; attempt: Attempt; tries: number }> {
  const { ctx, org } = search
  const cooling: Attempt[] = []
  let forced = false
  let failed: { error: GatewayError; event: RoutingEvent } | undefined
  let next = 0
  for (;;) {
    // The next attempt whose breaker admits it; those cooling down are set aside.
    let attempt: Attempt | undefined
    let admission: Admission = { probe: false }
    while (!attempt && next < attempts.length) {
      const candidate = attempts[next++]
      // A request's own key is always tried: another request's failures with another key say nothing of it.
      const admitted = candidate.requestKey ? { probe: false } : ctx.health.admit(healthKeyOf(candidate), org)
      if (admitted) [attempt, admission] = [candidate, admitted]
      else cooling.push(candidate)
    }
    // The breaker never refuses the last way to serve a request: the one whose cool-down ends first is tried anyway.
    if (!attempt && !forced && cooling.length && !search.signal.aborted) {
      forced = true
      const retryAt = (a: Attempt) => ctx.health.retryAt(healthKeyOf(a), org) ?? 0
      attempt = cooling.reduce((best, a) => (retryAt(a) < retryAt(best) ? a : best))
      ctx.logger.info(`every other way is cooling down; trying ${labelOf(attempt)} for ${attempt.entry.id} anyway`, { request_id: search.requestId })
    }
    if (!attempt) break
    if (failed && search.beforeFallback && !(await search.beforeFallback(attempt))) {
      ctx.health.release(healthKeyOf(attempt), admission)
      break
    }
    let secret: string | undefined
    // The request's own key (docs/byok.md#keys-for-one-request) is in memory; a stored one is opened.
    if (attempt.requestKey) secret = attempt.requestKey.secret()
    else if (attempt.credential) {
      try {
        secret = await ctx.byok.secretOf(attempt.credential)
      } catch (error) {
        // Sealed under a secret this gateway no longer has: skip it (the next attempt serves), and say so loudly.
        ctx.health.release(healthKeyOf(attempt), admission)
        ctx.logger.error('a BYOK credential cannot be decrypted; skipped', { credential_id: attempt.credential.id, error: (error as Error).message })
        continue
      }
    }
    if (failed) {
      const nextOne = { model: attempt.entry.id, provider: labelOf(attempt) }
      emit(ctx, 'onFallback', { ...failed.event, next: nextOne })
      ctx.logger.warn(`${failed.event.provider} failed for ${failed.event.model}; trying ${nextOne.provider}`, {
        request_id: search.requestId,
        error_type: failed.event.error?.error_type,
      })
    }
    const outcome = await tryCandidate(search, attempt, admission, secret)
    if (outcome.ok) return { result: outcome.result, attempt, tries: search.tries }
    failed = { error: outcome.error, event: outcome.event }
    if (!outcome.fallback || search.signal.aborted) break
  }
  if (failed) {
    emit(ctx, 'onFailure', failed.event)
    throw failed.error
  }
  const failure = new GatewayError(503, 'No provider is available: no credential of the candidates could be used', {
    metadata: { models: [...new Set(attempts.map((a) => a.entry.id))] },
  })
  emit(ctx, 'onFailure', {
    requestId: search.requestId,
    model: attempts[0].entry.id,
    provider: labelOf(attempts[0]),
    attempt: 0,
    retry: 0,
    error: describe(failure),
  })
  throw failure
}

// Calls one provider, retrying it while its failures say a pause may help; reports how the provider did to its health.
async function tryCandidate<T>(search: Search<T>, attempt: Attempt, admission: Admission, secret: string | undefined): Promise<CandidateOutcome<T>> {
  const { ctx, org, signal, deadline } = search
  const key = healthKeyOf(attempt)
  let admitted: Admission | undefined = admission
  try {
    for (let retry = 0; ; retry++) {
      // The client left (while the hold, a retry's pause or a storage stall was awaited): no call is made, nothing billed.
      if (signal.aborted || search.client?.aborted)
        return {
          ok: false,
          error: clientLeft(),
          fallback: false,
          event: { requestId: search.requestId, model: attempt.entry.id, provider: labelOf(attempt), attempt: search.tries, retry },
        }
      search.tries++
      // The attempt's event, built when a hook or a failure needs it (the success of a gateway without hooks does not).
      const tries = search.tries
      const eventOf = (): RoutingEvent => ({ requestId: search.requestId, model: attempt.entry.id, provider: labelOf(attempt), attempt: tries, retry })
      if (ctx.options.hooks.onAttempt) emit(ctx, 'onAttempt', eventOf())
      const started = performance.now()
      const traced = ctx.tracing && traceAttempt(ctx.tracing, ctx.requestLog.traceOf(search.requestId), attempt, search.tries, retry)
      try {
        const options: CallOptions = secret
          ? { signal, timeoutMs: ctx.options.upstreamTimeoutMs, apiKey: secret }
          : { signal, timeoutMs: ctx.options.upstreamTimeoutMs }
        if (traced) options.headers = traced.headers
        const result = await search.call(attempt, options)
        if (traced) ctx.tracing!.end(traced.span)
        if (attempt.credential && !attempt.requestKey) void ctx.byok.touch(attempt.credential).catch(() => undefined)
        const latencyMs = performance.now() - started
        ctx.health.record(key, org, { ok: true, latencyMs })
        admitted = undefined
        if (ctx.options.hooks.onSuccess) emit(ctx, 'onSuccess', Object.assign(eventOf(), { latencyMs }))
        return { ok: true, result }
      } catch (thrown) {
        const latencyMs = performance.now() - started
        const error = deadline.passed ? deadlineError(ctx, attempt) : redactSecret(toGatewayError(thrown, search.requestId), secret)
        const failed = Object.assign(eventOf(), { latencyMs, error: describe(error) })
        const errorType = String(failed.error.error_type ?? error.type)
        if (traced) ctx.tracing!.end(traced.span, { type: errorType, message: error.message })
        // The client leaving is not the provider's error; a deadline is (it never answered in time).
        if (!signal.aborted || deadline.passed) ctx.metrics?.upstreamError(attempt.offer.provider.slug, errorType)
        // Only the provider's failures count for its health: never the request's own 4xx, its client leaving or its
        // deadline. A customer's key that the provider refuses is worth falling back from (to the service's key).
        const upstream = upstreamErrorOf(error, attempt.offer.provider)
        if (signal.aborted || !upstream || !(upstream.retryable || (attempt.credential !== undefined && upstream.kind === 'authentication')))
          return { ok: false, error, fallback: false, event: failed }
        ctx.health.record(key, org, { ok: false, latencyMs })
        admitted = undefined
        const delay = retry < ctx.options.retry.maxRetries && upstream.retryOnSameProvider ? retryDelay(search, upstream, retry) : null
        if (delay === null) return { ok: false, error, fallback: true, event: failed }
        emit(ctx, 'onRetry', { ...failed, delayMs: delay })
        if (!(await pause(delay, signal))) return { ok: false, error: deadline.passed ? deadlineError(ctx, attempt) : error, fallback: false, event: failed }
      }
    }
  } finally {
    if (admitted) ctx.health.release(key, admitted)
  }
}

// An attempt's span (docs/operations.md#traces): the GenAI operation on the provider's model, under the request's span.
function traceAttempt(tracing: Tracing, request: { span?: OtelSpan; operation?: string } | undefined, attempt: Attempt, tries: number, retry: number) {
  const operation = request?.operation ?? 'chat'
  return tracing.attempt(request?.span, `${operation} ${attempt.offer.upstreamId}`, {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': attempt.offer.provider.slug,
    'gen_ai.request.model': attempt.offer.upstreamId,
    'model_gateway.model': attempt.entry.id,
    'model_gateway.provider': attempt.offer.provider.slug,
    'model_gateway.attempt': tries,
    'model_gateway.retry': retry,
    'model_gateway.fallback': retry === 0 && tries > 1,
    'model_gateway.byok': attempt.credential !== undefined,
  })
}

// The error of a request whose client left before a provider was called: never sent to anyone (the client is gone).
const clientLeft = () => new GatewayError(408, 'The client closed the request before a provider was called', { metadata: { error_type: 'client_closed' } })

const deadlineError = (ctx: AttemptServices, attempt: Attempt) =>
  new UpstreamError({
    kind: 'timeout',
    provider: attempt.offer.provider,
    message: `No provider answered within the request's deadline of ${ctx.options.requestTimeoutMs} ms`,
  })

// The wait before retrying a provider: its own Retry-After, else full jitter up to baseDelayMs · 2^retry; null when
// that wait is longer than retry.maxDelayMs or would pass the request's deadline (the router moves on instead).
function retryDelay(search: Search<unknown>, error: UpstreamError, retry: number): number | null {
  const { baseDelayMs, maxDelayMs } = search.ctx.options.retry
  const asked = error.retryAfterMs
  const delay = Math.floor(asked ?? Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** retry))
  return delay > maxDelayMs || delay >= search.deadline.at - performance.now() ? null : delay
}

// Waits `ms`; false when the signal aborts first (the client left, or the deadline passed).
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const done = (waited: boolean) => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      resolve(waited)
    }
    const onAbort = () => done(false)
    const timer = setTimeout(() => done(true), ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
