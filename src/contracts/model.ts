import type { CapabilityPath } from './capabilities'
import type { ModelPricing, PriceChange } from './pricing'

/** A model as one provider serves it. */
export interface ProviderModel {
  /** The gateway's id, `author/slug` (`openai/gpt-4o-mini`). */
  id: string
  /** The id the provider's API expects. Default: the part of `id` after the slash. */
  upstreamId?: string
  name?: string
  description?: string
  contextLength?: number
  maxCompletionTokens?: number
  pricing: ModelPricing
  /** `text`, `image`, `audio`, `file`. Default `['text']`. */
  inputModalities?: string[]
  /** Default `['text']`. */
  outputModalities?: string[]
  /** Request parameters the model honours (`tools`, `response_format`, …). */
  supportedParameters?: string[]
  supportedVoices?: string[]
  /** Categories (`programming`, `translation`, …). */
  tags?: string[]
  /** Release time, epoch seconds. */
  created?: number
  knowledgeCutoff?: string
  releaseDate?: string
  huggingFaceId?: string
  /** Documentation page of the model. */
  detailsUrl?: string
  reasoning?: { mandatory?: boolean; efforts?: string[]; supportsMaxTokens?: boolean }
  /**
   * The weights' precision as this provider serves them (OpenRouter's values: `int4`, `int8`, `fp4`, `fp6`, `fp8`,
   * `fp16`, `bf16`, `fp32`, …), matched by a request's `provider.quantizations`; unset counts as `unknown` (docs/routing.md).
   */
  quantization?: string
  /**
   * API routes the model serves (its capabilities, docs/capabilities.md). Default `['/chat/completions']`; audio
   * models say `['/audio/speech']` or `['/audio/transcriptions']`, embedding models `['/embeddings']`.
   */
  endpoints?: CapabilityPath[]
  /** Embeddings: the length of the vectors it returns by default, and whether a request may ask for fewer (`dimensions`). */
  embedding?: { dimensions: number; shortenable?: boolean }
  /**
   * The day (`YYYY-MM-DD`, UTC) the provider stops serving the model (OpenRouter's `expiration_date`). From that day
   * this offer is not routed; a model with no offer left answers 404 naming `replacement` (docs/catalogue.md).
   */
  expirationDate?: string
  /** The model id to use instead once this one expired, named in the 404 of a retired model. */
  replacement?: string
  /** Where the prices and facts come from, and the day they were checked there (docs/catalogue.md). */
  source?: ModelSource
  /** Announced price changes: from the day `from` (`YYYY-MM-DD`, UTC) on, `pricing` replaces the model's prices. */
  priceChanges?: PriceChange[]
  /**
   * Speech: the upstream can stream the audio as Server-Sent Events that end with token usage (OpenAI's
   * `stream_format: "sse"`, gpt-4o-mini-tts). The gateway then asks for them to bill the reported tokens; the client
   * still receives the raw audio bytes.
   */
  speechUsageEvents?: boolean
}

/** Where a model's prices and facts were read, and when (docs/catalogue.md). */
export interface ModelSource {
  /** The page or table read (a provider's pricing page, OpenRouter's model page, LiteLLM's price table, …). */
  url: string
  /** The day it was checked, `YYYY-MM-DD`. */
  checked: string
  /** What is not settled, or how a value was derived. */
  note?: string
}
