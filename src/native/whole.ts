import type { Hold } from '../billing/holds'
import { settle } from '../chat/billing'
import { chatUsageView } from '../chat/usage-view'
import { estimateTokens } from '../generation/estimate'
import { newGenerationId } from '../generation/id'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import { upstreamError } from '../providers/upstream-error'
import { firstSuccessful } from '../routing/attempts'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/account-types'
import type { NativeRoute } from './route'

/**
 * Serves a whole answer natively (docs/native.md): the first successful attempt's provider answers in the client's
 * API; billed once by the usage it reports (estimated from the text when it reports none), then rewritten by the
 * route (the gateway's ids, model and cost).
 */
export async function completeNativeWhole(
  ctx: GatewayContext,
  route: NativeRoute,
  input: { principal: Principal; request: ChatRequest; attempts: Attempt[]; signal: AbortSignal; requestId: string; hold: Hold; tags?: GenerationTags },
): Promise<Response> {
  const startedAt = ctx.now()
  const { result, attempt, tries } = await firstSuccessful(ctx, input.attempts, { ...input, org: input.principal.org.id }, (a, options) =>
    a.offer.provider.native![route.api]!.whole(route.body(a), options, route.headers),
  )
  const generationId = newGenerationId(startedAt)
  const reported = route.usageOf(result)
  if (reported && (!Number.isFinite(reported.prompt_tokens) || !Number.isFinite(reported.completion_tokens)))
    throw upstreamError(attempt.offer.provider, 'malformed_response', 'usage without token counts')
  const usage = reported ?? {
    prompt_tokens: estimateTokens(JSON.stringify(input.request.messages).length),
    completion_tokens: estimateTokens(JSON.stringify(result.output ?? result.content ?? '').length),
  }
  const billed = await settle(ctx, {
    principal: input.principal,
    attempt,
    request: input.request,
    usage,
    estimated: !reported,
    generationId,
    upstreamId: typeof result.id === 'string' ? result.id : null,
    stream: false,
    status: 'success',
    startedAt,
    attempts: tries,
    hold: input.hold,
    tags: input.tags,
    nativeFinishReason: route.finishReasonOf(result),
  })
  const body = await route.answer(result, { attempt, generationId, usage: chatUsageView(billed) })
  return gatewayResponse(stringifyExact(body), 200, { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId }, input.requestId)
}
