import type { ChatRequest } from '../schemas/chat'

/** Prices of a model as exact decimal strings per token (per unit for `request`, `image`, `web_search`), in `currency`. */
export interface ModelPricing {
  prompt: string
  completion: string
  request?: string
  image?: string
  image_output?: string
  audio?: string
  web_search?: string
  internal_reasoning?: string
  input_cache_read?: string
  input_cache_write?: string
  /** Per second of input audio (transcription). */
  audio_second?: string
  /** Per character of input text (speech). */
  character?: string
  /** ISO currency of these prices. Default `USD`. */
  currency?: string
}

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
  /** API routes the model serves. Default `['/chat/completions']`. */
  endpoints?: string[]
}

/** The OpenAI-format request a provider receives: the client's request with the provider's own model id. */
export type UpstreamChatRequest = Omit<ChatRequest, 'models' | 'provider' | 'model'> & { model: string; [key: string]: unknown }

/** Token counts as OpenAI reports them. */
export interface UpstreamUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number; cache_write_tokens?: number; [key: string]: unknown } | null
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number; accepted_prediction_tokens?: number; rejected_prediction_tokens?: number; image_tokens?: number; [key: string]: unknown } | null
  [key: string]: unknown
}

/** One choice of a whole completion, as OpenAI shapes it. */
export interface UpstreamChoice {
  index: number
  message: { role: 'assistant'; content: string | null; tool_calls?: unknown[]; refusal?: string | null; reasoning?: string | null; [key: string]: unknown }
  finish_reason: string | null
  logprobs?: unknown
  [key: string]: unknown
}

/** A whole chat completion as OpenAI shapes it. */
export interface UpstreamCompletion {
  id?: string
  created?: number
  model?: string
  choices: UpstreamChoice[]
  usage?: UpstreamUsage | null
  system_fingerprint?: string | null
  service_tier?: string | null
  [key: string]: unknown
}

/** One streamed chunk as OpenAI shapes it. */
export interface UpstreamChunk {
  id?: string
  created?: number
  model?: string
  choices: { index: number; delta: Record<string, unknown>; finish_reason?: string | null; logprobs?: unknown; [key: string]: unknown }[]
  usage?: UpstreamUsage | null
  system_fingerprint?: string | null
  service_tier?: string | null
  [key: string]: unknown
}

/** What every upstream call receives. */
export interface CallOptions {
  /** Aborted when the client goes away or the deadline passes. */
  signal: AbortSignal
  /** Per-attempt timeout in milliseconds (no byte from upstream for this long fails the attempt). */
  timeoutMs: number
  /** A customer's own key (BYOK) to use instead of the provider's. */
  apiKey?: string
}

/** The result of one connectivity check. */
export interface ProviderCheck {
  target: string
  ok: boolean
  latency_ms: number
  message: string
}

/** An upstream provider: its `/providers` metadata, its models, and functions that call it. */
export interface Provider {
  /** Stable slug, e.g. `openai`. */
  slug: string
  /** Display name. */
  name: string
  description?: string
  /** Customers may bring their own key for it (BYOK). */
  byokSupported?: boolean
  /** False when the service has no key of its own for it: only customers' keys (BYOK) can use it. Default true. */
  serviceKey?: boolean
  privacyPolicyUrl?: string
  termsOfServiceUrl?: string
  statusPageUrl?: string
  region?: string
  headquarters?: string
  iconUrl?: string
  dataPolicy?: Record<string, unknown>
  /** Models it serves. */
  models: ProviderModel[]
  /** Asks the provider for the models it has (OpenAI-compatible `GET /models`); merged with `models`. */
  discoverModels?(options: CallOptions): Promise<ProviderModel[]>
  /** A whole chat completion. Throws GatewayError on failure. */
  chat(request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamCompletion>
  /** A streamed chat completion: resolves once the provider accepted the request (errors before that reject), then yields chunks. */
  chatStream(request: UpstreamChatRequest, options: CallOptions): Promise<AsyncIterable<UpstreamChunk>>
  /** Connectivity checks with the provider's or a given key. */
  check?(options: CallOptions): Promise<ProviderCheck[]>
}



