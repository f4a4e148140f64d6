import type { EmbeddingModelV2, EmbeddingModelV3 } from '@ai-sdk/provider'
import { callHeaders } from './chat-request'
import type { OpenAIShapedClient } from './client'
import { toCallError } from './errors'
import { type Json, plainJson } from './json'
import { gatewayMetadata, METADATA_KEY } from './metadata'
import { bodyFields, gatewayOptions } from './provider-options'
import type { SpecificationVersion } from './spec-version'

/**
 * A gateway embedding model as the AI SDK's embedding model, specification v3 (`ai` 6) or v2 (`ai` 5), over the
 * in-process client's embeddings (docs/embeddings.md, docs/first-party.md#the-ai-sdk-provider).
 */

/** The path the errors name: the gateway's embeddings route. */
const EMBEDDINGS_PATH = '/embeddings'
/** The most inputs one request of the gateway takes (docs/embeddings.md). */
const MAX_INPUTS = 2048

/** What an embedding model needs: the client, the provider's name and the version to implement. */
export interface EmbeddingModelConfig {
  client: OpenAIShapedClient
  provider: string
  specificationVersion: SpecificationVersion
}

/** The call options both versions share. */
interface EmbedOptions {
  values: string[]
  abortSignal?: AbortSignal
  providerOptions?: Record<string, Record<string, Json> | undefined>
  headers?: Record<string, string | undefined>
}

/** The embedding model of one gateway model id. */
class GatewayEmbeddingModel<V extends SpecificationVersion> {
  readonly specificationVersion: V
  readonly provider: string
  readonly maxEmbeddingsPerCall = MAX_INPUTS
  readonly supportsParallelCalls = true

  constructor(
    readonly modelId: string,
    private readonly config: EmbeddingModelConfig & { specificationVersion: V },
  ) {
    this.specificationVersion = config.specificationVersion
    this.provider = config.provider
  }

  /** Embeds the values in one request; `dimensions`, `user` and the rest come from the provider options. */
  async doEmbed(options: EmbedOptions) {
    const body = { ...bodyFields(gatewayOptions(options.providerOptions)), model: this.modelId, input: options.values, encoding_format: 'float' }
    let answer: Record<string, Json>
    try {
      answer = await this.config.client.embeddings.create(body, { signal: options.abortSignal, headers: callHeaders(options.headers) })
    } catch (error) {
      throw toCallError(error, EMBEDDINGS_PATH, body)
    }
    const data: Json[] = Array.isArray(answer?.data) ? [...answer.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)) : []
    const tokens = answer?.usage?.prompt_tokens
    return {
      embeddings: data.map((item) => item.embedding as number[]),
      ...(typeof tokens === 'number' ? { usage: { tokens } } : {}),
      providerMetadata: { [METADATA_KEY]: gatewayMetadata(answer?.id, answer?.provider, answer?.usage) },
      response: { body: plainJson(answer) },
      warnings: [],
    }
  }
}

/** A gateway embedding model as a v3 embedding model (`ai` 6). */
export const embeddingModelV3 = (modelId: string, config: Omit<EmbeddingModelConfig, 'specificationVersion'>): EmbeddingModelV3 =>
  new GatewayEmbeddingModel(modelId, { ...config, specificationVersion: 'v3' })

/** A gateway embedding model as a v2 embedding model (`ai` 5). */
export const embeddingModelV2 = (modelId: string, config: Omit<EmbeddingModelConfig, 'specificationVersion'>): EmbeddingModelV2<string> =>
  new GatewayEmbeddingModel(modelId, { ...config, specificationVersion: 'v2' })
