import { CAPABILITIES } from '../contracts'
import { serveChat } from '../chat'
import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { chatCompletionSchema, chatRequestSchema } from '../schemas/chat'
import { defineRoute } from './define'
import { withEndUser } from '../billing/spend-limits'

/** POST /chat/completions (docs/chat.md). */
export const chatCompletionsRoute = defineRoute({
  method: 'POST',
  path: CAPABILITIES.chat.path,
  capability: 'chat',
  operationId: 'createChatCompletion',
  summary: 'Create a chat completion (streamed with stream: true)',
  tag: 'Chat',
  auth: 'key',
  status: 200,
  body: chatRequestSchema,
  response: chatCompletionSchema,
  bodyLimit: 'chat',
  // The request's `user` names the end user it is for (docs/usage.md#usage-per-user-and-per-end-user).
  handler: ({ ctx, principal, body, event, requestId }) =>
    serveChat(ctx, {
      principal: withEndUser(principal, body.user, 'user'),
      request: body,
      abort: clientAbortController(event),
      requestId,
      tags: generationTags(event, requestId, body),
    }),
})
