import type { GatewayContext } from '../context'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/accounts'
import { assertCanSpend } from './guard'
import { planAttempts } from '../routing/plan'
import { completeStream } from './stream'
import { completeWhole } from './whole'

/** Serves POST /chat/completions: plan the attempts, refuse without credits, then answer whole or streamed. */
export async function serveChat(ctx: GatewayContext, input: { principal: Principal; request: ChatRequest; abort: AbortController; requestId: string }): Promise<Response> {
  const attempts = await planAttempts(ctx, input.request, input.principal)
  await assertCanSpend(ctx, input.principal)
  const run = input.request.stream ? completeStream : completeWhole
  return run(ctx, { ...input, signal: input.abort.signal, attempts })
}
