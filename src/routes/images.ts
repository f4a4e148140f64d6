import { withEndUser } from '../billing/spend-limits'
import { CAPABILITIES } from '../contracts'
import { generationTags } from '../http/attribution'
import { clientAbortController } from '../http/client-abort'
import { serveImages } from '../images'
import { imagesRequestSchema, imagesResponseSchema } from '../schemas/images'
import { defineRoute } from './define'
import { withPolicyTrail } from '../policies/run'
import { imagesView } from '../policies/views'

/** POST /images/generations (docs/images.md): OpenAI's Images API request; answers base64 images with the gateway's usage. */
export const imagesRoute = defineRoute({
  method: 'POST',
  path: CAPABILITIES.images.path,
  capability: 'images',
  operationId: 'createImages',
  summary: 'Generate images from a text prompt',
  tag: 'Images',
  auth: 'key',
  status: 200,
  body: imagesRequestSchema,
  response: imagesResponseSchema,
  bodyLimit: 'chat',
  policyView: imagesView,
  handler: ({ ctx, principal, body, event, requestId, policy }) =>
    serveImages(ctx, {
      principal: withEndUser(principal, body.user, 'user'),
      request: body,
      signal: clientAbortController(event).signal,
      requestId,
      tags: withPolicyTrail(generationTags(event, requestId, body), policy),
    }),
})
