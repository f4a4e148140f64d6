import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { countTokens } from '../messages/count-tokens'
import { anthropicErrorBody } from '../messages/errors'
import { serveMessages } from '../messages/serve'
import { countTokensRequestSchema, countTokensResponseSchema, messagesRequestSchema, messagesResponseSchema } from '../schemas/messages'
import { defineRoute } from './define'
import { withPolicyTrail } from '../policies/run'
import { messagesView } from '../policies/views'
import { anthropicHeaders } from '../messages/client-headers'
import { withEndUser } from '../billing/spend-limits'

/** POST /messages (docs/messages.md): Anthropic's Messages API, served as the chat capability; errors in Anthropic's shape. */
export const messagesRoute = defineRoute({
  method: 'POST',
  path: '/messages',
  capability: 'chat',
  operationId: 'createMessage',
  summary: "Create a message in Anthropic's Messages API shape (streamed with stream: true)",
  tag: 'Messages',
  auth: 'key',
  keyHeaders: ['x-api-key'],
  errorBody: anthropicErrorBody,
  status: 200,
  body: messagesRequestSchema,
  response: messagesResponseSchema,
  bodyLimit: 'chat',
  policyView: messagesView,
  handler: ({ ctx, principal, body, event, requestId, policy }) =>
    serveMessages(ctx, {
      principal: withEndUser(principal, body.metadata?.user_id, 'metadata.user_id'),
      request: body,
      abort: clientAbortController(event),
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, { user: body.metadata?.user_id }), policy),
      policy,
      headers: anthropicHeaders(event.req.headers),
    }),
})

/** POST /messages/count_tokens (docs/messages.md#counting-tokens): the gateway's estimate of a request's input tokens, not billed. */
export const countMessageTokensRoute = defineRoute({
  method: 'POST',
  path: '/messages/count_tokens',
  operationId: 'countMessageTokens',
  summary: "Count the input tokens of a Messages request (the gateway's estimate; not billed)",
  tag: 'Messages',
  auth: 'key',
  keyHeaders: ['x-api-key'],
  errorBody: anthropicErrorBody,
  status: 200,
  body: countTokensRequestSchema,
  response: countTokensResponseSchema,
  // Its own limit, by default /messages' (docs/limits.md#body-size): free, but counted by the rate limits as every request.
  bodyLimit: 'countTokens',
  handler: ({ body }) => countTokens(body),
})
