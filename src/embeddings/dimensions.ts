import { invalidRequest } from '../errors'
import type { ProviderModel } from '../contracts'
import type { Attempt } from '../routing/plan'

/**
 * Why a model cannot give vectors of `dimensions`, or undefined when it can (docs/embeddings.md#dimensions): a model
 * whose catalogue entry states its vectors must be shortenable and at least that long; one that states nothing is
 * left to its provider.
 */
export function dimensionsRefusal(model: ProviderModel, dimensions: number): string | undefined {
  const facts = model.embedding
  if (!facts) return undefined
  if (dimensions > facts.dimensions) return `${model.id} returns ${facts.dimensions} dimensions at most`
  if (dimensions !== facts.dimensions && !facts.shortenable) return `${model.id} cannot shorten its ${facts.dimensions}-dimension vectors`
  return undefined
}

/**
 * The attempts that can answer `dimensions` (all of them when it is not set); 400 naming `dimensions` when none can,
 * with the reason of each model.
 */
export function withDimensions(attempts: Attempt[], dimensions: number | undefined): Attempt[] {
  if (dimensions === undefined) return attempts
  const kept = attempts.filter((attempt) => dimensionsRefusal(attempt.offer.model, dimensions) === undefined)
  if (kept.length) return kept
  const reasons = [...new Set(attempts.map((attempt) => dimensionsRefusal(attempt.offer.model, dimensions)!))]
  throw invalidRequest(`dimensions: ${dimensions} cannot be served: ${reasons.join('; ')}`, 'dimensions')
}
