import { encodeMultipart, type MultipartField } from './multipart'
import { errorMessageOf } from './checks'
import { embeddingInputCount, readOpenAIEmbeddings } from './embeddings'
import { openaiChunks, speechFromEvents } from './openai-stream'
import { createProvider, type ProviderDeclaration } from './runner'
import type { Transport } from './transport'
import {
  TRANSCRIPTION_CONTENT_TYPES,
  type CallOptions,
  type Provider,
  type ProviderFunction,
  type ProviderModel,
  type UpstreamChatRequest,
  type UpstreamCompletion,
  type UpstreamEmbeddingRequest,
  type UpstreamImages,
  type UpstreamSource,
  type UpstreamTranscription,
} from '../contracts'
import { upstreamError } from './upstream-error'
import { effortForBudget, nearestEffort, reasoningOf, requestedEffort } from './reasoning'

/** Configuration of an OpenAI-compatible host (Groq, Together, Mistral, DeepSeek, Fireworks, xAI, Ollama, vLLM, LM Studio, …). */
export interface OpenAICompatibleConfig extends Omit<Provider, 'models' | 'chatStream' | 'discoverModels' | 'check' | 'native' | ProviderFunction> {
  /** API root including the version, e.g. `https://api.groq.com/openai/v1`. */
  baseURL: string
  /** The service's key for this host; optional for local hosts. */
  apiKey?: string
  /** Models it serves (see `knownModels`). */
  models?: ProviderModel[]
  /** Also list the host's own `GET /models` (for Ollama, vLLM); those models are priced `discoveredPricing` (default free). */
  discover?: boolean
  discoveredPricing?: ProviderModel['pricing']
  /** Extra headers on every call. */
  headers?: Record<string, string>
  /** Request fields the host rejects, dropped before sending (OpenAI rejects `top_k`, `repetition_penalty`, `min_p`). */
  dropParameters?: string[]
  /** Send `max_tokens` as `max_completion_tokens` (OpenAI's newer models require it). */
  useMaxCompletionTokens?: boolean
  /**
   * The host's own request hook: the chat body as it will be sent (a copy, gateway-only fields already dropped) → the
   * body the host takes (Mistral: `seed` → `random_seed`). docs/providers.md#adding-a-host.
   */
  chatBody?: (body: Record<string, unknown>, request: UpstreamChatRequest) => Record<string, unknown>
  /** The same for embeddings: OpenAI's `/embeddings` body → the host's (Mistral: `dimensions` → `output_dimension`). */
  embedBody?: (body: Record<string, unknown>, request: UpstreamEmbeddingRequest) => Record<string, unknown>
  /** The host also speaks OpenAI's Responses API (`POST /responses`): `/responses` requests are passed on to it unchanged (docs/native.md). */
  responsesApi?: boolean
  /** Send calls through this transport instead of node:http (tests; runtimes without node:http pick ofetch by themselves). */
  transport?: Transport
}

// Fields of OpenRouter's request that no OpenAI-compatible host takes as they are (routing removes most of them
// already: src/chat/request-fields.ts).
const GATEWAY_ONLY = ['models', 'provider', 'reasoning', 'transforms', 'route', 'usage', 'cache_control']

type Json = Record<string, unknown>
const hasCache = (value: unknown) => !!value && typeof value === 'object' && 'cache_control' in value
const withoutCache = <T>(value: T): T => {
  if (!hasCache(value)) return value
  const { cache_control: _cache, ...rest } = value as Json
  return rest as T
}

/**
 * Messages and tools without OpenRouter's `cache_control` (on a message, a content part or a tool): Anthropic's
 * breakpoints, which OpenAI-compatible hosts do not take (they cache prompts on their own). Copies only what holds one.
 */
export function withoutCacheControl(body: Json): Json {
  const messages = body.messages as Json[] | undefined
  if (messages?.some((m) => hasCache(m) || (Array.isArray(m.content) && m.content.some(hasCache)))) {
    body.messages = messages.map((m) => {
      const message = withoutCache(m)
      return Array.isArray(message.content) && message.content.some(hasCache) ? { ...message, content: message.content.map(withoutCache) } : message
    })
  }
  const tools = body.tools as Json[] | undefined
  if (tools?.some(hasCache)) body.tools = tools.map(withoutCache)
  return body
}

/**
 * The `reasoning_effort` sent for a request (docs/reasoning.md): the effort asked (`reasoning.effort`, else
 * `reasoning_effort`; `reasoning.enabled: false` is `none`; a `reasoning.max_tokens` alone stands for low ≤ 4,096,
 * medium ≤ 16,384, else high). For a model of the catalogue that lists `reasoning.efforts`, the nearest of those
 * (a tie goes to the higher); for a catalogue model without that list, none (it takes no effort); for a model the
 * catalogue does not know (one discovered from the host), the effort as asked.
 */
export function reasoningEffortFor(request: UpstreamChatRequest, model: ProviderModel | undefined): string | undefined {
  const budget = reasoningOf(request)?.max_tokens
  const asked = requestedEffort(request) ?? (budget !== undefined ? effortForBudget(budget) : undefined)
  if (asked === undefined) return undefined
  if (!model) return reasoningOf(request)?.enabled === false ? undefined : asked
  const offered = model.reasoning?.efforts
  return offered?.length ? nearestEffort(asked, offered) : undefined
}

/** A provider for any host that speaks OpenAI's chat completions API. */
export function openaiCompatible(config: OpenAICompatibleConfig): Provider {
  return createProvider(openaiCompatibleDeclaration(config), { transport: config.transport })
}

/** The declaration of an OpenAI-compatible host (docs/providers.md): OpenAI's paths, bodies and answers. */
export function openaiCompatibleDeclaration(config: OpenAICompatibleConfig): ProviderDeclaration {
  const {
    baseURL,
    apiKey,
    discover,
    discoveredPricing,
    headers,
    dropParameters = [],
    useMaxCompletionTokens,
    chatBody,
    embedBody,
    responsesApi,
    transport: _transport,
    models = [],
    ...info
  } = config
  // Who its upstream errors name.
  const provider: UpstreamSource = { slug: info.slug, name: info.name }
  const byUpstreamId = new Map(models.map((m) => [m.upstreamId ?? m.id.slice(m.id.indexOf('/') + 1), m]))

  const leftOut: ReadonlySet<string> = new Set([...GATEWAY_ONLY, ...dropParameters])
  // The body in one copy, key by key (a spread followed by deletes costs several times more:
  // bench/README.md#object-literals-on-node-20). `reasoning_effort`, the token limit and the stream fields are set after.
  const toBody = (request: UpstreamChatRequest, stream: boolean): Record<string, unknown> => {
    const fields = request as unknown as Record<string, unknown>
    const effort = reasoningEffortFor(request, byUpstreamId.get(request.model))
    const maxTokens = leftOut.has('max_tokens') ? undefined : fields.max_tokens
    const maxCompletionTokens = leftOut.has('max_completion_tokens') ? undefined : fields.max_completion_tokens
    const renameMaxTokens = useMaxCompletionTokens === true && maxTokens != null && maxCompletionTokens == null
    const body: Record<string, unknown> = {}
    for (const key in fields) {
      if (leftOut.has(key) || key === 'reasoning_effort' || key === 'stream' || key === 'stream_options') continue
      if (key === 'max_tokens' && renameMaxTokens) continue
      body[key] = fields[key]
    }
    if (effort !== undefined) body.reasoning_effort = effort
    if (renameMaxTokens) body.max_completion_tokens = maxTokens
    if (stream) {
      body.stream = true
      body.stream_options = Object.assign({}, request.stream_options, { include_usage: true })
    }
    withoutCacheControl(body)
    return chatBody ? chatBody(body, request) : body
  }

  const declaration: ProviderDeclaration = {
    serviceKey: apiKey !== undefined || !info.byokSupported,
    ...info,
    models,
    root: baseURL.replace(/\/+$/, ''),
    headers(call: CallOptions) {
      const key = call.apiKey ?? apiKey
      return Object.assign(key ? { authorization: `Bearer ${key}` } : {}, headers)
    },
    chat: {
      path: '/chat/completions',
      body: (request) => ({ json: toBody(request, false) }),
      json(completion: UpstreamCompletion, { text }) {
        if (!completion || !Array.isArray(completion.choices) || completion.choices.length === 0 || typeof completion.choices[0]?.message !== 'object') {
          throw (completion as { error?: unknown })?.error
            ? upstreamError(provider, 'upstream_error', errorMessageOf(text))
            : upstreamError(provider, 'malformed_response', text.slice(0, 200))
        }
        return completion
      },
    },
    chatStream: {
      path: '/chat/completions',
      accept: 'text/event-stream',
      body: (request) => ({ json: toBody(request, true) }),
      events: (body) => openaiChunks(body, provider),
    },
    // POST {baseURL}/embeddings (OpenAI's API reference): floats always (the gateway encodes base64 itself).
    embed: {
      path: '/embeddings',
      body(request) {
        const body: Record<string, unknown> = {
          model: request.model,
          input: request.input,
          ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
          ...(request.user !== undefined ? { user: request.user } : {}),
          encoding_format: 'float',
        }
        return { json: embedBody ? embedBody(body, request) : body }
      },
      json(answer, { text, request, headers: resHeaders }) {
        const embeddings = readOpenAIEmbeddings(provider, answer, text, embeddingInputCount(request.input))
        return resHeaders['x-request-id'] && !embeddings.id ? { ...embeddings, id: resHeaders['x-request-id'] } : embeddings
      },
    },
    // POST {baseURL}/audio/speech (OpenAI's API reference): JSON in, the audio bytes out, piped as they arrive; with
    // stream_format "sse", events whose base64 audio deltas are decoded and whose last one reports token usage.
    speech: {
      path: '/audio/speech',
      accept: (request) => (request.stream_format === 'sse' ? 'text/event-stream' : 'application/octet-stream'),
      body: (request) => ({ json: request }),
      async raw(res) {
        const type = (res.headers['content-type'] ?? '').toLowerCase()
        const id = res.headers['x-request-id']
        if (type.includes('text/event-stream')) return speechFromEvents(res.body, provider, id)
        if (type.includes('json') || type.startsWith('text/')) {
          const text = await res.text().catch(() => '')
          throw upstreamError(provider, 'malformed_response', `expected audio, got ${type}: ${errorMessageOf(text).slice(0, 200)}`)
        }
        return { audio: res.body, ...(id ? { id } : {}) }
      },
    },
    // POST {baseURL}/audio/transcriptions: a multipart/form-data upload of the audio file and the fields.
    transcribe: {
      path: '/audio/transcriptions',
      body(request) {
        const fields: MultipartField[] = [
          { name: 'file', filename: `audio.${request.format}`, contentType: TRANSCRIPTION_CONTENT_TYPES[request.format], data: request.audio },
          { name: 'model', value: request.model },
          { name: 'response_format', value: request.response_format },
        ]
        if (request.language !== undefined) fields.push({ name: 'language', value: request.language })
        if (request.prompt !== undefined) fields.push({ name: 'prompt', value: request.prompt })
        if (request.temperature !== undefined) fields.push({ name: 'temperature', value: String(request.temperature) })
        for (const granularity of request.timestamp_granularities ?? []) fields.push({ name: 'timestamp_granularities[]', value: granularity })
        const { body, contentType } = encodeMultipart(fields)
        return { bytes: body, contentType }
      },
      json(transcription: UpstreamTranscription, { text, headers: resHeaders }) {
        if (!transcription || typeof transcription.text !== 'string') {
          throw (transcription as { error?: unknown })?.error
            ? upstreamError(provider, 'upstream_error', errorMessageOf(text))
            : upstreamError(provider, 'malformed_response', text.slice(0, 200))
        }
        return resHeaders['x-request-id'] && transcription.id === undefined ? { ...transcription, id: resHeaders['x-request-id'] } : transcription
      },
    },
    // POST {baseURL}/images/generations (OpenAI's Images API reference): JSON in, `{ created, data: [{ b64_json }], usage }` out.
    generateImages: {
      path: '/images/generations',
      body: (request) => ({ json: request }),
      json(images: UpstreamImages, { text, headers: resHeaders }) {
        if (!images || !Array.isArray(images.data)) {
          throw (images as { error?: unknown })?.error
            ? upstreamError(provider, 'upstream_error', errorMessageOf(text))
            : upstreamError(provider, 'malformed_response', text.slice(0, 200))
        }
        return resHeaders['x-request-id'] && images.id === undefined ? { ...images, id: resHeaders['x-request-id'] } : images
      },
    },
    check: { path: '/models', read: (answer: { data?: unknown[] }) => `${answer?.data?.length ?? 0} models listed` },
  }
  // OpenAI's Responses API: a stream's `error` event (OpenAI's `{ type: "error", code, message }`) fails it.
  if (responsesApi) {
    declaration.native = {
      responses: {
        path: '/responses',
        isAnswer: (answer) => answer.object === 'response' && Array.isArray(answer.output),
        streamError: ({ type, data }) =>
          type === 'error'
            ? upstreamError(
                provider,
                data.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'upstream_error',
                String(data.message ?? 'the stream failed'),
              )
            : undefined,
      },
    }
  }
  if (discover) {
    declaration.discover = {
      path: '/models',
      read: (answer: { data?: { id?: unknown; created?: unknown }[] }) =>
        (answer?.data ?? [])
          .filter((m): m is { id: string; created?: number } => typeof m.id === 'string')
          .map((m) => ({
            id: `${info.slug}/${m.id}`,
            upstreamId: m.id,
            name: `${info.name}: ${m.id}`,
            created: typeof m.created === 'number' ? m.created : undefined,
            pricing: discoveredPricing ?? { prompt: '0', completion: '0' },
          })),
    }
  }
  return declaration
}
