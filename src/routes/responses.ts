import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { jsonResponse } from '../http/respond'
import { responseNotFound, serveResponses, storedInputItems } from '../responses'
import { openaiErrorBody } from '../responses/errors'
import { inputItemsPage } from '../responses/input-items'
import {
  deletedResponseSchema,
  inputItemListSchema,
  inputItemsQuerySchema,
  responseIdParamsSchema,
  responseObjectSchema,
  responsesRequestSchema,
} from '../schemas/responses'
import { defineRoute } from './define'
import { withPolicyTrail } from '../policies/run'
import { responsesView } from '../policies/views'
import { withEndUser } from '../billing/spend-limits'

/** POST /responses (docs/responses.md): OpenAI's Responses API, served through chat; errors in OpenAI's shape. */
export const createResponseRoute = defineRoute({
  method: 'POST',
  path: '/responses',
  capability: 'chat',
  operationId: 'createResponse',
  summary: "Create a model response (OpenAI's Responses API; streamed with stream: true)",
  tag: 'Responses',
  auth: 'key',
  errorBody: openaiErrorBody,
  status: 200,
  body: responsesRequestSchema,
  response: responseObjectSchema,
  bodyLimit: 'chat',
  policyView: responsesView,
  handler: ({ ctx, principal, body, event, requestId, policy }) =>
    serveResponses(ctx, {
      principal: withEndUser(principal, body.user, 'user'),
      request: body,
      abort: clientAbortController(event),
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, body), policy),
      policy,
    }),
})

/** GET /responses/{id}: a stored response of the caller's org (docs/responses.md#stored-responses). */
export const getResponseRoute = defineRoute({
  method: 'GET',
  path: '/responses/:id',
  operationId: 'getResponse',
  summary: 'Get a stored response',
  tag: 'Responses',
  auth: 'key',
  errorBody: openaiErrorBody,
  status: 200,
  params: responseIdParamsSchema,
  response: responseObjectSchema,
  async handler({ ctx, principal, params, requestId }) {
    const stored = await ctx.responses.get(principal.org.id, params.id)
    if (!stored) throw responseNotFound(params.id)
    return jsonResponse(stored.response, 200, requestId)
  },
})

/** DELETE /responses/{id}: deletes a stored response of the caller's org (docs/responses.md#stored-responses). */
export const deleteResponseRoute = defineRoute({
  method: 'DELETE',
  path: '/responses/:id',
  operationId: 'deleteResponse',
  summary: 'Delete a stored response',
  tag: 'Responses',
  auth: 'key',
  errorBody: openaiErrorBody,
  status: 200,
  params: responseIdParamsSchema,
  response: deletedResponseSchema,
  async handler({ ctx, principal, params }) {
    if (!(await ctx.responses.remove(principal.org.id, params.id))) throw responseNotFound(params.id)
    return { id: params.id, object: 'response.deleted' as const, deleted: true as const }
  },
})

/** GET /responses/{id}/input_items: a page of a stored response's input items (docs/responses.md#input-items-of-a-stored-response). */
export const listInputItemsRoute = defineRoute({
  method: 'GET',
  path: '/responses/:id/input_items',
  operationId: 'listResponseInputItems',
  summary: "List a stored response's input items (a cursor page, newest first by default)",
  tag: 'Responses',
  auth: 'key',
  errorBody: openaiErrorBody,
  status: 200,
  params: responseIdParamsSchema,
  query: inputItemsQuerySchema,
  response: inputItemListSchema,
  async handler({ ctx, principal, params, query }) {
    const items = await storedInputItems(ctx, principal.org.id, params.id)
    const include = [query.include ?? [], query['include[]'] ?? []].flat()
    return inputItemsPage(items, { order: query.order, limit: query.limit, after: query.after, before: query.before, include })
  },
})

/** The Responses API's routes (docs/responses.md). */
export const responsesRoutes = [createResponseRoute, getResponseRoute, deleteResponseRoute, listInputItemsRoute]
