import { geminiModels } from '../catalogue/gemini-models'
import { requireEventStream, upstreamFetch, type UpstreamResponse } from './http'
import { timedCheck } from './checks'
import { parseServerSentEvents } from './sse'
import { geminiChunks } from './gemini-stream'
import { geminiEmbed } from './gemini-embed'
import { fromGeminiResponse, geminiError, toGeminiRequest, type GeminiResponse } from './gemini-translate'
import type { CallOptions, Provider, ProviderModel } from './types'
import { parseUpstreamJson, upstreamError } from './upstream-error'

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
}

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com'
const API_VERSION = 'v1beta' // parametersJsonSchema, responseJsonSchema and thinkingConfig are v1beta fields

/**
 * Google's Gemini API (`generateContent` / `streamGenerateContent?alt=sse`), served as an OpenAI-format provider:
 * requests and answers are translated both ways (src/providers/gemini-translate.ts), streams chunk by chunk
 * (gemini-stream.ts), errors into the gateway's envelope.
 */
export function gemini(options: GeminiOptions = {}): Provider {
  const root = (options.baseURL ?? GEMINI_BASE_URL).replace(/\/+$/, '').replace(/\/v1(beta)?$/, '')
  const name = options.name ?? 'Google AI Studio'
  const models = options.models ?? geminiModels
  const byUpstreamId = new Map(models.map((m) => [m.upstreamId ?? m.id.slice(m.id.indexOf('/') + 1), m]))

  const headersFor = (callOptions: CallOptions, json: boolean): Record<string, string> => {
    const key = callOptions.apiKey ?? options.apiKey
    return { ...(json ? { 'content-type': 'application/json' } : {}), accept: json ? 'application/json, text/event-stream' : 'application/json', ...(key ? { 'x-goog-api-key': key } : {}), ...options.headers }
  }
  const secretsOf = (callOptions: CallOptions) => [callOptions.apiKey, options.apiKey]
  const modelPath = (model: string) => (model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`).split('/').map(encodeURIComponent).join('/')

  const post = async (model: string, body: string, callOptions: CallOptions, stream: boolean): Promise<UpstreamResponse> => {
    const url = `${root}/${API_VERSION}/${modelPath(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`
    const res = await upstreamFetch(url, { method: 'POST', headers: headersFor(callOptions, true), body, signal: callOptions.signal, timeoutMs: callOptions.timeoutMs, provider: name })
    if (res.status >= 200 && res.status < 300) return res
    throw geminiError(name, res.status, await res.text().catch(() => ''), res.headers, secretsOf(callOptions))
  }

  return {
    slug: options.slug ?? 'google-ai-studio',
    name,
    description: 'Google’s Gemini models through the Gemini API (Google AI Studio).',
    byokSupported: true,
    headquarters: 'US',
    privacyPolicyUrl: 'https://policies.google.com/privacy',
    termsOfServiceUrl: 'https://ai.google.dev/gemini-api/terms',
    statusPageUrl: 'https://aistudio.google.com/status',
    models,
    async chat(request, callOptions) {
      const body = JSON.stringify(toGeminiRequest(request, byUpstreamId.get(request.model)))
      const res = await post(request.model, body, callOptions, false)
      const text = await res.text()
      const answer = parseUpstreamJson<GeminiResponse>(name, text)
      if (answer?.error) throw geminiError(name, answer.error.code ?? 0, text, res.headers, secretsOf(callOptions))
      return fromGeminiResponse(answer, name, Math.floor(Date.now() / 1000))
    },
    async chatStream(request, callOptions) {
      const body = JSON.stringify(toGeminiRequest(request, byUpstreamId.get(request.model)))
      const res = await post(request.model, body, callOptions, true)
      await requireEventStream(res, name)
      return geminiChunks(parseServerSentEvents(res.body), name, secretsOf(callOptions), Math.floor(Date.now() / 1000))
    },
    // models/{model}:embedContent and :batchEmbedContents (src/providers/gemini-embed.ts).
    async embed(request, callOptions) {
      return geminiEmbed(request, callOptions, name, async (method, model, body, call) => {
        const res = await upstreamFetch(`${root}/${API_VERSION}/${modelPath(model)}:${method}`, {
          method: 'POST', headers: headersFor(call, true), body, signal: call.signal, timeoutMs: call.timeoutMs, provider: name,
        })
        const text = await res.text()
        if (res.status < 200 || res.status >= 300) throw geminiError(name, res.status, text, res.headers, secretsOf(call))
        return text
      })
    },
    async check(callOptions) {
      return [await timedCheck(`GET /${API_VERSION}/models`, async () => {
        const res = await upstreamFetch(`${root}/${API_VERSION}/models`, { method: 'GET', headers: headersFor(callOptions, false), signal: callOptions.signal, timeoutMs: callOptions.timeoutMs, provider: name })
        const text = await res.text()
        if (res.status >= 300) throw geminiError(name, res.status, text, res.headers, secretsOf(callOptions))
        return `${(JSON.parse(text) as { models?: unknown[] }).models?.length ?? 0} models listed`
      })]
    },
  }
}
