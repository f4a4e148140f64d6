import { serveChat } from '../chat'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { parseExact, stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { MessagesRequest } from '../schemas/messages'
import type { Principal } from '../stores/account-types'
import { toMessage } from './message'
import { gatewayModelId } from './model-id'
import { messagesNativeRoute } from './native'
import { toChatRequest } from './request'
import { toMessageEvents } from './stream'

// Headers of serveChat's answer that the translated answer keeps.
const KEPT = ['x-generation-id', 'cache-control', 'x-accel-buffering']

/** Chat's answer (whole or streamed) in Anthropic's shape: the message, or the event stream (docs/messages.md). */
async function translatedAnswer(answer: Response, stops: string[] | undefined, requestId: string): Promise<Response> {
  const headers: Record<string, string> = {}
  for (const name of KEPT) {
    const value = answer.headers.get(name)
    if (value !== null) headers[name] = value
  }
  if (answer.body && (answer.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    headers['content-type'] = 'text/event-stream; charset=utf-8'
    return gatewayResponse(toMessageEvents(answer.body, stops), answer.status, headers, requestId)
  }
  const message = toMessage(parseExact(await answer.text()), stops)
  headers['content-type'] = 'application/json; charset=utf-8'
  return gatewayResponse(stringifyExact(message), answer.status, headers, requestId)
}

/**
 * Serves POST /messages (docs/messages.md): the request is checked by its translation to a chat request and served
 * by serveChat (holds, routing, fallbacks, retries, BYOK, billing and /generation as chat's): passed on unchanged to
 * Anthropic when every provider routed to is Anthropic (docs/native.md), else served as chat and its answer
 * translated back to Anthropic's message or event stream. Errors before the answer are thrown, for the route to
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
  },
): Promise<Response> {
  const model = input.request.model ? await gatewayModelId(ctx, input.request.model) : input.request.model
  const chat = toChatRequest({ ...input.request, model })
  const stops = input.request.stop_sequences
  const native = messagesNativeRoute(input.request, (answer) => translatedAnswer(answer, stops, input.requestId), input.headers)
  return serveChat(ctx, { principal: input.principal, request: chat, abort: input.abort, requestId: input.requestId, tags: input.tags, native })
}
