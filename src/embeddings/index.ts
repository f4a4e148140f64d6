import type { Hold } from '../billing/holds'
import { newGenerationId } from '../chat/shape'
import type { GatewayContext } from '../context'
import type { GenerationTags } from '../http/attribution'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { UpstreamEmbeddingRequest } from '../providers/types'
import { serveCapability } from '../pipeline/serve'
import { firstSuccessful } from '../routing/attempts'
import type { Attempt, RoutingRequest } from '../routing/plan'
import type { EmbeddingsRequest } from '../schemas/embeddings'
import type { Principal } from '../stores/accounts'
import { vectorsOf } from './answer'
import { settleEmbeddings } from './billing'
import { withDimensions } from './dimensions'
import { float32Base64 } from './encode'
import { embeddingItems, estimatedInputTokens, maxInputTokens, type EmbeddingItems } from './input'
import { maxEmbeddingsCost } from './max-cost'

/** What serveEmbeddings takes: the caller, the validated request, the client's signal, the request id and the generation's tags. */
export interface EmbeddingsInput {
  principal: Principal
  request: EmbeddingsRequest
  signal: AbortSignal
  requestId: string
  tags?: GenerationTags
}

/** An embeddings request as routing sees it: its model, fallbacks and provider preferences; `dimensions` is a parameter. */
const embeddingsRouting = (request: EmbeddingsRequest): RoutingRequest => ({
  capability: 'embeddings',
  model: request.model,
  models: request.models,
  provider: request.provider,
  parameters: request.dimensions !== undefined ? ['dimensions'] : [],
})

/**
 * Serves POST /embeddings on the capability pipeline (docs/embeddings.md): checks the inputs (400 naming the one
 * that is wrong), plans the attempts that can give `dimensions`, holds the cost of the inputs' most tokens (402 when
 * it cannot be covered), embeds with the first provider that succeeds, bills its input tokens once and answers
 * OpenAI's list of embeddings (floats, or float32 base64).
 */
export async function serveEmbeddings(ctx: GatewayContext, input: EmbeddingsInput): Promise<Response> {
  const { request } = input
  const items = embeddingItems(request.input)
  const maxTokens = maxInputTokens(items)
  return serveCapability(ctx, {
    principal: input.principal,
    routing: embeddingsRouting(request),
    requestId: input.requestId,
    refine: (planned) => withDimensions(planned, request.dimensions),
    maxCost: (attempts) => maxEmbeddingsCost(ctx, attempts, maxTokens),
    run: (attempts, hold) => embed(ctx, input, items, attempts, hold),
  })
}

// Embeds with the first provider that succeeds and bills it; the hold is replaced by the charge.
async function embed(ctx: GatewayContext, input: EmbeddingsInput, items: EmbeddingItems, attempts: Attempt[], hold: Hold): Promise<Response> {
  const { request, principal } = input
  const startedAt = ctx.now()
  const upstreamRequest = (attempt: Attempt): UpstreamEmbeddingRequest => ({
    model: attempt.offer.upstreamId,
    input: request.input,
    ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
    ...(request.user != null ? { user: request.user } : {}),
  })
  const { result, attempt, tries } = await firstSuccessful(ctx, attempts, { ...input, org: principal.org.id }, async (a, options) => {
    const answer = await a.offer.provider.embed!(upstreamRequest(a), options)
    return { answer, vectors: vectorsOf(a.offer.provider.name, answer, items.items.length, request.dimensions) }
  })

  const generationId = newGenerationId(startedAt)
  const reported = result.answer.usage?.prompt_tokens
  const estimated = !(typeof reported === 'number' && Number.isSafeInteger(reported) && reported >= 0)
  const promptTokens = estimated ? estimatedInputTokens(items) : reported!
  const usage = await settleEmbeddings(ctx, {
    principal,
    attempt,
    promptTokens,
    estimated,
    generationId,
    upstreamId: typeof result.answer.id === 'string' ? result.answer.id : null,
    stream: false,
    status: 'success',
    startedAt,
    attempts: tries,
    hold,
    tags: input.tags,
  })
  const base64 = request.encoding_format === 'base64'
  const body = {
    id: generationId,
    object: 'list',
    data: result.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector })),
    model: attempt.entry.id,
    provider: attempt.offer.provider.name,
    usage,
  }
  return gatewayResponse(stringifyExact(body), 200, { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId }, input.requestId)
}
