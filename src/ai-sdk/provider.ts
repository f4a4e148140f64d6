import type { EmbeddingModelV2, EmbeddingModelV3, LanguageModelV2, LanguageModelV3, ProviderV2, ProviderV3 } from '@ai-sdk/provider'
import type { OpenAIShapedClient } from './client'
import { embeddingModelV2, embeddingModelV3 } from './embedding-model'
import { GatewayNoSuchModelError } from './errors'
import { languageModelV2, languageModelV3 } from './language-model'

/**
 * The gateway as an AI SDK provider (docs/first-party.md#the-ai-sdk-provider): `gateway('openai/gpt-4o')` and its
 * methods make language and embedding models that call the gateway in process, billed to the client's principal.
 */

/** What the provider is made from. */
export interface GatewayProviderSettings {
  /** The gateway's in-process client, bound to the user (or key) the calls are billed to. */
  client: OpenAIShapedClient
  /** The provider's name in the AI SDK's telemetry and errors: `model-gateway` unless given. */
  name?: string
  /** `v3` (the default) for `ai` 6, `v2` for `ai` 5: the language model specification the models implement. */
  specificationVersion?: 'v2' | 'v3'
}

/** The provider for `ai` 6: callable with a model id, and the AI SDK's ProviderV3. */
export interface GatewayProviderV3 extends ProviderV3 {
  (modelId: string): LanguageModelV3
  languageModel(modelId: string): LanguageModelV3
  /** The same as languageModel: the gateway serves every language model through chat. */
  chat(modelId: string): LanguageModelV3
  embeddingModel(modelId: string): EmbeddingModelV3
  textEmbeddingModel(modelId: string): EmbeddingModelV3
}

/** The provider for `ai` 5: callable with a model id, and the AI SDK's ProviderV2. */
export interface GatewayProviderV2 extends ProviderV2 {
  (modelId: string): LanguageModelV2
  languageModel(modelId: string): LanguageModelV2
  /** The same as languageModel: the gateway serves every language model through chat. */
  chat(modelId: string): LanguageModelV2
  textEmbeddingModel(modelId: string): EmbeddingModelV2<string>
  /** The same as textEmbeddingModel (the name `ai` 6 uses). */
  embeddingModel(modelId: string): EmbeddingModelV2<string>
}

/** Throws the AI SDK's NoSuchModelError for a kind of model the gateway does not make here. */
const noSuchModel =
  (modelType: 'imageModel' | 'transcriptionModel' | 'speechModel') =>
  (modelId: string): never => {
    throw new GatewayNoSuchModelError(modelId, modelType)
  }

/** The provider of `ai` 5's specification (v2). */
function providerV2(client: OpenAIShapedClient, name: string): GatewayProviderV2 {
  const language = (modelId: string) => languageModelV2(modelId, { client, provider: `${name}.chat` })
  const embedding = (modelId: string) => embeddingModelV2(modelId, { client, provider: `${name}.embedding` })
  return Object.assign((modelId: string) => language(modelId), {
    languageModel: language,
    chat: language,
    textEmbeddingModel: embedding,
    embeddingModel: embedding,
    imageModel: noSuchModel('imageModel'),
  })
}

/** The provider of `ai` 6's specification (v3). */
function providerV3(client: OpenAIShapedClient, name: string): GatewayProviderV3 {
  const language = (modelId: string) => languageModelV3(modelId, { client, provider: `${name}.chat` })
  const embedding = (modelId: string) => embeddingModelV3(modelId, { client, provider: `${name}.embedding` })
  return Object.assign((modelId: string) => language(modelId), {
    specificationVersion: 'v3' as const,
    languageModel: language,
    chat: language,
    embeddingModel: embedding,
    textEmbeddingModel: embedding,
    imageModel: noSuchModel('imageModel'),
  })
}

/** An AI SDK provider over the gateway's in-process client: `ai` 6's (v3) unless `specificationVersion: 'v2'` asks for `ai` 5's. */
export function createGatewayProvider(settings: GatewayProviderSettings & { specificationVersion: 'v2' }): GatewayProviderV2
export function createGatewayProvider(settings: GatewayProviderSettings & { specificationVersion?: 'v3' }): GatewayProviderV3
export function createGatewayProvider(settings: GatewayProviderSettings): GatewayProviderV2 | GatewayProviderV3 {
  const name = settings.name ?? 'model-gateway'
  return settings.specificationVersion === 'v2' ? providerV2(settings.client, name) : providerV3(settings.client, name)
}

/** The provider for `ai` 6 over a client: `gatewayProvider(client)('openai/gpt-4o')`. */
export const gatewayProvider = (client: OpenAIShapedClient): GatewayProviderV3 => createGatewayProvider({ client })
