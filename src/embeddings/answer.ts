import type { UpstreamEmbeddings, UpstreamSource } from '../contracts'
import { upstreamError } from '../providers/upstream-error'

/**
 * The provider's vectors in input order, checked (docs/embeddings.md#the-answer): exactly one per input (each index
 * once), each a non-empty list of finite numbers, all of one length, and `dimensions` long when the request set it.
 * Anything else is a malformed answer (502), which the router falls back from like any provider failure.
 */
export function vectorsOf(provider: UpstreamSource, answer: UpstreamEmbeddings | undefined, inputs: number, dimensions: number | undefined): number[][] {
  const malformed = (why: string) => upstreamError(provider, 'malformed_response', why)
  if (!answer || !Array.isArray(answer.data)) throw malformed('the answer has no embeddings')
  if (answer.data.length !== inputs) throw malformed(`${answer.data.length} embeddings for ${inputs} inputs`)
  const vectors: number[][] = new Array(inputs)
  for (const [position, item] of answer.data.entries()) {
    const index = typeof item?.index === 'number' ? item.index : position
    if (!Number.isInteger(index) || index < 0 || index >= inputs || vectors[index]) throw malformed(`embedding index ${String(item?.index)} is out of place`)
    const vector = item.embedding
    if (!Array.isArray(vector) || !vector.length || !vector.every((x) => typeof x === 'number' && Number.isFinite(x)))
      throw malformed(`embedding ${index} is not a list of numbers`)
    vectors[index] = vector
  }
  const length = dimensions ?? vectors[0].length
  if (vectors.some((vector) => vector.length !== length))
    throw malformed(dimensions ? `embeddings are not ${dimensions} dimensions long` : 'embeddings of different lengths')
  return vectors
}
