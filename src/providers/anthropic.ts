import { anthropicModels } from '../catalogue/anthropic-models'
import { requireEventStream, upstreamFetch, type UpstreamResponse } from './http'
import { timedCheck } from './checks'
import { anthropicChunks } from './anthropic-stream'
import { anthropicError, excludesReasoning, fromAnthropicMessage, parseAnthropicError, toAnthropicRequest, traitsOf, type AnthropicMessage } from './anthropic-translate'
import type { CallOptions, Provider, ProviderModel, UpstreamChatRequest } from './types'
import { parseUpstreamJson, upstreamError } from './upstream-error'

/**
 * The Messages API version sent as `anthropic-version`: the one `@anthropic-ai/sdk` 1.x sends (2026-10-21, the first
 * new version since 2023-06-01). See anthropic-translate.ts for what it accepts and rejects.
 */
export const ANTHROPIC_VERSION = '2026-10-21'

/** Options of the Anthropic provider. */
export interface AnthropicOptions {
  /** The service's Anthropic API key. */
  apiKey?: string
  /** API root without `/v1` (a proxy, a test server). Default `https://api.anthropic.com`. */
  baseURL?: string
  /** Replace the default models (`anthropicModels`: the current Claude models with their list prices). */
  models?: ProviderModel[]
  /** Extra headers on every call (`anthropic-beta`, …). */
  headers?: Record<string, string>
  /**
   * How the key is sent: `authorization` (`Authorization: Bearer <key>`, what the official SDK 1.x sends; the default)
   * or `x-api-key` (the API's original header, which it still takes, and which some proxies still expect).
   */
  authHeader?: 'authorization' | 'x-api-key'
}

/** Anthropic's Claude models through the Messages API, served to clients in OpenAI's chat format. */
export function anthropic(options: AnthropicOptions = {}): Provider {
  const root = (options.baseURL ?? 'https://api.anthropic.com').replace(/\/+$/, '')
  const models = options.models ?? anthropicModels
  const name = 'Anthropic'

  const headersFor = (call: CallOptions, accept: string): Record<string, string> => {
    const key = call.apiKey ?? options.apiKey
    const auth: Record<string, string> = !key ? {} : options.authHeader === 'x-api-key' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` }
    return { 'content-type': 'application/json', accept, 'anthropic-version': ANTHROPIC_VERSION, ...auth, ...options.headers }
  }
  const modelFor = (upstreamId: string) => models.find((m) => (m.upstreamId ?? m.id.slice(m.id.indexOf('/') + 1)) === upstreamId)

  const post = async (request: UpstreamChatRequest, call: CallOptions, stream: boolean): Promise<UpstreamResponse> => {
    const body = toAnthropicRequest(request, { provider: name, traits: traitsOf(modelFor(request.model), request.model), stream })
    const res = await upstreamFetch(`${root}/v1/messages`, {
      method: 'POST', headers: headersFor(call, stream ? 'text/event-stream' : 'application/json'), body: JSON.stringify(body),
      signal: call.signal, timeoutMs: call.timeoutMs, provider: name,
    })
    if (res.status >= 200 && res.status < 300) return res
    throw anthropicError(name, res.status, parseAnthropicError(await res.text().catch(() => '')), res.headers)
  }

  return {
    slug: 'anthropic',
    name,
    description: 'Anthropic’s Claude models, through the Messages API.',
    byokSupported: true,
    headquarters: 'US',
    privacyPolicyUrl: 'https://www.anthropic.com/legal/privacy',
    termsOfServiceUrl: 'https://www.anthropic.com/legal/commercial-terms',
    statusPageUrl: 'https://status.claude.com/',
    models,
    async chat(request, call) {
      const res = await post(request, call, false)
      const text = await res.text()
      const message = parseUpstreamJson<AnthropicMessage>(name, text)
      if (message?.type !== 'message' || !Array.isArray(message.content)) throw upstreamError(name, 'malformed_response', text.slice(0, 200))
      return fromAnthropicMessage(message, { excludeReasoning: excludesReasoning(request) })
    },
    async chatStream(request, call) {
      const res = await post(request, call, true)
      await requireEventStream(res, name)
      return anthropicChunks(res, name, { excludeReasoning: excludesReasoning(request) })
    },
    async check(call) {
      return [await timedCheck('GET /v1/models', async () => {
        const res = await upstreamFetch(`${root}/v1/models`, { method: 'GET', headers: headersFor(call, 'application/json'), signal: call.signal, timeoutMs: call.timeoutMs, provider: name })
        const text = await res.text()
        if (res.status >= 300) throw anthropicError(name, res.status, parseAnthropicError(text), res.headers)
        return `${(JSON.parse(text) as { data?: unknown[] }).data?.length ?? 0} models listed`
      })]
    },
  }
}
