import { serveChat } from '../chat'
import type { PolicyRun } from '../policies/run'
import type { ChatRendering } from '../chat/result'
import { chatUsageView } from '../chat/usage-view'
import type { GatewayContext } from '../context'
import { GatewayError, invalidRequest } from '../errors'
import type { GenerationTags } from '../http/attribution'
import { stringifyExact } from '../http/exact-json'
import { onBodyEnd } from '../http/on-body-end'
import { gatewayResponse } from '../http/respond'
import type { ResolvedItem, ResponsesRequest } from '../schemas/responses'
import type { Principal } from '../stores/account-types'
import type { HeldRoom } from '../stores/responses'
import { newResponseId } from './ids'
import { withItemIds } from './items'
import { outcomeOf, type ResponseFrame, responseObject, shownOutput, usageOf } from './output'
import { inputItemsOf, toChatRequest } from './request'
import { resolveReferences, type StoredItems } from './references'
import { responsesNativeRoute } from './native'
import { namespacedNames } from './namespaces'
import { responseErrorOf, responseEventsRenderer, type StreamEnd } from './stream'
import { holdStorageRoom } from './storage-room'
import { choiceLogprobs, outputOfMessage } from './whole'

/** 404 in OpenAI's words for a response id the org has not stored (unknown, another org's, deleted or expired). */
export const responseNotFound = (id: string, param?: string): GatewayError =>
  new GatewayError(404, `Response with id '${id}' not found.`, param ? { param } : {})

/**
 * The items of the org's stored responses, by response id: its input items (with ids, docs/responses.md#item-ids)
 * then its output items; undefined for an id the org has not stored.
 */
export function storedItems(ctx: GatewayContext, org: string): StoredItems {
  return async (responseId) => {
    const stored = await ctx.responses.get(org, responseId)
    return stored ? [...withItemIds(stored.input as ResolvedItem[], responseId), ...(stored.output as ResolvedItem[])] : undefined
  }
}

/** The input items of the org's stored response, with ids (docs/responses.md#input-items-of-a-stored-response); 404 when it has none by that id. */
export async function storedInputItems(ctx: GatewayContext, org: string, responseId: string): Promise<ResolvedItem[]> {
  const stored = await ctx.responses.get(org, responseId)
  if (!stored) throw responseNotFound(responseId)
  return withItemIds(stored.input as ResolvedItem[], responseId)
}

/**
 * Serves POST /responses (docs/responses.md): the stored conversation of `previous_response_id` and the input become
 * a chat request served by serveChat (holds, routing, fallbacks, billing and /generation are chat's): passed on to
 * OpenAI's own Responses API when every provider routed to speaks it (docs/native.md#responses), else served as chat
 * and its typed result written as a Response object or the Responses API's events; with `store` (default true) the
 * conversation and the output are stored for the org.
 */
export async function serveResponses(
  ctx: GatewayContext,
  input: { principal: Principal; request: ResponsesRequest; abort: AbortController; requestId: string; tags?: GenerationTags; policy?: PolicyRun },
): Promise<Response> {
  const { request, principal, requestId } = input
  const org = principal.org.id
  const store = request.store !== false
  const now = ctx.now()
  const id = newResponseId(now)
  const stored = storedItems(ctx, org)
  let previous: ResolvedItem[] = []
  if (request.previous_response_id) {
    const items = await stored(request.previous_response_id)
    if (!items) throw responseNotFound(request.previous_response_id, 'previous_response_id')
    previous = items
  }
  const sent = withItemIds(await resolveReferences(inputItemsOf(request.input), previous, stored), id, previous.length)
  const conversation = [...previous, ...sent]
  // Checked (its translation valid, no field refused) before any room is held.
  const chatRequest = toChatRequest(request, conversation)
  const conversationBytes = store ? Buffer.byteLength(JSON.stringify(conversation)) : 0
  if (conversationBytes > ctx.responses.maxBytes) {
    throw invalidRequest(
      `input: the conversation is over ${ctx.responses.maxBytes} bytes, the most one stored response holds: start a new conversation, or send it with store: false`,
      request.previous_response_id ? 'previous_response_id' : 'input',
    )
  }
  // Room under the org's cap of stored bytes, held before any provider is called (docs/responses.md#stored-responses):
  // taken over by the stored response, or given back once when the request ends without storing one.
  const held = store ? await holdStorageRoom(ctx, org, conversationBytes) : undefined
  let roomSettled = !held
  const takeRoom = (): HeldRoom | undefined => {
    if (roomSettled) return undefined
    roomSettled = true
    return held
  }
  const giveRoomBack = async () => {
    const room = takeRoom()
    if (room)
      await ctx.responses
        .release(org, room)
        .catch((error) => ctx.logger.error('giving back stored-response room failed', { request_id: requestId, error: String(error) }))
  }
  const frame: ResponseFrame = {
    id,
    createdAt: Math.floor(now / 1000),
    request,
    store,
    model: chatRequest.model ?? chatRequest.models?.[0] ?? '',
    now: ctx.now,
  }
  // Stores a finished response (not a failed one): its conversation and full output, for previous_response_id.
  const save = async ({ response, output }: StreamEnd) => {
    if (!store || response.status === 'failed') return giveRoomBack()
    try {
      if (!(await ctx.responses.save(org, frame.id, { response, input: conversation, output }, takeRoom())))
        ctx.logger.warn('response not stored: over the stored size limit', { request_id: requestId, response_id: frame.id })
    } catch (error) {
      ctx.logger.error('storing a response failed', { request_id: requestId, response_id: frame.id, error: String(error) })
    }
  }

  // Chat's typed result (some provider routed to does not speak the Responses API) as a Response object or its events.
  const translated: ChatRendering = {
    async whole({ generationId, completion, billed }) {
      const choice = completion.choices[0]
      const outcome = outcomeOf(choice?.finish_reason ?? null)
      frame.model = completion.model
      frame.provider = completion.provider
      const output = outputOfMessage(
        choice?.message ?? {},
        outcome.status === 'completed' ? 'completed' : 'incomplete',
        frame.id,
        choiceLogprobs(choice ?? {}, request),
        namespacedNames(request.tools),
      )
      const error = outcome.status === 'failed' ? responseErrorOf({ code: 502, message: `The model's answer failed (${choice?.native_finish_reason})` }) : null
      const response = responseObject(frame, { ...outcome, error, output: shownOutput(output, request), usage: usageOf(chatUsageView(billed)) })
      await save({ response, output })
      return gatewayResponse(stringifyExact(response), 200, { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId }, requestId)
    },
    stream: () => responseEventsRenderer(frame, save),
  }

  const native = responsesNativeRoute({ request, conversation, frame, save, translated })
  if (!held) return serveChat(ctx, { principal, request: chatRequest, abort: input.abort, requestId, tags: input.tags, policy: input.policy, native })
  let answer: Response
  try {
    answer = await serveChat(ctx, { principal, request: chatRequest, abort: input.abort, requestId, tags: input.tags, policy: input.policy, native })
  } catch (error) {
    await giveRoomBack()
    throw error
  }
  // A whole answer was stored (or not) by now; a stream is, at the latest, when its body ends.
  if (!answer.headers.get('content-type')?.startsWith('text/event-stream')) {
    await giveRoomBack()
    return answer
  }
  return onBodyEnd(answer, () => void giveRoomBack(), requestId)
}
