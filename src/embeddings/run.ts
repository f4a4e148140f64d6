import { placeHold, releaseOrLog, type Hold } from '../billing/holds'
import { newGenerationId } from '../generation/id'
import type { GatewayContext } from '../context'
import { newId } from '../crypto/keys'
import { GatewayError, toGatewayError } from '../errors'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { UpstreamEmbeddingRequest } from '../contracts'
import { firstSuccessful } from '../routing/attempts'
import type { Attempt } from '../routing/plan'
import type { UsageRecord } from '../stores/usage'
import { allVectors, batchProgress, embedMissing, servedOf, type BatchProgress } from './batches'
import { settleEmbeddings } from './billing'
import { embeddingsUsageView } from './usage-view'
import { float32Base64 } from './encode'
import type { EmbeddingsInput } from './embeddings-input'
import type { EmbeddingItems } from './input'
import { maxEmbeddingsCost } from './max-cost'

// The request's state across its attempts: the hold the next charge replaces, the current attempt's batches, the attempts
// called, the upstream calls made, and the last generation billed.
interface EmbedState {
  hold: Hold
  progress?: BatchProgress
  tried: Set<Attempt>
  tries: number
  billed?: string
}

/**
 * Embeds with the first provider that succeeds and bills it: the hold is replaced by the charge. What a provider served
 * of a request that then failed, fell back or was left by its client is billed too (docs/embeddings.md#batches).
 */
export async function embed(
  ctx: GatewayContext,
  input: EmbeddingsInput,
  items: EmbeddingItems,
  maxTokens: number,
  attempts: Attempt[],
  hold: Hold,
): Promise<Response> {
  const { request, principal } = input
  const startedAt = ctx.now()
  const state: EmbedState = { hold, tried: new Set(), tries: 0 }
  const upstreamRequest = (attempt: Attempt, part: UpstreamEmbeddingRequest['input']): UpstreamEmbeddingRequest => ({
    model: attempt.offer.upstreamId,
    input: part,
    ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
    ...(request.user != null ? { user: request.user } : {}),
  })
  // Bills what the current attempt's provider served, if anything, under a generation of its own; its hold is spent.
  const bill = async (status: UsageRecord['status']) => {
    const progress = state.progress
    state.progress = undefined
    const served = progress && servedOf(progress)
    if (!progress || !served?.batches) return undefined
    const generationId = newGenerationId(startedAt)
    const amounts = await settleEmbeddings(ctx, {
      principal,
      attempt: progress.attempt,
      promptTokens: served.tokens,
      estimated: served.estimated,
      generationId,
      upstreamId: served.upstreamId,
      stream: false,
      status,
      startedAt,
      attempts: state.tries,
      hold: state.hold,
      tags: input.tags,
    })
    state.billed = generationId
    return { generationId, amounts }
  }
  // Before another provider or model embeds everything again: what this one served is billed, and the rest of the way is
  // held anew; when the credits cannot cover it, the request ends with the provider's failure.
  const beforeFallback = async () => {
    if (!(await bill('error'))) return true
    // The attempts not called yet (`next` among them) may serve the rest of the way.
    const left = attempts.filter((attempt) => !state.tried.has(attempt))
    try {
      state.hold = await placeHold(ctx, principal, newId(), maxEmbeddingsCost(ctx, left, maxTokens))
      return true
    } catch (error) {
      ctx.logger.info('no fallback after a partly served embeddings request: its credits cannot hold it', {
        request_id: input.requestId,
        error: (error as Error).message,
      })
      return false
    }
  }
  try {
    const { result } = await firstSuccessful(ctx, attempts, { ...input, org: principal.org.id, beforeFallback }, async (a, options) => {
      if (state.progress?.attempt !== a) state.progress = batchProgress(a, request.input, items)
      state.tried.add(a)
      state.tries++
      const progress = state.progress
      const send = (part: UpstreamEmbeddingRequest['input'], signal: AbortSignal) => a.offer.provider.embed!(upstreamRequest(a, part), { ...options, signal })
      await embedMissing(progress, send, options.signal, request.dimensions)
      return { progress, vectors: allVectors(progress) }
    })
    state.progress = result.progress
    const billed = (await bill('success'))!
    const base64 = request.encoding_format === 'base64'
    const body = {
      id: billed.generationId,
      object: 'list',
      data: result.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector })),
      model: result.progress.attempt.entry.id,
      provider: result.progress.attempt.offer.provider.name,
      usage: embeddingsUsageView(billed.amounts),
    }
    const headers = { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': billed.generationId }
    return gatewayResponse(stringifyExact(body), 200, headers, input.requestId)
  } catch (thrown) {
    // The client leaving is a cancellation; a provider's failure or the deadline an error. A fallback's own hold is
    // released here when nothing was billed against it (the request's first hold is released by the pipeline).
    if (!(await bill(input.signal.aborted ? 'cancelled' : 'error')) && state.hold !== hold) await releaseOrLog(ctx, state.hold, input.requestId)
    throw state.billed ? withGenerationId(toGatewayError(thrown, input.requestId), state.billed) : thrown
  }
}

// The error answer of a request that was billed for what was served: its X-Generation-Id names the (last) generation billed.
const withGenerationId = (error: GatewayError, generationId: string) =>
  new GatewayError(error.status, error.message, {
    param: error.param,
    metadata: error.metadata,
    headers: { ...error.headers, 'x-generation-id': generationId },
    cause: error,
  })
