import { withEndUser } from '../billing/spend-limits'
import { serveCompletions } from '../completions/serve'
import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { completionsRequestSchema, textCompletionSchema } from '../schemas/completions'
import { defineRoute } from './define'
import { withPolicyTrail } from '../policies/run'
import { completionsView } from '../policies/views'

/** POST /completions (docs/completions.md): OpenAI's legacy text completions, served as the chat capability. */
export const completionsRoute = defineRoute({
  method: 'POST',
  path: '/completions',
  capability: 'chat',
  operationId: 'createCompletion',
  summary: "Create a text completion (OpenAI's legacy Completions API; streamed with stream: true)",
  tag: 'Completions',
  auth: 'key',
  status: 200,
  body: completionsRequestSchema,
  response: textCompletionSchema,
  bodyLimit: 'chat',
  // The request's `user` names the end user it is for (docs/usage.md#usage-per-user-and-per-end-user).
  policyView: completionsView,
  handler: ({ ctx, principal, body, event, requestId, policy }) =>
    serveCompletions(ctx, {
      principal: withEndUser(principal, body.user, 'user'),
      request: body,
      abort: clientAbortController(event),
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, body), policy),
      policy,
    }),
})
