import { serveChat } from '../chat'
import type { PolicyRun } from '../policies/run'
import type { ChatRendering } from '../chat/result'
import { chatUsageView } from '../chat/usage-view'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { MessagesRequest } from '../schemas/messages'
import type { Principal } from '../stores/account-types'
import { toMessage } from './message'
import { answeredModel, gatewayModelId } from './model-id'
import { messagesNativeRoute } from './native'
import { toChatRequest } from './request'
import { messageEventsRenderer } from './stream'

/** Chat's typed result (whole or streamed) written in Anthropic's shape: the message, or the event stream (docs/messages.md). */
const messagesRendering = (stops: string[] | undefined, requestId: string, modelName: (served: string) => string): ChatRendering => ({
  whole: ({ generationId, completion, billed }) =>
    gatewayResponse(
      stringifyExact(toMessage({ ...completion, model: modelName(completion.model), usage: chatUsageView(billed) }, stops)),
      200,
      { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId },
      requestId,
    ),
  stream: () => messageEventsRenderer(stops, modelName),
})

/**
 * Serves POST /messages (docs/messages.md): the request is checked by its translation to a chat request and served
 * by serveChat (holds, routing, fallbacks, retries, BYOK, billing and /generation as chat's): passed on unchanged to
 * Anthropic when every provider routed to is Anthropic (docs/native.md), else served as chat and its typed result
 * written as Anthropic's message or event stream; the answer names the model as the client did when it sent a bare
 * Anthropic id (./model-id.ts). Errors before the answer are thrown, for the route to
 * answer in Anthropic's shape.
 */
export async function serveMessages(
  ctx: GatewayContext,
  input: {
    principal: Principal
    request: MessagesRequest
    abort: AbortController
    requestId: string
    tags?: GenerationTags
    /** The client's Anthropic headers (`anthropic-version`, `anthropic-beta`), passed on with a native request. */
    headers?: Record<string, string>
    /** The host's policies once they ran on the request (docs/policies.md#policy-hooks). */
    policy?: PolicyRun
  },
): Promise<Response> {
  const model = input.request.model ? await gatewayModelId(ctx, input.request.model) : input.request.model
  const chat = toChatRequest({ ...input.request, model })
  const stops = input.request.stop_sequences
  const modelName = answeredModel(input.request.model, model)
  const native = messagesNativeRoute(input.request, messagesRendering(stops, input.requestId, modelName), input.headers, modelName)
  return serveChat(ctx, {
    principal: input.principal,
    request: chat,
    abort: input.abort,
    requestId: input.requestId,
    tags: input.tags,
    policy: input.policy,
    native,
  })
}
