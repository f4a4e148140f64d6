import type { GatewayContext } from '../context'
import { newId } from '../crypto/keys'
import type { GenerationTags } from '../http/attribution'
import { placeHold, releaseOrLog } from '../billing/holds'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import { planAttempts } from '../routing/plan'
import { maxChatCost } from './max-cost'
import { assertToolMessagesAnswered } from './tool-messages'
import { withPricedFields } from './priced-fields'
import { withChoices } from './choices'
import { servingChat } from './serves-chat'
import { completeStream } from './stream'
import { completeWhole } from './whole'

/**
 * Serves POST /chat/completions: plan the attempts, hold the request's maximum cost (402 when it cannot be covered),
 * then answer whole or streamed; the hold is replaced by the exact charge, or released, however the request ends.
 */
export async function serveChat(ctx: GatewayContext, input: { principal: Principal; request: ChatRequest; abort: AbortController; requestId: string; tags?: GenerationTags }): Promise<Response> {
  assertToolMessagesAnswered(input.request.messages)
  const planned = servingChat(input.request, await planAttempts(ctx, input.request, input.principal))
  const attempts = withChoices(input.request, withPricedFields(input.request, planned))
  const hold = await placeHold(ctx, input.principal, newId(), maxChatCost(ctx, input.request, attempts))
  const run = input.request.stream ? completeStream : completeWhole
  try {
    return await run(ctx, { ...input, signal: input.abort.signal, attempts, hold })
  } catch (error) {
    await releaseOrLog(ctx, hold, input.requestId)
    throw error
  }
}
