import type { GatewayContext } from '../context'
import { GatewayError, toGatewayError } from '../errors'
import { isRetryable } from '../providers/upstream-error'
import type { CallOptions, UpstreamChatRequest } from '../providers/types'
import type { ChatRequest } from '../schemas/chat'
import type { Attempt } from './plan'

/** The request as the attempt's provider receives it: gateway-only fields removed, the provider's model id. */
export function upstreamRequestFor(request: ChatRequest, attempt: Attempt): UpstreamChatRequest {
  const { model: _model, models: _models, provider: _provider, ...rest } = request
  return { ...rest, model: attempt.offer.upstreamId }
}

/** What a routing hook receives. */
export interface RoutingEvent {
  requestId: string
  model: string
  provider: string
  /** 1 for the first attempt. */
  attempt: number
  latencyMs?: number
  error?: { status: number; type: string; message: string; error_type?: string }
}

/** Hooks for the host's logs and metrics; a hook that throws is logged and ignored. */
export interface RoutingHooks {
  /** An attempt starts. */
  onAttempt?: (event: RoutingEvent) => void
  /** An attempt failed with a retryable error; the next one (`next`) is tried. */
  onFallback?: (event: RoutingEvent & { next: { model: string; provider: string } }) => void
  /** The request was served by this attempt. */
  onSuccess?: (event: RoutingEvent) => void
  /** The request failed: no attempt served it. */
  onFailure?: (event: RoutingEvent) => void
}

function emit<K extends keyof RoutingHooks>(ctx: GatewayContext, name: K, event: Parameters<NonNullable<RoutingHooks[K]>>[0]) {
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
  const metadata = error.metadata && JSON.parse(scrub(JSON.stringify(error.metadata)))
  return new GatewayError(error.status, scrub(error.message), { metadata, headers: error.headers })
}

const describe = (error: GatewayError) => ({
  status: error.status,
  type: error.type,
  message: error.message,
  error_type: error.metadata?.error_type as string | undefined,
})

/**
 * Runs `call` on each attempt in order until one succeeds (decisions.md §8): a retryable failure (429, 5xx, connection
 * errors, timeouts, malformed answers) moves on to the next attempt, any other is answered as it is. Attempts whose
 * breaker is open are skipped; outcomes feed the health tracker. The deadline bounds the whole search (408).
 */
export async function firstSuccessful<T>(
  ctx: GatewayContext,
  attempts: Attempt[],
  input: { signal: AbortSignal; requestId: string; abort?: AbortController },
  call: (attempt: Attempt, options: CallOptions) => Promise<T>,
): Promise<{ result: T; attempt: Attempt; tries: number }> {
  // One controller for the client going away and the deadline (cheaper than AbortSignal.any per request): the
  // caller's own when it lends it (`abort`, whose signal is `signal`), else one that follows `signal`, whose abort
  // keeps reaching it after this returns (a stream goes on reading through it). A timer of our own, cleared at the
  // end (AbortSignal.timeout would linger for the whole deadline per request).
  const controller = input.abort ?? new AbortController()
  const deadline = { passed: false }
  if (!input.abort) {
    if (input.signal.aborted) controller.abort(input.signal.reason)
    else input.signal.addEventListener('abort', () => controller.abort(input.signal.reason), { once: true })
  }
  const deadlineTimer = setTimeout(() => {
    deadline.passed = true
    controller.abort()
  }, ctx.options.requestTimeoutMs)
  try {
    return await tryInOrder(ctx, attempts, input, call, controller.signal, deadline)
  } finally {
    clearTimeout(deadlineTimer)
  }
}

async function tryInOrder<T>(
  ctx: GatewayContext,
  attempts: Attempt[],
  input: { signal: AbortSignal; requestId: string },
  call: (attempt: Attempt, options: CallOptions) => Promise<T>,
  signal: AbortSignal,
  deadline: { passed: boolean },
): Promise<{ result: T; attempt: Attempt; tries: number }> {
  let lastError: GatewayError | undefined
  let tries = 0
  for (let i = 0; i < attempts.length; i++) {
    const attempt = attempts[i]
    // A customer's key has its own health: its rate limits or failures say nothing of the provider for others.
    const provider = attempt.credential ? `${attempt.offer.provider.slug}:byok:${attempt.credential.id}` : attempt.offer.provider.slug
    const model = attempt.entry.id
    if (!ctx.health.admit(provider, model)) continue // its breaker opened while earlier attempts ran
    let secret: string | undefined
    if (attempt.credential) {
      try {
        secret = await ctx.byok.secretOf(attempt.credential)
      } catch (error) {
        // Sealed under a secret this gateway no longer has: skip it (the next attempt serves), and say so loudly.
        ctx.logger.error('a BYOK credential cannot be decrypted; skipped', { credential_id: attempt.credential.id, error: (error as Error).message })
        continue
      }
    }
    tries++
    const event: RoutingEvent = { requestId: input.requestId, model, provider, attempt: tries }
    emit(ctx, 'onAttempt', event)
    const started = performance.now()
    try {
      const result = await call(attempt, { signal, timeoutMs: ctx.options.upstreamTimeoutMs, ...(secret ? { apiKey: secret } : {}) })
      if (attempt.credential) void ctx.byok.touch(attempt.credential).catch(() => undefined)
      const latencyMs = performance.now() - started
      ctx.health.record(provider, model, { ok: true, latencyMs })
      emit(ctx, 'onSuccess', { ...event, latencyMs })
      return { result, attempt, tries }
    } catch (thrown) {
      const latencyMs = performance.now() - started
      const error = deadline.passed
        ? new GatewayError(408, `No provider answered within the request's deadline of ${ctx.options.requestTimeoutMs} ms`, { metadata: { provider_name: attempt.offer.provider.name, error_type: 'timeout' } })
        : redactSecret(toGatewayError(thrown, input.requestId), secret)
      lastError = error
      // A customer's key that the provider refuses is worth falling back from (to the service's key or another).
      const retryable = isRetryable(error) || (attempt.credential !== undefined && error.metadata?.error_type === 'authentication')
      if (retryable) ctx.health.record(provider, model, { ok: false, latencyMs })
      const next = attempts.slice(i + 1).find((a) => ctx.health.state(a.offer.provider.slug, a.entry.id) !== 'open')
      if (signal.aborted || !retryable || !next) {
        emit(ctx, 'onFailure', { ...event, latencyMs, error: describe(error) })
        throw error
      }
      emit(ctx, 'onFallback', { ...event, latencyMs, error: describe(error), next: { model: next.entry.id, provider: next.offer.provider.slug } })
      ctx.logger.warn(`${provider} failed for ${model}; trying ${next.offer.provider.slug}`, { request_id: input.requestId, error_type: error.metadata?.error_type })
    }
  }
  const failure = lastError ?? new GatewayError(503, 'No provider is available: every candidate is cooling down after recent failures', { metadata: { models: [...new Set(attempts.map((a) => a.entry.id))] } })
  if (!lastError) emit(ctx, 'onFailure', { requestId: input.requestId, model: attempts[0].entry.id, provider: attempts[0].offer.provider.slug, attempt: 0, error: describe(failure) })
  throw failure
}
