import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { type NativeRoute, speaksNatively } from '../native/route'
import { completeNativeStream } from '../native/stream'
import { completeNativeWhole } from '../native/whole'
import { serveCapability } from '../pipeline/serve'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/account-types'
import { chatRouting } from './routing-request'
import { maxChatCost } from './max-cost'
import { assertToolMessagesAnswered } from './tool-messages'
import { withPricedFields } from './priced-fields'
import { withChoices } from './choices'
import { completeStream } from './stream'
import { completeWhole } from './whole'
import { chatRendering } from './render'

/**
 * Serves POST /chat/completions on the capability pipeline: plan the attempts, hold the request's maximum cost (402
 * when it cannot be covered), then answer whole or streamed; the hold is replaced by the exact charge, or released,
 * however the request ends. With `native` (another client API, docs/native.md), the request is served in that API:
 * passed on unchanged when every attempt's provider speaks it, else served as chat and its typed result written in
 * that API by the route's rendering (nothing is serialised as chat and parsed back).
 */
export async function serveChat(
  ctx: GatewayContext,
  input: { principal: Principal; request: ChatRequest; abort: AbortController; requestId: string; tags?: GenerationTags; native?: NativeRoute },
): Promise<Response> {
  assertToolMessagesAnswered(input.request.messages)
  const { native, ...chat } = input
  const stream = input.request.stream === true
  return serveCapability(ctx, {
    principal: input.principal,
    routing: chatRouting(input.request),
    requestId: input.requestId,
    refine: (planned) => withChoices(input.request, withPricedFields(input.request, planned, native?.pricedFields)),
    maxCost: (attempts) => maxChatCost(ctx, input.request, attempts),
    run: async (attempts, hold) => {
      const served = { ...chat, signal: input.abort.signal, attempts, hold }
      if (native && speaksNatively(attempts, native.api)) return stream ? completeNativeStream(ctx, native, served) : completeNativeWhole(ctx, native, served)
      // Chat's typed result, written at the edge: as chat's own answer, or in the native route's API (translated).
      const render = native?.translated ?? chatRendering(input.requestId)
      return stream ? completeStream(ctx, served, render.stream()) : render.whole(await completeWhole(ctx, served))
    },
  })
}
