import { serveChat } from '../chat'
import type { PolicyRun } from '../policies/run'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import type { CompletionsRequest } from '../schemas/completions'
import type { Principal } from '../stores/account-types'
import { completionsRendering } from './render'
import { toChatRequest } from './request'

/**
 * Serves POST /completions (docs/completions.md): the prompt as a chat request with one user message, served by
 * serveChat (holds, routing, fallbacks, BYOK, billing, records as chat's), its typed result written as a text
 * completion or its chunks. Errors before the answer are thrown, for the route to answer in the gateway's envelope.
 */
export function serveCompletions(
  ctx: GatewayContext,
  input: { principal: Principal; request: CompletionsRequest; abort: AbortController; requestId: string; tags?: GenerationTags; policy?: PolicyRun },
): Promise<Response> {
  const { request, ...rest } = input
  return serveChat(ctx, { ...rest, request: toChatRequest(request), rendering: completionsRendering(input.requestId) })
}
