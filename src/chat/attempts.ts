import type { GatewayContext } from '../context'
import { isRetryable } from '../providers/upstream-error'
import type { CallOptions, UpstreamChatRequest } from '../providers/types'
import type { ChatRequest } from '../schemas/chat'
import type { Attempt } from './plan'

/** The request as the attempt's provider receives it: gateway-only fields removed, the provider's model id. */
export function upstreamRequestFor(request: ChatRequest, attempt: Attempt): UpstreamChatRequest {
  const { model: _model, models: _models, provider: _provider, ...rest } = request
  return { ...rest, model: attempt.offer.upstreamId }
}

/** Runs `call` on each attempt in order until one succeeds; a retryable failure moves on, any other is thrown. */
export async function firstSuccessful<T>(
  ctx: GatewayContext,
  attempts: Attempt[],
  signal: AbortSignal,
  call: (attempt: Attempt, options: CallOptions) => Promise<T>,
): Promise<{ result: T; attempt: Attempt; tries: number }> {
  let lastError: unknown
  for (let i = 0; i < attempts.length; i++) {
    const attempt = attempts[i]
    try {
      const result = await call(attempt, { signal, timeoutMs: ctx.options.upstreamTimeoutMs })
      return { result, attempt, tries: i + 1 }
    } catch (error) {
      lastError = error
      if (signal.aborted || !isRetryable(error) || i === attempts.length - 1) throw error
      ctx.logger.warn(`${attempt.offer.provider.slug} failed for ${attempt.entry.id}; trying the next provider`, {
        error_type: (error as { metadata?: { error_type?: string } }).metadata?.error_type,
        next: `${attempts[i + 1].offer.provider.slug}:${attempts[i + 1].entry.id}`,
      })
    }
  }
  throw lastError
}
