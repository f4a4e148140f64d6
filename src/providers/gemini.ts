import { GEMINI_EMBED_BATCH, geminiEmbed } from './gemini-embed'
import { geminiChunks } from './gemini-stream'
import { fromGeminiResponse, geminiError, toGeminiRequest, type GeminiResponse } from './gemini-translate'
import { geminiHost } from './hosts/gemini'
import { createProvider, type ProviderDeclaration } from './runner'
import { parseServerSentEvents } from './sse'
import type { Transport } from './transport'
import type { CallOptions, Provider, ProviderModel, UpstreamSource } from '../contracts'

/** Options of the Gemini provider. */
export interface GeminiOptions {
  /** A Gemini API key (Google AI Studio), sent as `x-goog-api-key`. */
  apiKey?: string
  /** API root without the version. Default `https://generativelanguage.googleapis.com`. */
  baseURL?: string
  /** Replace the default models (`geminiModels`). */
  models?: ProviderModel[]
  /** Headers added to every call. */
  headers?: Record<string, string>
  /** The provider's slug. Default `google-ai-studio` (OpenRouter's name for the Gemini API). */
  slug?: string
  /** Display name. Default `Google AI Studio`. */
  name?: string
  /** Send calls through this transport instead of node:http (tests; runtimes without node:http pick ofetch by themselves). */
  transport?: Transport
}

/** The Gemini API's root (without the version). */
export const GEMINI_BASE_URL = geminiHost.baseURL
const API_VERSION = 'v1beta' // parametersJsonSchema, responseJsonSchema and thinkingConfig are v1beta fields

/**
 * Google's Gemini API (`generateContent` / `streamGenerateContent?alt=sse`), served as an OpenAI-format provider:
 * requests and answers are translated both ways (src/providers/gemini-translate.ts), streams chunk by chunk
 * (gemini-stream.ts), embeddings through embedContent / batchEmbedContents (gemini-embed.ts), errors into the
 * gateway's envelope.
 */
export function gemini(options: GeminiOptions = {}): Provider {
  return createProvider(geminiDeclaration(options), { transport: options.transport })
}

/** The declaration of the Gemini API (docs/providers.md). */
export function geminiDeclaration(options: GeminiOptions = {}): ProviderDeclaration {
  // The host's data policy is not the provider's own `dataPolicy`: the catalogue credits it by slug (docs/routing.md).
  const { baseURL: _root, dataPolicy: _policy, models: shipped = [], ...facts } = geminiHost
  const name = options.name ?? facts.name
  const slug = options.slug ?? facts.slug
  // Who its upstream errors name.
  const source: UpstreamSource = { slug, name }
  const models = options.models ?? shipped
  const byUpstreamId = new Map(models.map((m) => [m.upstreamId ?? m.id.slice(m.id.indexOf('/') + 1), m]))
  const secretsOf = (call: CallOptions) => [call.apiKey, options.apiKey]
  const modelPath = (model: string) =>
    (model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`).split('/').map(encodeURIComponent).join('/')
  const now = () => Math.floor(Date.now() / 1000)

  return {
    ...facts,
    slug,
    name,
    byokSupported: true,
    models,
    root: (options.baseURL ?? GEMINI_BASE_URL).replace(/\/+$/, '').replace(/\/v1(beta)?$/, ''),
    headers(call) {
      const key = call.apiKey ?? options.apiKey
      return { ...(key ? { 'x-goog-api-key': key } : {}), ...options.headers }
    },
    error: (status, text, headers, call) => geminiError(source, status, text, headers, secretsOf(call)),
    chat: {
      path: (request) => `/${API_VERSION}/${modelPath(request.model)}:generateContent`,
      body: (request) => ({ json: toGeminiRequest(request, byUpstreamId.get(request.model)) }),
      json(answer: GeminiResponse, { text, headers, call }) {
        if (answer?.error) throw geminiError(source, answer.error.code ?? 0, text, headers, secretsOf(call))
        return fromGeminiResponse(answer, source, now())
      },
    },
    chatStream: {
      path: (request) => `/${API_VERSION}/${modelPath(request.model)}:streamGenerateContent?alt=sse`,
      accept: 'application/json, text/event-stream',
      body: (request) => ({ json: toGeminiRequest(request, byUpstreamId.get(request.model)) }),
      events: (body, { call }) => geminiChunks(parseServerSentEvents(body), source, secretsOf(call), now()),
    },
    // models/{model}:embedContent and :batchEmbedContents (src/providers/gemini-embed.ts); the gateway sends at most a
    // batch a call, so that a failed batch is retried alone and every served one billed (docs/embeddings.md#batches).
    embedBatch: GEMINI_EMBED_BATCH,
    embed: {
      run: (request, call, send) =>
        geminiEmbed(request, call, source, (method, model, json, sendCall) => send(`/${API_VERSION}/${modelPath(model)}:${method}`, json, sendCall)),
    },
    check: { path: `/${API_VERSION}/models`, read: (answer: { models?: unknown[] }) => `${answer?.models?.length ?? 0} models listed` },
  }
}
