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
import { withRulePrices } from '../routing/planner/preferences'
import { rulesFor } from '../policies/rules'
import { withChoices } from './choices'
import { completeStream, completeStreamParts } from './stream'
import { completeWhole } from './whole'
import { chatCompletionObject, chatPartsRenderer, chatRendering, type InProcessChatAnswer } from './render'
import type { ChatServeInput } from './serve-input'
import type { ChatRendering } from './result'
import type { PolicyRun } from '../policies/run'

/** What serving a chat completion takes: the caller, the validated request, the client's abort, ids and tags. */
export interface ChatServing {
  principal: Principal
  request: ChatRequest
  abort: AbortController
  requestId: string
  tags?: GenerationTags
  /** The host's policies once they ran on the request (docs/policies.md#policy-hooks): they filter the answer's text. */
  policy?: PolicyRun
}

/**
 * Serves POST /chat/completions on the capability pipeline: plan the attempts, hold the request's maximum cost (402
 * when it cannot be covered), then answer whole or streamed; the hold is replaced by the exact charge, or released,
 * however the request ends. With `native` (another client API, docs/native.md), the request is served in that API:
 * passed on unchanged when every attempt's provider speaks it, else served as chat and its typed result written in
 * that API by the route's rendering (nothing is serialised as chat and parsed back). With `rendering` alone (an API
 * served through chat only, as /completions: docs/completions.md), chat's typed result is written by it.
 */
export function serveChat(ctx: GatewayContext, input: ChatServing & { native?: NativeRoute; rendering?: ChatRendering }): Promise<Response> {
  const { native, rendering, ...chat } = input
  const render = native?.translated ?? rendering ?? chatRendering(input.requestId)
  return servedChat(ctx, chat, native?.pricedFields, async (served) => {
    // A policy that filters the answer's text reads chat's typed results: the request is then translated (docs/policies.md#policy-hooks).
    if (native && !input.policy?.filtersOutput && speaksNatively(served.attempts, native.api))
      return chat.request.stream === true ? completeNativeStream(ctx, native, served) : completeNativeWhole(ctx, native, served)
    // Chat's typed result, written at the edge: as chat's own answer, or in the native route's API (translated).
    return chat.request.stream === true ? completeStream(ctx, served, render.stream()) : render.whole(await completeWhole(ctx, served))
  })
}

/**
 * Serves a chat completion to the in-process client (docs/first-party.md#the-in-process-client) on the same pipeline:
 * the whole completion as an object, or the stream as a ReadableStream of chunk objects.
 */
export function serveChatInProcess(ctx: GatewayContext, input: ChatServing): Promise<InProcessChatAnswer> {
  return servedChat<InProcessChatAnswer>(ctx, input, undefined, async (served) =>
    input.request.stream === true
      ? { stream: await completeStreamParts(ctx, served, chatPartsRenderer) }
      : { completion: chatCompletionObject(await completeWhole(ctx, served)) },
  )
}

// The pipeline's steps of every chat completion, answered by `answer` once the hold is placed.
function servedChat<R>(
  ctx: GatewayContext,
  input: ChatServing,
  pricedFields: NativeRoute['pricedFields'] | undefined,
  answer: (served: ChatServeInput) => Promise<R>,
): Promise<R> {
  assertToolMessagesAnswered(input.request.messages)
  return serveCapability<R>(ctx, {
    principal: input.principal,
    routing: chatRouting(input.request),
    requestId: input.requestId,
    refine: (planned) =>
      withChoices(
        input.request,
        withPricedFields(input.request, planned, pricedFields, withRulePrices(input.request.provider?.max_price, rulesFor(input.principal))[0]),
      ),
    maxCost: (attempts) => maxChatCost(ctx, input.request, attempts),
    // Object.assign, not a spread then fields: bench/README.md#object-literals-on-node-20.
    run: (attempts, hold) => answer(Object.assign({}, input, { signal: input.abort.signal, attempts, hold })),
  })
}
