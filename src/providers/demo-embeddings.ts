import { invalidRequest } from '../errors'
import type { ProviderModel, UpstreamEmbeddingRequest, UpstreamEmbeddings } from '../contracts'

/** The demo embedding model: deterministic unit-length vectors of the text, offline (docs/embeddings.md#the-demo-model). */
export const DEMO_EMBED_MODEL_ID = 'demo/embed'
/** The length of the demo's vectors when a request does not ask for fewer. */
export const DEMO_EMBED_DIMENSIONS = 256

/** The demo's embedding model (listed when `demo({ embeddings: true })`). */
export const demoEmbeddingModel: ProviderModel = {
  id: DEMO_EMBED_MODEL_ID,
  name: 'Demo: Embed (offline)',
  description: `Deterministic unit-length vectors of ${DEMO_EMBED_DIMENSIONS} dimensions (shortenable) hashed from the text's character trigrams and words: the same text gives the same vector, similar texts similar ones. Runs offline; not a real model.`,
  contextLength: 8_192,
  pricing: { prompt: '0.00000002', completion: '0', currency: 'USD' },
  inputModalities: ['text'],
  outputModalities: ['embeddings'],
  supportedParameters: ['dimensions', 'encoding_format', 'user'],
  endpoints: ['/embeddings'],
  embedding: { dimensions: DEMO_EMBED_DIMENSIONS, shortenable: true },
  created: 1767225600,
}

// FNV-1a, 32 bits: a stable hash of a feature, for its bucket and its sign.
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

// The features of a text (its character trigrams, its words, and the whole text) or of a token array (its tokens, their pairs, and the whole array).
function featuresOf(input: string | number[]): string[] {
  if (typeof input !== 'string') return [...input.map((t) => `t${t}`), ...input.slice(1).map((t, i) => `p${input[i]},${t}`), `w${input.join(',')}`]
  const padded = ` ${input} `
  const grams = Array.from({ length: Math.max(1, padded.length - 2) }, (_, i) => `g${padded.slice(i, i + 3)}`)
  return [
    ...grams,
    ...input
      .split(/\s+/)
      .filter(Boolean)
      .map((word) => `w${word}`),
    `x${input}`,
  ]
}

/**
 * The demo's vector of one input: its features hashed into signed buckets, the first `dimensions` kept, scaled to unit
 * length, each value a float32 (so base64 and float answers carry exactly the same numbers).
 */
export function demoVector(input: string | number[], dimensions = DEMO_EMBED_DIMENSIONS): number[] {
  const full = new Array<number>(DEMO_EMBED_DIMENSIONS).fill(0)
  for (const feature of featuresOf(input)) {
    const hash = fnv1a(feature)
    full[hash % DEMO_EMBED_DIMENSIONS] += hash & 0x80000000 ? -1 : 1
  }
  const kept = full.slice(0, dimensions)
  // A vector whose features cancel out (or fall past `dimensions`) still gets a direction of its own.
  if (!kept.some((x) => x !== 0)) kept[fnv1a(JSON.stringify(input)) % dimensions] = 1
  const norm = Math.hypot(...kept)
  return kept.map((x) => Math.fround(x / norm))
}

const tokensOf = (input: string | number[]) => (typeof input === 'string' ? Math.max(1, Math.ceil(input.length / 4)) : input.length)

/** The demo's answer to an embeddings request: one vector per input, and its tokens counted as the demo's chat counts them. */
export function demoEmbeddings(request: UpstreamEmbeddingRequest): UpstreamEmbeddings {
  const dimensions = request.dimensions ?? DEMO_EMBED_DIMENSIONS
  if (dimensions > DEMO_EMBED_DIMENSIONS)
    throw invalidRequest(`dimensions: the demo embedding model returns ${DEMO_EMBED_DIMENSIONS} dimensions at most`, 'dimensions')
  const { input } = request
  const inputs: (string | number[])[] =
    typeof input === 'string' ? [input] : typeof input[0] === 'number' ? [input as number[]] : (input as (string | number[])[])
  const tokens = inputs.reduce((n, item) => n + tokensOf(item), 0)
  return {
    id: 'demo',
    model: 'embed',
    data: inputs.map((item, index) => ({ index, embedding: demoVector(item, dimensions) })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  }
}
