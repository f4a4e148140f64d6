import type { UpstreamEmbeddingRequest, UpstreamEmbeddings, UpstreamSource } from '../contracts'
import { errorMessageOf } from './checks'
import { upstreamError } from './upstream-error'

/** How many vectors an embeddings input asks for: one per string or token array (a lone token array is one input). */
export function embeddingInputCount(input: UpstreamEmbeddingRequest['input']): number {
  if (typeof input === 'string') return 1
  return input.length > 0 && typeof input[0] === 'number' ? 1 : input.length
}

/** True when every value is a finite number (JSON's `null`, strings and the like are not). */
export const isVector = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === 'number' && Number.isFinite(x))

/**
 * Reads OpenAI's embeddings answer (`{ data: [{ index, embedding }], usage }`): one float vector per input, sorted
 * by index; a malformed_response error otherwise (`text` is the answer as received, for the error) (docs/capabilities.md, docs/errors.md#upstream-errors).
 */
export function readOpenAIEmbeddings(provider: UpstreamSource, answer: unknown, text: string, count: number): UpstreamEmbeddings {
  const body = answer as { data?: unknown; usage?: { prompt_tokens?: unknown; total_tokens?: unknown }; model?: unknown; id?: unknown; error?: unknown } | null
  if (body?.error) throw upstreamError(provider, 'upstream_error', errorMessageOf(text))
  const items = Array.isArray(body?.data) ? (body.data as { index?: unknown; embedding?: unknown }[]) : undefined
  if (!items || items.length !== count)
    throw upstreamError(provider, 'malformed_response', `expected ${count} embeddings, got ${items ? items.length : 'none'}: ${text.slice(0, 200)}`)
  const data: UpstreamEmbeddings['data'] = new Array(count)
  for (const [position, item] of items.entries()) {
    const index = item?.index ?? position
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || data[index]) {
      throw upstreamError(provider, 'malformed_response', `embedding ${position} has index ${JSON.stringify(index)}`)
    }
    if (!isVector(item.embedding)) throw upstreamError(provider, 'malformed_response', `embedding ${index} is not a vector of numbers`)
    data[index] = { index, embedding: item.embedding }
  }
  const prompt = body?.usage?.prompt_tokens
  const total = body?.usage?.total_tokens
  return {
    data,
    ...(typeof prompt === 'number' && Number.isFinite(prompt)
      ? { usage: { prompt_tokens: prompt, ...(typeof total === 'number' ? { total_tokens: total } : {}) } }
      : {}),
    ...(typeof body?.model === 'string' ? { model: body.model } : {}),
    ...(typeof body?.id === 'string' ? { id: body.id } : {}),
  }
}
