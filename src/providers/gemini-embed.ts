import { invalidRequest } from '../errors'
import { isVector } from './embeddings'
import type { CallOptions, UpstreamEmbeddingRequest, UpstreamEmbeddings, UpstreamSource } from '../contracts'
import { parseUpstreamJson, upstreamError } from './upstream-error'

/*
 * Embeddings through Gemini's API (ai.google.dev/api/embeddings): one text → `models/{model}:embedContent`
 * `{ content: { parts: [{ text }] }, outputDimensionality? }` → `{ embedding: { values } }`; several →
 * `:batchEmbedContents` `{ requests: [{ model: "models/{model}", content, outputDimensionality? }] }` →
 * `{ embeddings: [{ values }] }`, at most 100 requests a call (Gemini's limit), so larger inputs are split and merged
 * in order. Token usage is mapped when Gemini reports it (`usageMetadata.promptTokenCount`); else the gateway
 * estimates it (docs/capabilities.md).
 */

/** The most requests one `batchEmbedContents` call takes. */
export const GEMINI_EMBED_BATCH = 100

/** Sends one JSON body to `models/{model}:{method}`, resolving with the answer's text (errors already thrown). */
export type GeminiSend = (method: 'embedContent' | 'batchEmbedContents', model: string, body: Record<string, unknown>, call: CallOptions) => Promise<string>

interface GeminiEmbedAnswer {
  embedding?: { values?: unknown }
  embeddings?: { values?: unknown }[]
  usageMetadata?: { promptTokenCount?: unknown; totalTokenCount?: unknown }
}

/** The texts of an embeddings input; a 400 naming `input` for token arrays, which Gemini does not take. */
export function geminiEmbeddingTexts(input: UpstreamEmbeddingRequest['input'], provider: UpstreamSource): string[] {
  const texts = typeof input === 'string' ? [input] : input
  if (!texts.every((text): text is string => typeof text === 'string')) {
    throw invalidRequest(`input: ${provider.name} embeds text only; it does not take token arrays`, 'input')
  }
  return texts
}

/**
 * Embeds the request's texts through Gemini: one call for one text, else batches of 100 in parallel, merged in input
 * order. The gateway itself sends at most one batch a call (`embedBatch`), so that a failed batch is retried alone and
 * the served ones are billed (docs/embeddings.md#batches); a caller of its own gets the batches here.
 */
export async function geminiEmbed(
  request: UpstreamEmbeddingRequest,
  call: CallOptions,
  provider: UpstreamSource,
  send: GeminiSend,
): Promise<UpstreamEmbeddings> {
  const texts = geminiEmbeddingTexts(request.input, provider)
  const dims = request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}
  const model = request.model.replace(/^models\//, '')
  if (texts.length === 1) {
    const text = await send('embedContent', model, { content: { parts: [{ text: texts[0] }] }, ...dims }, call)
    const answer = parseUpstreamJson<GeminiEmbedAnswer>(provider, text)
    return { data: [{ index: 0, embedding: vectorOf(answer?.embedding, 0, provider) }], usage: usageOf([answer]) }
  }
  const batches: string[][] = []
  for (let i = 0; i < texts.length; i += GEMINI_EMBED_BATCH) batches.push(texts.slice(i, i + GEMINI_EMBED_BATCH))
  // One failed batch aborts the others: the request fails as a whole.
  const controller = new AbortController()
  const onAbort = () => controller.abort(call.signal.reason)
  call.signal.addEventListener('abort', onAbort, { once: true })
  try {
    const answers = await Promise.all(
      batches.map(async (batch) => {
        const requests = batch.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] }, ...dims }))
        try {
          const text = await send('batchEmbedContents', model, { requests }, { ...call, signal: controller.signal })
          const answer = parseUpstreamJson<GeminiEmbedAnswer>(provider, text)
          if (!Array.isArray(answer?.embeddings) || answer.embeddings.length !== batch.length) {
            throw upstreamError(
              provider,
              'malformed_response',
              `expected ${batch.length} embeddings, got ${Array.isArray(answer?.embeddings) ? answer.embeddings.length : 'none'}: ${text.slice(0, 200)}`,
            )
          }
          return answer
        } catch (error) {
          controller.abort(error)
          throw error
        }
      }),
    )
    const data = answers.flatMap((answer, b) =>
      answer.embeddings!.map((embedding, i) => {
        const index = b * GEMINI_EMBED_BATCH + i
        return { index, embedding: vectorOf(embedding, index, provider) }
      }),
    )
    return { data, usage: usageOf(answers) }
  } finally {
    call.signal.removeEventListener('abort', onAbort)
  }
}

function vectorOf(embedding: { values?: unknown } | undefined, index: number, provider: UpstreamSource): number[] {
  if (!isVector(embedding?.values)) throw upstreamError(provider, 'malformed_response', `embedding ${index} is not a vector of numbers`)
  return embedding.values
}

// Tokens only when every answer reported them (a partial count would bill less than was read).
function usageOf(answers: GeminiEmbedAnswer[]): UpstreamEmbeddings['usage'] {
  let prompt = 0
  for (const answer of answers) {
    const count = answer?.usageMetadata?.promptTokenCount
    if (typeof count !== 'number' || !Number.isFinite(count)) return undefined
    prompt += count
  }
  return { prompt_tokens: prompt, total_tokens: prompt }
}
