import { TRANSCRIPTION_CONTENT_TYPES } from '../audio/formats'
import { encodeMultipart, type MultipartField } from '../audio/multipart'
import { requireEventStream, upstreamFetch, type UpstreamResponse } from './http'
import { createSseParser, parseServerSentEvents } from './sse'
import type {
  AudioUsage, CallOptions, Provider, ProviderModel, UpstreamChatRequest, UpstreamChunk, UpstreamCompletion, UpstreamSpeech,
  UpstreamTranscription,
} from './types'
import { fromHttpStatus, parseUpstreamJson, upstreamError } from './upstream-error'
import { errorMessageOf, timedCheck } from './checks'
import { embeddingInputCount, readOpenAIEmbeddings } from './embeddings'
import { effortForBudget, nearestEffort, reasoningOf, requestedEffort } from './reasoning'

/** Configuration of an OpenAI-compatible host (Groq, Together, Mistral, DeepSeek, Fireworks, xAI, Ollama, vLLM, LM Studio, …). */
export interface OpenAICompatibleConfig extends Omit<Provider, 'models' | 'chat' | 'chatStream' | 'discoverModels' | 'check' | 'speech' | 'transcribe' | 'embed'> {
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
  const { baseURL, apiKey, discover, discoveredPricing, headers, dropParameters = [], useMaxCompletionTokens, models = [], ...info } = config
  const root = baseURL.replace(/\/+$/, '')
  const provider = info.name

  const headersFor = (options: CallOptions): Record<string, string> => {
    const key = options.apiKey ?? apiKey
    return { 'content-type': 'application/json', accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers }
  }

  const byUpstreamId = new Map(models.map((m) => [m.upstreamId ?? m.id.slice(m.id.indexOf('/') + 1), m]))

  const toBody = (request: UpstreamChatRequest, stream: boolean): string => {
    const body: Record<string, unknown> = withoutCacheControl({ ...request })
    for (const field of [...GATEWAY_ONLY, ...dropParameters]) delete body[field]
    const effort = reasoningEffortFor(request, byUpstreamId.get(request.model))
    if (effort === undefined) delete body.reasoning_effort
    else body.reasoning_effort = effort
    if (useMaxCompletionTokens && body.max_tokens != null && body.max_completion_tokens == null) {
      body.max_completion_tokens = body.max_tokens
      delete body.max_tokens
    }
    if (stream) {
      body.stream = true
      body.stream_options = { ...(request.stream_options ?? {}), include_usage: true }
    } else {
      delete body.stream
      delete body.stream_options
    }
    return JSON.stringify(body)
  }

  const post = async (request: UpstreamChatRequest, options: CallOptions, stream: boolean): Promise<UpstreamResponse> => {
    const res = await upstreamFetch(`${root}/chat/completions`, {
      method: 'POST', headers: headersFor(options), body: toBody(request, stream), signal: options.signal, timeoutMs: options.timeoutMs, provider,
    })
    if (res.status >= 200 && res.status < 300) return res
    throw fromHttpStatus(provider, res.status, errorMessageOf(await res.text().catch(() => '')), res.headers)
  }

  const result: Provider = {
    serviceKey: apiKey !== undefined || !info.byokSupported,
    ...info,
    models,
    async chat(request, options) {
      const res = await post(request, options, false)
      const text = await res.text()
      const completion = parseUpstreamJson<UpstreamCompletion>(provider, text)
      if (!completion || !Array.isArray(completion.choices) || completion.choices.length === 0 || typeof completion.choices[0]?.message !== 'object') {
        const raw = errorMessageOf(text)
        throw (completion as { error?: unknown })?.error ? upstreamError(provider, 'upstream_error', raw) : upstreamError(provider, 'malformed_response', text.slice(0, 200))
      }
      return completion
    },
    async chatStream(request, options) {
      const res = await post(request, options, true)
      await requireEventStream(res, provider)
      return streamChunks(res, provider)
    },
    // POST {baseURL}/audio/speech (OpenAI's API reference): JSON in, the audio bytes out, piped as they arrive; with
    // stream_format "sse", events whose base64 audio deltas are decoded here and whose last one reports token usage.
    async speech(request, options) {
      const sse = request.stream_format === 'sse'
      const res = await upstreamFetch(`${root}/audio/speech`, {
        method: 'POST',
        headers: { ...headersFor(options), accept: sse ? 'text/event-stream' : 'application/octet-stream' },
        body: JSON.stringify(request),
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        provider,
      })
      if (res.status < 200 || res.status >= 300) throw fromHttpStatus(provider, res.status, errorMessageOf(await res.text().catch(() => '')), res.headers)
      const type = (res.headers['content-type'] ?? '').toLowerCase()
      const id = res.headers['x-request-id']
      if (type.includes('text/event-stream')) return speechFromEvents(res, provider, id)
      if (type.includes('json') || type.startsWith('text/')) {
        const text = await res.text().catch(() => '')
        throw upstreamError(provider, 'malformed_response', `expected audio, got ${type}: ${errorMessageOf(text).slice(0, 200)}`)
      }
      return { audio: res.body, ...(id ? { id } : {}) }
    },
    // POST {baseURL}/audio/transcriptions: a multipart/form-data upload of the audio file and the fields.
    async transcribe(request, options) {
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
      const res = await upstreamFetch(`${root}/audio/transcriptions`, {
        method: 'POST',
        headers: { ...headersFor(options), 'content-type': contentType, 'content-length': String(body.byteLength) },
        body,
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        provider,
      })
      const text = await res.text()
      if (res.status < 200 || res.status >= 300) throw fromHttpStatus(provider, res.status, errorMessageOf(text), res.headers)
      const transcription = parseUpstreamJson<UpstreamTranscription>(provider, text)
      if (!transcription || typeof transcription.text !== 'string') {
        throw (transcription as { error?: unknown })?.error ? upstreamError(provider, 'upstream_error', errorMessageOf(text)) : upstreamError(provider, 'malformed_response', text.slice(0, 200))
      }
      return res.headers['x-request-id'] && transcription.id === undefined ? { ...transcription, id: res.headers['x-request-id'] } : transcription
    },
    // POST {baseURL}/embeddings (OpenAI's API reference): floats always (the gateway encodes base64 itself).
    async embed(request, options) {
      const body = JSON.stringify({
        model: request.model, input: request.input, ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
        ...(request.user !== undefined ? { user: request.user } : {}), encoding_format: 'float',
      })
      const res = await upstreamFetch(`${root}/embeddings`, { method: 'POST', headers: headersFor(options), body, signal: options.signal, timeoutMs: options.timeoutMs, provider })
      const text = await res.text()
      if (res.status < 200 || res.status >= 300) throw fromHttpStatus(provider, res.status, errorMessageOf(text), res.headers)
      const embeddings = readOpenAIEmbeddings(provider, text, embeddingInputCount(request.input))
      return res.headers['x-request-id'] && !embeddings.id ? { ...embeddings, id: res.headers['x-request-id'] } : embeddings
    },
    async check(options) {
      return [await timedCheck('GET /models', async () => {
        const res = await upstreamFetch(`${root}/models`, { method: 'GET', headers: headersFor(options), signal: options.signal, timeoutMs: options.timeoutMs, provider })
        const text = await res.text()
        if (res.status >= 300) throw fromHttpStatus(provider, res.status, errorMessageOf(text))
        return `${(JSON.parse(text) as { data?: unknown[] }).data?.length ?? 0} models listed`
      })]
    },
  }
  if (discover) {
    result.discoverModels = async (options) => {
      const res = await upstreamFetch(`${root}/models`, { method: 'GET', headers: headersFor(options), signal: options.signal, timeoutMs: options.timeoutMs, provider })
      const text = await res.text()
      if (res.status >= 300) throw fromHttpStatus(provider, res.status, errorMessageOf(text))
      const listed = (JSON.parse(text) as { data?: { id?: unknown; created?: unknown }[] }).data ?? []
      return listed
        .filter((m): m is { id: string; created?: number } => typeof m.id === 'string')
        .map((m) => ({
          id: `${info.slug}/${m.id}`,
          upstreamId: m.id,
          name: `${info.name}: ${m.id}`,
          created: typeof m.created === 'number' ? m.created : undefined,
          pricing: discoveredPricing ?? { prompt: '0', completion: '0' },
        }))
    }
  }
  return result
}

// One generator over the body with the SSE parser inside (not a generator of events under a generator of chunks).
async function* streamChunks(res: UpstreamResponse, provider: string): AsyncIterable<UpstreamChunk> {
  const parser = createSseParser()
  let chunks = 0
  let done = false
  const chunkOf = (data: string): UpstreamChunk => {
    let chunk: UpstreamChunk & { error?: unknown }
    try {
      chunk = JSON.parse(data)
    } catch {
      throw upstreamError(provider, 'malformed_response', data.slice(0, 200))
    }
    if (chunk?.error) throw upstreamError(provider, 'upstream_error', errorMessageOf(JSON.stringify(chunk)))
    if (!chunk || !Array.isArray(chunk.choices)) throw upstreamError(provider, 'malformed_response', data.slice(0, 200))
    return chunk
  }
  for await (const bytes of res.body) {
    for (const event of parser.push(bytes)) {
      // After [DONE], read on to the end of the body, so that the connection goes back to the keep-alive pool.
      if (done) continue
      if (event.data === '[DONE]') {
        done = true
        continue
      }
      chunks++
      yield chunkOf(event.data)
    }
  }
  for (const event of parser.end()) {
    if (done || event.data === '[DONE]') break
    chunks++
    yield chunkOf(event.data)
  }
  if (!chunks) throw upstreamError(provider, 'malformed_response', 'the event stream ended without a chunk')
}

// OpenAI's speech events: `speech.audio.delta` with base64 `audio`, then `speech.audio.done` with `usage`.
function speechFromEvents(res: UpstreamResponse, provider: string, id: string | undefined): UpstreamSpeech {
  const speech: UpstreamSpeech = { audio: audioOf(), ...(id ? { id } : {}) }
  async function* audioOf(): AsyncIterable<Uint8Array> {
    for await (const event of parseServerSentEvents(res.body)) {
      if (event.data === '[DONE]') return
      let payload: { type?: string; audio?: unknown; usage?: AudioUsage; token_usage?: AudioUsage; error?: unknown }
      try {
        payload = JSON.parse(event.data)
      } catch {
        throw upstreamError(provider, 'malformed_response', event.data.slice(0, 200))
      }
      if (payload?.error) throw upstreamError(provider, 'upstream_error', errorMessageOf(event.data))
      const type = payload?.type ?? event.event
      if (type === 'speech.audio.delta' && typeof payload.audio === 'string') {
        const bytes = Buffer.from(payload.audio, 'base64')
        yield new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      } else if (type === 'speech.audio.done') {
        const usage = payload.usage ?? payload.token_usage
        if (usage && typeof usage === 'object') speech.usage = usage
      }
    }
  }
  return speech
}
