import type { CallOptions } from './call-options'
import type { ProviderFunction } from './capabilities'
import type { ProviderModel } from './model'
import type { NativeApi, NativeCalls } from './native-events'
import type { UpstreamSpeech, UpstreamSpeechRequest, UpstreamTranscription, UpstreamTranscriptionRequest } from './wire-audio'
import type { UpstreamChatRequest, UpstreamChunk, UpstreamCompletion } from './wire-chat'
import type { UpstreamEmbeddingRequest, UpstreamEmbeddings } from './wire-embeddings'
import type { UpstreamImageRequest, UpstreamImages } from './wire-images'

/** The result of one connectivity check. */
export interface ProviderCheck {
  target: string
  ok: boolean
  latency_ms: number
  message: string
}

/**
 * What each provider function of the capability table (`serve`, src/contracts/capabilities.ts) takes and gives, as
 * the providers speak it: one line per function.
 */
export interface ProviderCallTypes {
  /** A whole chat completion. */
  chat: { request: UpstreamChatRequest; answer: UpstreamCompletion }
  /** Embeddings (`/embeddings`): one vector per input, in input order. */
  embed: { request: UpstreamEmbeddingRequest; answer: UpstreamEmbeddings }
  /** Speech synthesis (`/audio/speech`): resolves once the provider accepted the request, then streams the audio. */
  speech: { request: UpstreamSpeechRequest; answer: UpstreamSpeech }
  /** Transcription (`/audio/transcriptions`). */
  transcribe: { request: UpstreamTranscriptionRequest; answer: UpstreamTranscription }
  /** Image generation (`/images/generations`): the images as base64, with token usage where the model reports it. */
  generateImages: { request: UpstreamImageRequest; answer: UpstreamImages }
}

/** One provider function: the request as the provider speaks it in, its answer out; throws GatewayError on failure. */
export type ProviderCall<F extends ProviderFunction> = (
  request: ProviderCallTypes[F]['request'],
  options: CallOptions,
) => Promise<ProviderCallTypes[F]['answer']>

/** The capability functions a provider may implement (every one but chat's, which each provider has). */
export type CapabilityCalls = { [F in Exclude<ProviderFunction, 'chat'>]?: ProviderCall<F> }

/** An upstream provider: its `/providers` metadata, its models, and functions that call it. */
export interface Provider extends CapabilityCalls {
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
  /**
   * The most inputs one `embed` call takes (Gemini: 100). The gateway sends a larger request in calls of that many at
   * once, retries a failed one alone, and bills every call that was served (docs/embeddings.md#batches). Default: no limit.
   */
  embedBatch?: number
  /** The client APIs it speaks natively: a request in one of them is passed on unchanged, not translated to chat (docs/native.md). */
  native?: Partial<Record<NativeApi, NativeCalls>>
}
