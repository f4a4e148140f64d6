import { withPolicyTrail } from '../policies/run'
import { chatView, embeddingsView, messagesView, responsesView } from '../policies/views'
import { H3Event } from 'h3'
import { authenticate, authenticateKey } from '../auth/bearer'
import { serveChatInProcess } from '../chat'
import type { GatewayContext } from '../context'
import { serveEmbeddings } from '../embeddings'
import { unauthorized } from '../errors'
import { generationTagsOf } from '../http/attribution'
import { serveMessages } from '../messages/serve'
import { anthropicHeaders } from '../messages/client-headers'
import { serveResponses } from '../responses'
import { chatRequestSchema } from '../schemas/chat'
import { embeddingsRequestSchema } from '../schemas/embeddings'
import { messagesRequestSchema } from '../schemas/messages'
import { responsesRequestSchema } from '../schemas/responses'
import type { Principal } from '../stores/account-types'
import { withEndUser } from '../billing/spend-limits'
import { callInProcess, type InProcessInput, type InProcessOperation } from './call'
import { eventsOf, inProcessStream } from './streams'
import type { ClientPrincipal, GatewayClient, InProcessCallOptions } from './types'

const isEvent = (value: unknown): value is H3Event => typeof value === 'object' && value !== null && 'req' in value && 'context' in value

/** How a client finds its caller on each call (through the authentication cache: one lookup a few seconds at most). */
function principalSource(ctx: GatewayContext, who: ClientPrincipal): () => Promise<Principal> {
  const event = isEvent(who) ? who : 'event' in who ? who.event : 'request' in who ? new H3Event(who.request) : undefined
  if (event)
    // A key the request sends wins, as over HTTP; else the host's session; else 401.
    return async () => {
      if (event.req.headers.has('authorization')) return authenticate(event, ctx)
      const principal = await ctx.sessions.fromEvent(event)
      if (!principal) throw unauthorized('No signed-in user: the host session of this request names none, and it sends no API key')
      return principal
    }
  if ('user' in who) return () => ctx.sessions.ofHostUser(who.user)
  if ('userId' in who) return () => ctx.sessions.ofUserId(who.userId)
  if ('key' in who) return () => authenticateKey(ctx, who.key)
  throw new TypeError('model-gateway: client() takes an h3 event, { event }, { request }, { user }, { userId } or { key }')
}

// What a route that answers a Response gives the in-process caller: its JSON object, or its SSE events as objects.
async function answerOf(
  response: Response,
  input: { abort: AbortController; detach: () => void },
): Promise<Record<string, unknown> | ReturnType<typeof eventsOf>> {
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return eventsOf(response, input.abort, input.detach, response.headers.get('x-generation-id') ?? undefined)
  return (await response.json()) as Record<string, unknown>
}

/** Creates the in-process client acting as `who` (docs/first-party.md#the-in-process-client). */
export function createClient(ctx: GatewayContext, who: ClientPrincipal): GatewayClient {
  const principalOf = principalSource(ctx, who)
  const call = <R>(operation: InProcessOperation<never, R>, body: unknown, options?: InProcessCallOptions) =>
    callInProcess(ctx, operation as never, principalOf, body, options) as Promise<R>
  // What every operation hands its serving function: the caller (with the end user the body names), the validated
  // body, the abort, the request id and the generation's tags (`fields`: what they are read from, the body by default).
  const serving = <B>(input: InProcessInput<B>, endUser: string | null | undefined, param: string, fields: unknown = input.body) => ({
    principal: withEndUser(input.principal, endUser, param),
    request: input.body,
    abort: input.abort,
    requestId: input.requestId,
    tags: withPolicyTrail(generationTagsOf(input.headers, input.requestId, input.clientRequestId, fields), input.policy),
    policy: input.policy,
  })

  const chat: InProcessOperation<typeof chatRequestSchema, unknown> = {
    path: '/chat/completions',
    capability: 'chat',
    schema: chatRequestSchema,
    view: chatView,
    async serve(input) {
      const answer = await serveChatInProcess(ctx, serving(input, input.body.user, 'user'))
      return 'stream' in answer ? inProcessStream(answer.stream, input.abort, input.detach) : answer.completion
    },
  }
  const embeddings: InProcessOperation<typeof embeddingsRequestSchema, unknown> = {
    path: '/embeddings',
    capability: 'embeddings',
    schema: embeddingsRequestSchema,
    view: embeddingsView,
    async serve(input) {
      const { abort, ...served } = serving(input, input.body.user, 'user')
      const response = await serveEmbeddings(ctx, { ...served, signal: abort.signal })
      return (await response.json()) as Record<string, unknown>
    },
  }
  const messages: InProcessOperation<typeof messagesRequestSchema, unknown> = {
    path: '/messages',
    capability: 'chat',
    schema: messagesRequestSchema,
    view: messagesView,
    async serve(input) {
      const userId = input.body.metadata?.user_id
      const response = await serveMessages(ctx, { ...serving(input, userId, 'metadata.user_id', { user: userId }), headers: anthropicHeaders(input.headers) })
      return answerOf(response, input)
    },
  }
  const responses: InProcessOperation<typeof responsesRequestSchema, unknown> = {
    path: '/responses',
    capability: 'chat',
    schema: responsesRequestSchema,
    view: responsesView,
    async serve(input) {
      return answerOf(await serveResponses(ctx, serving(input, input.body.user, 'user')), input)
    },
  }

  return {
    chat: { completions: { create: (body: unknown, options?: InProcessCallOptions) => call(chat as never, body, options) } },
    embeddings: { create: (body, options) => call(embeddings as never, body, options) },
    messages: { create: (body: unknown, options?: InProcessCallOptions) => call(messages as never, body, options) },
    responses: { create: (body: unknown, options?: InProcessCallOptions) => call(responses as never, body, options) },
    async identity() {
      const { user, org, via } = await principalOf()
      return { user_id: user.id, org_id: org.id, email: user.email, via: via ?? 'key' }
    },
  } as GatewayClient
}
