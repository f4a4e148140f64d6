import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { serveCapability } from '../pipeline/serve'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import { chatRouting } from '../routing/plan'
import { maxChatCost } from './max-cost'
import { assertToolMessagesAnswered } from './tool-messages'
import { withPricedFields } from './priced-fields'
import { withChoices } from './choices'
import { completeStream } from './stream'
import { completeWhole } from './whole'

/**
 * Serves POST /chat/completions on the capability pipeline: plan the attempts, hold the request's maximum cost (402
 * when it cannot be covered), then answer whole or streamed; the hold is replaced by the exact charge, or released,
 * however the request ends.
 */
export async function serveChat(
  ctx: GatewayContext,
  input: { principal: Principal; request: ChatRequest; abort: AbortController; requestId: string; tags?: GenerationTags },
): Promise<Response> {
  assertToolMessagesAnswered(input.request.messages)
  const run = input.request.stream ? completeStream : completeWhole
  return serveCapability(ctx, {
    principal: input.principal,
    routing: chatRouting(input.request),
    requestId: input.requestId,
    refine: (planned) => withChoices(input.request, withPricedFields(input.request, planned)),
    maxCost: (attempts) => maxChatCost(ctx, input.request, attempts),
    run: (attempts, hold) => run(ctx, { ...input, signal: input.abort.signal, attempts, hold }),
  })
}
