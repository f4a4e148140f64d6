// What both entry points export: the Node one (src/index.ts) and the edge one (src/edge.ts, docs/edge.md).
export { createGateway, type Gateway } from './gateway'
export type { GatewayOptions } from './options'
export type { ActivityQuery, ActivityUsageRow, GatewayAdmin, SpendLimitsInput, TrafficLimitsInput } from './admin'
export type { ActivityGrouping } from './stores/activity'
export type { GatewayContext } from './context'
export { GatewayError, errorTypes, type ErrorEnvelope, type ErrorStatus, type ErrorType } from './errors'
export { UpstreamError, isUpstreamError, type UpstreamErrorInit } from './providers/upstream-error'
export type { UpstreamErrorKind, UpstreamSource } from './contracts'
export { createConsoleLogger, silentLogger, type Logger, type LogFields } from './logger'
export type {
  CallOptions,
  ModelPricing,
  Provider,
  ProviderCheck,
  ProviderModel,
  UpstreamChatRequest,
  UpstreamChunk,
  UpstreamCompletion,
  UpstreamUsage,
} from './contracts'
export { openaiCompatible, type OpenAICompatibleConfig } from './providers/openai-compatible'
export { openai, hostedProvider, localProvider, type HostedProviderOptions } from './providers/openai'
export { createProvider, type ProviderDeclaration, type Operation, type Composite, type Listing, type RequestBody } from './providers/runner'
export { fetchTransport, type Transport } from './providers/transport'
export { HOSTS, defineHost, type HostDefinition, type HostSlug } from './providers/hosts'
export type { DataPolicy, Host, HostFacts } from './contracts'
// Named by Provider's declaration (its native APIs, the function each capability calls): public so that a host's own
// provider can be typed (docs/providers.md).
export type { NativeApi, NativeEvent, ProviderCallTypes, ProviderFunction } from './contracts'
export { demo, DEMO_MODEL_ID, DEMO_SPEECH_MODEL_ID, DEMO_TRANSCRIBE_MODEL_ID, demoAudioModels, type DemoOptions } from './providers/demo'
export type {
  AudioUsage,
  SpeechFormat,
  TranscriptionFormat,
  UpstreamSpeech,
  UpstreamSpeechRequest,
  UpstreamTranscription,
  UpstreamTranscriptionRequest,
} from './contracts'
export { openaiAudioModels, OPENAI_TTS_VOICES, OPENAI_GPT_TTS_VOICES } from './providers/models/audio-models'
export type {
  GatewayPolicy,
  PolicyAnswerDecision,
  PolicyDecision,
  PolicyPrincipal,
  PolicyRequest,
  PolicyResponse,
  PolicyRewrite,
  PolicyTextStream,
  PolicyTrailEntry,
} from './policies/types'
export { openaiImageModels } from './providers/models/image-models'
export type { UpstreamEmbeddingRequest, UpstreamEmbeddings } from './contracts'
export { DEMO_EMBED_MODEL_ID, demoEmbeddingModel } from './providers/demo-embeddings'
export { embeddingModels } from './providers/models/embedding-models'
export { FormFile } from './http/body'
export { anthropic, ANTHROPIC_VERSION, type AnthropicOptions } from './providers/anthropic'
export { anthropicModels } from './providers/models/anthropic-models'
export { gemini, GEMINI_BASE_URL, type GeminiOptions } from './providers/gemini'
export { geminiModels } from './providers/models/gemini-models'
export { knownModels, knownHosts } from './catalogue/known-models'
export type { CatalogueModel, CatalogueProvider } from './catalogue/catalogue'
export type { CatalogueFile, CatalogueFileModel } from './catalogue/catalogue-file'
export type { ApiKeyRecord, IssuedKey, KeyAncestor, Org, Principal, Rules, SpendLimits, User } from './stores/account-types'
export type { RulesPatch } from './schemas/rules'
export type { Credits, LedgerEntry } from './stores/credits'
export type { RouteDefinition } from './routes/define'
export { sha256Hex as hashApiKey } from './crypto/keys'
export { version } from './version'
export type { RoutingEvent, RoutingHooks } from './routing/hooks'
export type { HealthSnapshot, BreakerState } from './routing/health'
export type { RateLimit, AuthOptions, ByokOptions, KeysOptions, RetentionOptions, ActivityOptions } from './options'
export type { SweepCounts } from './maintenance/sweep'
export type { ConsentInfo } from './options'
export type { AtomicEngine, AtomicOption, AtomicOps, Budget, CounterCharge, CounterWindow, HoldOps, PlaceResult, WrittenRecord } from './stores/engine-types'
export type { SessionOptions, SessionUser, NewSessionUser } from './options'
export type {
  ChatChunkChoice,
  ChatCompletionRequest,
  ChatCompletions,
  ChatStreamChunk,
  ChatToolCallDelta,
  ClientPrincipal,
  GatewayClient,
  InProcessCallOptions,
  InProcessStream,
  StreamingApi,
} from './client/types'
export type { ChatCompletionChunk } from './chat/result'
export type { ChatCompletionObject, ChatUsageObject } from './chat/render'
