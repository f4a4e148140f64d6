import { CAPABILITIES } from '../contracts'
import { serveChat } from '../chat'
import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { chatCompletionSchema, chatRequestSchema } from '../schemas/chat'
import { defineRoute } from './define'
import { withPolicyTrail } from '../policies/run'
import { chatView } from '../policies/views'
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
  policyView: chatView,
  handler: ({ ctx, principal, body, event, requestId, policy }) =>
    serveChat(ctx, {
      principal: withEndUser(principal, body.user, 'user'),
      request: body,
      abort: clientAbortController(event),
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, body), policy),
      policy,
    }),
})
