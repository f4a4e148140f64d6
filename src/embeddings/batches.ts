import { nodeBuiltin } from '../runtime/node-builtin'
import type { UpstreamEmbeddingRequest, UpstreamEmbeddings } from '../contracts'
import { upstreamError } from '../providers/upstream-error'
import type { Attempt } from '../routing/plan'
import { vectorsOf } from './answer'
import { estimatedInputTokens, type EmbeddingItems } from './input'

/** What a provider served of one batch: its vectors, its tokens (reported, else estimated) and its id of the call. */
export interface ServedBatch {
  vectors: number[][]
  tokens: number
  estimated: boolean
  upstreamId?: string
}

/** One call's share of a request's inputs, as the provider is sent them, and what it served once it did. */
export interface Batch {
  input: UpstreamEmbeddingRequest['input']
  items: EmbeddingItems
  served?: ServedBatch
}

/** One attempt's progress on a request (docs/embeddings.md#batches): its batches, the served ones kept across its retries. */
export interface BatchProgress {
  attempt: Attempt
  batches: Batch[]
}

/**
 * The batches of a request for an attempt: one call with the request's own input, or, for a provider whose calls take
 * at most `embedBatch` inputs, calls of that many in input order.
 */
export function batchProgress(attempt: Attempt, input: UpstreamEmbeddingRequest['input'], items: EmbeddingItems): BatchProgress {
  const size = attempt.offer.provider.embedBatch
  if (!size || size < 1 || items.items.length <= size) return { attempt, batches: [{ input, items }] }
  const batches: Batch[] = []
  for (let start = 0; start < items.items.length; start += size) {
    const slice = items.items.slice(start, start + size)
    const part = (items.kind === 'text' ? { kind: 'text', items: slice } : { kind: 'tokens', items: slice }) as EmbeddingItems
    batches.push({ input: part.items, items: part })
  }
  return { attempt, batches }
}

/**
 * Sends every batch not served yet, all at once, and keeps each one served (its vectors checked as an answer of its
 * inputs, its tokens as reported, else estimated). A failed batch does not stop the others; once all have ended, the
 * first failure in input order is thrown. `signal` (the client leaving, the deadline) stops the calls still running.
 */
export async function embedMissing(
  progress: BatchProgress,
  send: (input: UpstreamEmbeddingRequest['input'], signal: AbortSignal) => Promise<UpstreamEmbeddings>,
  signal: AbortSignal,
  dimensions: number | undefined,
): Promise<void> {
  const provider = progress.attempt.offer.provider
  const pending = progress.batches.filter((batch) => !batch.served)
  // Many calls at once listen to a signal of their own (one listener each, without Node's warning past ten), which follows the request's.
  const own = pending.length > 1 ? new AbortController() : undefined
  const follow = () => own!.abort(signal.reason)
  if (own) {
    nodeBuiltin('node:events')?.setMaxListeners(0, own.signal)
    if (signal.aborted) follow()
    else signal.addEventListener('abort', follow, { once: true })
  }
  const ended = await Promise.allSettled(
    pending.map(async (batch) => {
      const answer = await send(batch.input, own?.signal ?? signal)
      const vectors = vectorsOf(provider, answer, batch.items.items.length, dimensions)
      const reported = answer.usage?.prompt_tokens
      const estimated = !(typeof reported === 'number' && Number.isSafeInteger(reported) && reported >= 0)
      batch.served = { vectors, tokens: estimated ? estimatedInputTokens(batch.items) : reported!, estimated }
      if (typeof answer.id === 'string') batch.served.upstreamId = answer.id
    }),
  )
  signal.removeEventListener('abort', follow)
  const failed = ended.find((outcome) => outcome.status === 'rejected')
  if (failed) throw (failed as PromiseRejectedResult).reason
}

/** What the attempt's provider has served so far: its batches, tokens, whether any were estimated, the first call's id. */
export function servedOf(progress: BatchProgress): { batches: number; tokens: number; estimated: boolean; upstreamId: string | null } {
  const served = progress.batches.flatMap((batch) => (batch.served ? [batch.served] : []))
  return {
    batches: served.length,
    tokens: served.reduce((sum, batch) => sum + batch.tokens, 0),
    estimated: served.some((batch) => batch.estimated),
    upstreamId: served.find((batch) => batch.upstreamId !== undefined)?.upstreamId ?? null,
  }
}

/** Every vector of a fully served request in input order; a malformed answer when its batches' vectors differ in length. */
export function allVectors(progress: BatchProgress): number[][] {
  const vectors = progress.batches.flatMap((batch) => batch.served!.vectors)
  if (vectors.some((vector) => vector.length !== vectors[0].length))
    throw upstreamError(progress.attempt.offer.provider, 'malformed_response', 'embeddings of different lengths')
  return vectors
}
