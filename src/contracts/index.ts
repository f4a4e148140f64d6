/*
 * The contracts at the bottom of the gateway (docs/development.md#code-layout): the capability table, the provider
 * interface and its call options, the upstream wire types, models and prices, host facts and data policies, native
 * events and upstream error kinds. Nothing here imports anything else of src/.
 */
export type { CallOptions } from './call-options'
export { CAPABILITIES, CAPABILITY_NAMES, capabilityOfPath, type ApiType, type Capability, type CapabilityPath, type ProviderFunction } from './capabilities'
export type { DataPolicy, Host, HostFacts } from './host'
export type { ModelSource, ProviderModel } from './model'
export type { NativeApi, NativeCalls, NativeEvent } from './native-events'
export type { LongContextPricing, ModelPricing, PriceChange, ServiceTierPricing } from './pricing'
export type { CapabilityCalls, Provider, ProviderCall, ProviderCallTypes, ProviderCheck } from './provider'
export { capabilitiesOf, offerServes, pathsOf, providerServes } from './serves'
export type { UpstreamErrorKind, UpstreamSource } from './upstream-errors'
export {
  TRANSCRIPTION_CONTENT_TYPES,
  type AudioUsage,
  type SpeechFormat,
  type TranscriptionFormat,
  type UpstreamSpeech,
  type UpstreamSpeechRequest,
  type UpstreamTranscription,
  type UpstreamTranscriptionRequest,
} from './wire-audio'
export type {
  ChunkIterator,
  UpstreamCacheControl,
  UpstreamChatRequest,
  UpstreamChoice,
  UpstreamChunk,
  UpstreamCompletion,
  UpstreamContent,
  UpstreamContentPart,
  UpstreamMessage,
  UpstreamReasoning,
  UpstreamReasoningEffort,
  UpstreamResponseFormat,
  UpstreamTool,
  UpstreamToolCall,
  UpstreamToolChoice,
  UpstreamUsage,
} from './wire-chat'
export type { UpstreamEmbeddingRequest, UpstreamEmbeddings } from './wire-embeddings'
export type { ImageUsage, UpstreamImage, UpstreamImageRequest, UpstreamImages } from './wire-images'
