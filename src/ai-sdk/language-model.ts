import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider'
import { type AnyCallOptions, callHeaders, chatRequest } from './chat-request'
import { resultContent } from './chat-result'
import { ChatStreamState, type StreamFinish, type StreamPart } from './chat-stream'
import type { OpenAIShapedClient } from './client'
import { toCallError } from './errors'
import { type Json, plainJson } from './json'
import { gatewayMetadata, METADATA_KEY } from './metadata'
import {
  type ChatUsage,
  finishReasonV2,
  finishReasonV3,
  type SpecificationVersion,
  type Unsupported,
  usageV2,
  usageV3,
  warningsV2,
  warningsV3,
} from './spec-version'

/**
 * A gateway chat model as the AI SDK's language model, specification v3 (`ai` 6) or v2 (`ai` 5), over the
 * in-process client: `doGenerate` calls chat whole, `doStream` streamed (docs/first-party.md#the-ai-sdk-provider).
 */

/** The path the errors name: the gateway's chat route (docs/chat.md). */
const CHAT_PATH = '/chat/completions'

/** How each version writes its finish reason, usage and warnings. */
const VERSIONS: Record<SpecificationVersion, StreamFinish & { warnings(unsupported: Unsupported[]): Json[] }> = {
  v3: { finishReason: finishReasonV3, usage: usageV3, warnings: warningsV3 },
  v2: { finishReason: finishReasonV2, usage: usageV2, warnings: warningsV2 },
}

/** What a language model needs: the client, the provider's name and the version to implement. */
export interface LanguageModelConfig {
  client: OpenAIShapedClient
  provider: string
  specificationVersion: SpecificationVersion
}

/** The language model of one gateway model id. */
class GatewayLanguageModel<V extends SpecificationVersion> {
  readonly specificationVersion: V
  readonly provider: string
  /** Image URLs go to the gateway as they are (providers take them); the AI SDK downloads other files' URLs. */
  readonly supportedUrls: Record<string, RegExp[]> = { 'image/*': [/^https?:\/\/.*$/] }

  constructor(
    readonly modelId: string,
    private readonly config: LanguageModelConfig & { specificationVersion: V },
  ) {
    this.specificationVersion = config.specificationVersion
    this.provider = config.provider
  }

  private get version() {
    return VERSIONS[this.specificationVersion]
  }

  /** Calls chat whole and answers its content, finish reason, usage and cost. */
  async doGenerate(options: AnyCallOptions) {
    const { body, unsupported } = chatRequest(this.modelId, options, false)
    let completion: Record<string, Json>
    try {
      completion = await this.config.client.chat.completions.create(body, { signal: options.abortSignal, headers: callHeaders(options.headers) })
    } catch (error) {
      throw toCallError(error, CHAT_PATH, body)
    }
    const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined
    const usage = completion?.usage as ChatUsage | undefined
    return {
      content: resultContent(choice?.message),
      finishReason: this.version.finishReason(choice?.finish_reason ?? undefined),
      usage: this.version.usage(usage),
      providerMetadata: { [METADATA_KEY]: gatewayMetadata(completion?.id, completion?.provider, completion?.usage) },
      request: { body },
      response: {
        id: completion?.id,
        modelId: completion?.model,
        ...(typeof completion?.created === 'number' ? { timestamp: new Date(completion.created * 1000) } : {}),
        body: plainJson(completion),
      },
      warnings: this.version.warnings(unsupported),
    }
  }

  /** Calls chat streamed and answers its chunks as the AI SDK's stream parts. */
  async doStream(options: AnyCallOptions) {
    const { body, unsupported } = chatRequest(this.modelId, options, true)
    let chunks: AsyncIterable<Record<string, Json>>
    try {
      chunks = await this.config.client.chat.completions.create(body, { signal: options.abortSignal, headers: callHeaders(options.headers) })
    } catch (error) {
      throw toCallError(error, CHAT_PATH, body)
    }
    const iterator = chunks[Symbol.asyncIterator]()
    const state = new ChatStreamState(this.version, CHAT_PATH, body, options.includeRawChunks === true)
    const warnings = this.version.warnings(unsupported)
    const stream = new ReadableStream<StreamPart>({
      start(controller) {
        controller.enqueue({ type: 'stream-start', warnings })
      },
      // Reads chunks until one gives a part (a pull that enqueues nothing is not called again), or the end.
      async pull(controller) {
        for (;;) {
          let next: IteratorResult<Record<string, Json>>
          try {
            next = await iterator.next()
          } catch (error) {
            if (options.abortSignal?.aborted) return controller.error(error)
            for (const part of state.failed(toCallError(error, CHAT_PATH, body))) controller.enqueue(part)
            return controller.close()
          }
          if (next.done) {
            for (const part of state.end()) controller.enqueue(part)
            return controller.close()
          }
          const parts = state.parts(next.value)
          for (const part of parts) controller.enqueue(part)
          if (parts.length) return
        }
      },
      // The caller stopped reading: the client stops the upstream and bills what was generated.
      async cancel() {
        await iterator.return?.()
      },
    })
    return { stream, request: { body } }
  }
}

/** A gateway model as a v3 language model (`ai` 6). */
export const languageModelV3 = (modelId: string, config: Omit<LanguageModelConfig, 'specificationVersion'>): LanguageModelV3 =>
  new GatewayLanguageModel(modelId, { ...config, specificationVersion: 'v3' })

/** A gateway model as a v2 language model (`ai` 5). */
export const languageModelV2 = (modelId: string, config: Omit<LanguageModelConfig, 'specificationVersion'>): LanguageModelV2 =>
  new GatewayLanguageModel(modelId, { ...config, specificationVersion: 'v2' })
