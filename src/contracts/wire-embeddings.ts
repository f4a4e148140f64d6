/**
 * An embeddings request as a provider receives it: the provider's model id, the input as strings or token arrays,
 * and the vectors always asked as floats (the gateway encodes base64 itself when the client asks for it).
 */
export interface UpstreamEmbeddingRequest {
  model: string
  /** One string, several strings, one token array, or several token arrays (OpenAI's `input`). */
  input: string | string[] | number[] | number[][]
  /** Shorter vectors, for models that can give them. */
  dimensions?: number
  /** The end user, for the provider's abuse monitoring. */
  user?: string
}

/** Embeddings as OpenAI shapes them: one float vector per input, in input order, and the tokens read. */
export interface UpstreamEmbeddings {
  data: { index: number; embedding: number[] }[]
  /** Tokens of the input; absent when the provider reports none (the gateway then estimates them). */
  usage?: { prompt_tokens: number; total_tokens?: number } | null
  /** The provider's model id, when it says. */
  model?: string
  /** The provider's id of the request, when it gives one. */
  id?: string
}
