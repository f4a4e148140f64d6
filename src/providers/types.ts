import type { CapabilityPath } from '../capabilities/capability'
import type { ChatRequest } from '../schemas/chat'

/** Prices of a model as exact decimal strings per token (per unit for `request`, `image`, `web_search`), in `currency`. */
export interface ModelPricing {
  prompt: string
  completion: string
  request?: string
  image?: string
  image_output?: string
  /** Per audio input token (transcription: `input_token_details.audio_tokens`); `prompt` prices text input tokens, `completion` output tokens (speech: audio output tokens). */
  audio?: string
  web_search?: string
  internal_reasoning?: string
  input_cache_read?: string
  /** Per prompt token written to the cache (Anthropic: a 5-minute write). Default: `prompt`. */
  input_cache_write?: string
  /** Per prompt token written to the cache for an hour (Anthropic's `cache_control.ttl: "1h"`); without it such writes are refused (docs/money.md#priced-options). */
  input_cache_write_1h?: string
  /** Per second of input audio (transcription), when the upstream reports no token usage. */
  audio_second?: string
  /** Per character of input text (speech), when the upstream reports no token usage. */
  character?: string
  /** ISO currency of these prices. Default `USD`. */
  currency?: string
  /**
   * Other per-token prices for a whole request whose prompt is longer than `above_prompt_tokens` (Gemini above 200K,
   * OpenAI's GPT-6 above 272K), each replacing the price it names (docs/catalogue.md).
   */
  long_context?: LongContextPricing
  /**
   * Prices of the service tiers a request may ask for with `service_tier` (`priority`, `flex`, …), each replacing the
   * prices it gives. A tier that is not listed here is refused (400), so it is never billed at the plain price
   * (docs/limits.md); `auto` and `default` are the plain price.
   */
  service_tiers?: Record<string, ServiceTierPricing>
  /**
   * Multipliers of every token price for Anthropic's `speed` options (fast mode: `{ fast: "6" }`); `standard` and none
   * are the plain price, a speed not listed is refused (400), as an unlisted service tier is (docs/money.md#priced-options).
   */
  speeds?: Record<string, string>
  /**
   * Multipliers of every token price for Anthropic's `inference_geo` values (`us`: `"1.1"`); `global` and none are the
   * plain price, a value not listed is refused (400) (docs/money.md#priced-options).
   */
  inference_geos?: Record<string, string>
}

/** The prices of a request with a long prompt: from `above_prompt_tokens` + 1 prompt tokens on, for the whole request. */
export type LongContextPricing = { above_prompt_tokens: number } & Partial<
  Pick<ModelPricing, 'prompt' | 'completion' | 'input_cache_read' | 'input_cache_write' | 'input_cache_write_1h' | 'internal_reasoning'>
>

/** What a service tier costs: the per-token prices that differ from the model's plain ones. */
export type ServiceTierPricing = Partial<Pick<ModelPricing, 'prompt' | 'completion' | 'input_cache_read' | 'input_cache_write' | 'input_cache_write_1h'>>

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

/** A price change a provider announced: from the day `from` (`YYYY-MM-DD`, UTC) on, `pricing` applies. */
export interface PriceChange {
  from: string
  pricing: ModelPricing
  note?: string
}

/** The OpenAI-format request a provider receives: the client's request with the provider's own model id. */
export type UpstreamChatRequest = Omit<ChatRequest, 'models' | 'provider' | 'model'> & { model: string; [key: string]: unknown }

/** Token counts as OpenAI reports them. */
export interface UpstreamUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens?: number
  /** `cache_write_tokens`: every prompt token written to the cache; `cache_write_1h_tokens`: those of them written for an hour. */
  prompt_tokens_details?: {
    cached_tokens?: number
    audio_tokens?: number
    cache_write_tokens?: number
    cache_write_1h_tokens?: number
    [key: string]: unknown
  } | null
  completion_tokens_details?: {
    reasoning_tokens?: number
    audio_tokens?: number
    accepted_prediction_tokens?: number
    rejected_prediction_tokens?: number
    image_tokens?: number
    [key: string]: unknown
  } | null
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

/** Audio formats of speech output (docs/audio.md#speech). */
export type SpeechFormat = 'mp3' | 'pcm' | 'wav' | 'opus' | 'aac' | 'flac'
/** Audio formats a transcription accepts (docs/audio.md#formats-and-magic-bytes). */
export type TranscriptionFormat = 'wav' | 'mp3' | 'flac' | 'm4a' | 'ogg' | 'webm' | 'aac'

/** A speech request as a provider receives it: the provider's model id, the voice already checked. */
export interface UpstreamSpeechRequest {
  model: string
  input: string
  voice?: string
  response_format: SpeechFormat
  speed?: number
  instructions?: string
  /** `sse`: stream the audio as events ending with token usage (set by the gateway when the model has `speechUsageEvents`). */
  stream_format?: 'sse' | 'audio'
}

/** Usage an audio upstream reports: tokens (gpt-4o-mini-tts, gpt-4o-transcribe) or seconds of input audio (whisper-1). */
export interface AudioUsage {
  input_tokens?: number
  output_tokens?: number
  total_tokens?: number
  input_token_details?: { text_tokens?: number; audio_tokens?: number; [key: string]: unknown } | null
  /** Seconds of input audio (OpenAI's `usage: { type: "duration", seconds }`). */
  seconds?: number
  [key: string]: unknown
}

/** A speech answer: the audio as it arrives. */
export interface UpstreamSpeech {
  /** The audio bytes, in the requested format, as they arrive. Iterate it once. */
  audio: AsyncIterable<Uint8Array>
  /** Usage the provider reported; complete only once `audio` has ended (it may come last, as in OpenAI's SSE). */
  usage?: AudioUsage
  /** The provider's id of the request, when it gives one. */
  id?: string
}

/** A transcription request as a provider receives it: the decoded audio, its format already checked. */
export interface UpstreamTranscriptionRequest {
  model: string
  audio: Uint8Array
  format: TranscriptionFormat
  language?: string
  prompt?: string
  temperature?: number
  response_format: 'json' | 'verbose_json'
  timestamp_granularities?: ('word' | 'segment')[]
}

/** A transcription as OpenAI shapes it (`json` or `verbose_json`). */
export interface UpstreamTranscription {
  text: string
  language?: string
  /** Seconds of audio (verbose_json). */
  duration?: number
  segments?: unknown[]
  words?: unknown[]
  usage?: AudioUsage | null
  [key: string]: unknown
}

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

/** What every upstream call receives. */
export interface CallOptions {
  /** Aborted when the client goes away or the deadline passes. */
  signal: AbortSignal
  /** Per-attempt timeout in milliseconds (no byte from upstream for this long fails the attempt). */
  timeoutMs: number
  /** A customer's own key (BYOK) to use instead of the provider's. */
  apiKey?: string
  /** Headers every call of this attempt carries: the trace context (`traceparent`, docs/operations.md#traces). */
  headers?: Record<string, string>
}

/** A client's own API that a provider can be called in, unchanged (docs/native.md): OpenAI's Responses, Anthropic's Messages. */
export type NativeApi = 'responses' | 'messages'

/** One event of a native stream: its type (the `event:` name, else the data's `type`) and its data. */
export interface NativeEvent {
  type: string
  data: Record<string, unknown>
}

/**
 * Calls of a native API: the body is the client's, with the provider's model id; `headers` are the client's headers
 * of that API (Anthropic's `anthropic-version`, `anthropic-beta`), of which the provider passes on those it declares
 * (docs/native.md).
 */
export interface NativeCalls {
  /** A whole answer: the provider's JSON. Throws GatewayError on failure. */
  whole(body: Record<string, unknown>, options: CallOptions, headers?: Record<string, string>): Promise<Record<string, unknown>>
  /** A streamed answer: resolves once the provider accepted it, then yields its events (an error event is thrown as a GatewayError). */
  stream(body: Record<string, unknown>, options: CallOptions, headers?: Record<string, string>): Promise<AsyncIterable<NativeEvent>>
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
  /**
   * The most choices (`n`) one chat request may ask of it. Default 1: a request with a larger `n` is routed to the
   * providers that take it, and refused with 400 naming `n` when none does (docs/limits.md).
   */
  maxChoices?: number
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
  /** Speech synthesis (`/audio/speech`): resolves once the provider accepted the request (errors before that reject), then streams the audio. */
  speech?(request: UpstreamSpeechRequest, options: CallOptions): Promise<UpstreamSpeech>
  /** Transcription (`/audio/transcriptions`). Throws GatewayError on failure. */
  transcribe?(request: UpstreamTranscriptionRequest, options: CallOptions): Promise<UpstreamTranscription>
  /** Embeddings (`/embeddings`): one vector per input, in input order. Throws GatewayError on failure. */
  embed?(request: UpstreamEmbeddingRequest, options: CallOptions): Promise<UpstreamEmbeddings>
  /**
   * The most inputs one `embed` call takes (Gemini: 100). The gateway sends a larger request in calls of that many at
   * once, retries a failed one alone, and bills every call that was served (docs/embeddings.md#batches). Default: no limit.
   */
  embedBatch?: number
  /** The client APIs it speaks natively: a request in one of them is passed on unchanged, not translated to chat (docs/native.md). */
  native?: Partial<Record<NativeApi, NativeCalls>>
}
