import { type Hold, releaseOrLog } from '../billing/holds'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import type { StreamBilling } from '../pipeline/stream'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/account-types'
import { type BilledChat, estimatedUsage, mayReason, settle } from './billing'

/**
 * How a stream served for a chat request is billed (docs/money.md): at chat's prices with the usage the provider
 * reported or, when it reported none, an estimate of what it generated (replacing the request's hold); or its hold
 * released. Chat's streams and the native ones (docs/native.md#streaming) bill so.
 */
export function chatStreamBilling(
  ctx: GatewayContext,
  input: { principal: Principal; request: ChatRequest; hold: Hold; requestId: string; tags?: GenerationTags; generationId: string; startedAt: number },
): StreamBilling<BilledChat> {
  return {
    charge: (served, status, tally) =>
      settle(ctx, {
        principal: input.principal,
        attempt: served.attempt,
        request: input.request,
        generationId: input.generationId,
        upstreamId: tally.upstreamId,
        stream: true,
        status,
        startedAt: input.startedAt,
        attempts: served.tries,
        hold: input.hold,
        tags: input.tags,
        firstChunkAt: served.firstAt,
        nativeFinishReason: tally.nativeFinishReason,
        estimated: !tally.reported,
        usage:
          tally.reported ??
          estimatedUsage(ctx, input.request, served.attempt, { generatedChars: tally.generatedChars, status, elapsedMs: ctx.now() - input.startedAt }),
      }),
    release: () => releaseOrLog(ctx, input.hold, input.requestId),
    readsOn: (attempt) => mayReason(input.request, attempt),
  }
}
