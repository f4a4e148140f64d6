import { CAPABILITIES } from '../contracts'
import { serveEmbeddings } from '../embeddings'
import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { embeddingsRequestSchema, embeddingsResponseSchema } from '../schemas/embeddings'
import { defineRoute } from './define'
import { withPolicyTrail } from '../policies/run'
import { embeddingsView } from '../policies/views'
import { withEndUser } from '../billing/spend-limits'

/** POST /embeddings (docs/embeddings.md): OpenAI's and OpenRouter's embeddings request, with the chat body limit. */
export const embeddingsRoute = defineRoute({
  method: 'POST',
  path: CAPABILITIES.embeddings.path,
  capability: 'embeddings',
  operationId: 'createEmbeddings',
  summary: 'Create embeddings of text or token arrays',
  tag: 'Embeddings',
  auth: 'key',
  status: 200,
  body: embeddingsRequestSchema,
  response: embeddingsResponseSchema,
  bodyLimit: 'chat',
  policyView: embeddingsView,
  handler: ({ ctx, principal, body, event, requestId, policy }) =>
    serveEmbeddings(ctx, {
      principal: withEndUser(principal, body.user, 'user'),
      request: body,
      signal: clientAbortController(event).signal,
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, body), policy),
    }),
})
