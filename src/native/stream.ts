import { newGenerationId } from '../generation/id'
import type { GatewayContext } from '../context'
import { chatStreamBilling } from '../chat/stream-billing'
import type { ChatServeInput } from '../chat/serve-input'
import { settledStream } from '../pipeline/stream'
import type { NativeRoute } from './route'

/**
 * Serves a streamed answer natively (docs/native.md#streaming): the provider's events passed on in the client's API
 * through the route's dialect, on the settled stream (src/pipeline/stream.ts): fallbacks before the first event,
 * billed once however it ends, aborts and the drain as chat's.
 */
export function completeNativeStream(ctx: GatewayContext, route: NativeRoute, input: ChatServeInput): Promise<Response> {
  const startedAt = ctx.now()
  const generationId = newGenerationId(startedAt)
  const billing = chatStreamBilling(ctx, { ...input, generationId, startedAt })
  return settledStream(ctx, { ...input, generationId, startedAt, billing }, route.dialect(generationId), (attempt, options) =>
    attempt.offer.provider.native![route.api]!.stream(route.body(attempt), options, route.headers),
  )
}
