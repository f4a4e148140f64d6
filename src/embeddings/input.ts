import { invalidRequest } from '../errors'
import type { UpstreamEmbeddingRequest } from '../contracts'
import { EMBEDDING_LIMITS } from '../schemas/embeddings'

/** An embeddings request's `input`, in any of OpenAI's four shapes. */
export type EmbeddingInput = UpstreamEmbeddingRequest['input']

/** The inputs of a request, one per vector it asks for: strings, or token arrays. */
export type EmbeddingItems = { kind: 'text'; items: string[] } | { kind: 'tokens'; items: number[][] }

/** True when `input` is token ids (one array of numbers, or an array of such arrays), not text. */
const isTokens = (input: EmbeddingInput): input is number[] | number[][] => Array.isArray(input) && input.length > 0 && typeof input[0] !== 'string'

/**
 * The request's inputs, one per vector, checked against docs/embeddings.md#limits: 400 naming the input that is empty,
 * too long, or not a token id (an integer ≥ 0), and when there are none or more than EMBEDDING_LIMITS.inputs.
 */
export function embeddingItems(input: EmbeddingInput): EmbeddingItems {
  if (typeof input === 'string') {
    checkText(input, 'input')
    return { kind: 'text', items: [input] }
  }
  if (!input.length) throw invalidRequest('input: must not be empty', 'input')
  if (!isTokens(input)) {
    const texts = input as string[]
    checkCount(texts.length)
    for (const [i, text] of texts.entries()) checkText(text, `input.${i}`)
    return { kind: 'text', items: texts }
  }
  if (typeof input[0] === 'number') {
    checkTokens(input as number[], 'input')
    return { kind: 'tokens', items: [input as number[]] }
  }
  const arrays = input as number[][]
  checkCount(arrays.length)
  for (const [i, tokens] of arrays.entries()) checkTokens(tokens, `input.${i}`)
  return { kind: 'tokens', items: arrays }
}

function checkCount(count: number) {
  if (count > EMBEDDING_LIMITS.inputs)
    throw invalidRequest(`input: must have at most ${EMBEDDING_LIMITS.inputs} items (one request embeds at most ${EMBEDDING_LIMITS.inputs} inputs)`, 'input')
}

function checkText(text: string, param: string) {
  if (!text.length) throw invalidRequest(`${param}: must not be empty`, param)
  if (text.length > EMBEDDING_LIMITS.inputCharacters) throw invalidRequest(`${param}: must have at most ${EMBEDDING_LIMITS.inputCharacters} characters`, param)
}

function checkTokens(tokens: number[], param: string) {
  if (!tokens.length) throw invalidRequest(`${param}: must not be empty`, param)
  if (tokens.length > EMBEDDING_LIMITS.inputTokens) throw invalidRequest(`${param}: must have at most ${EMBEDDING_LIMITS.inputTokens} tokens`, param)
  const bad = tokens.findIndex((token) => !Number.isSafeInteger(token) || token < 0)
  if (bad >= 0) throw invalidRequest(`${param}.${bad}: a token id must be an integer ≥ 0`, `${param}.${bad}`)
}

/**
 * The most tokens the inputs can be (docs/money.md): a token is at least one UTF-8 byte, so a string's bytes bound its
 * tokens; a token array is its length.
 */
export function maxInputTokens(inputs: EmbeddingItems): number {
  if (inputs.kind === 'tokens') return inputs.items.reduce((n, tokens) => n + tokens.length, 0)
  return inputs.items.reduce((n, text) => n + Buffer.byteLength(text), 0)
}

/** The tokens billed when a provider reports none: a token array's length, else 4 characters a token of each string. */
export function estimatedInputTokens(inputs: EmbeddingItems): number {
  if (inputs.kind === 'tokens') return inputs.items.reduce((n, tokens) => n + tokens.length, 0)
  return inputs.items.reduce((n, text) => n + Math.ceil(text.length / 4), 0)
}
