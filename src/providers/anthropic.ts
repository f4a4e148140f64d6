import { anthropicChunks } from './anthropic-stream'
import {
  anthropicError,
  excludesReasoning,
  fromAnthropicMessage,
  parseAnthropicError,
  toAnthropicRequest,
  traitsOf,
  type AnthropicMessage,
} from './anthropic-translate'
import { anthropicHost } from './hosts/anthropic'
import { createProvider, type ProviderDeclaration } from './runner'
import type { Transport } from './transport'
import type { Provider, ProviderModel, UpstreamChatRequest, UpstreamSource } from '../contracts'
import { upstreamError } from './upstream-error'

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
  /** Send calls through this transport instead of node:http (tests; runtimes without node:http pick ofetch by themselves). */
  transport?: Transport
}

/** Anthropic's Claude models through the Messages API, served to clients in OpenAI's chat format. */
export function anthropic(options: AnthropicOptions = {}): Provider {
  return createProvider(anthropicDeclaration(options), { transport: options.transport })
}

/** The declaration of Anthropic's Messages API (docs/providers.md): `POST /v1/messages` both ways, translated. */
export function anthropicDeclaration(options: AnthropicOptions = {}): ProviderDeclaration {
  // The host's data policy is not the provider's own `dataPolicy`: the catalogue credits it by slug (docs/routing.md).
  const { baseURL, dataPolicy: _policy, models: shipped = [], ...facts } = anthropicHost
  const models = options.models ?? shipped
  const name = facts.name
  const source: UpstreamSource = { slug: facts.slug, name }
  const modelFor = (upstreamId: string) => models.find((m) => (m.upstreamId ?? m.id.slice(m.id.indexOf('/') + 1)) === upstreamId)
  const toBody = (request: UpstreamChatRequest, stream: boolean) => ({
    json: toAnthropicRequest(request, { provider: name, traits: traitsOf(modelFor(request.model), request.model), stream }),
  })

  return {
    ...facts,
    byokSupported: true,
    models,
    root: (options.baseURL ?? baseURL).replace(/\/+$/, ''),
    headers(call) {
      const key = call.apiKey ?? options.apiKey
      const auth: Record<string, string> = !key ? {} : options.authHeader === 'x-api-key' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` }
      return { 'anthropic-version': ANTHROPIC_VERSION, ...auth, ...options.headers }
    },
    error: (status, text, headers) => anthropicError(source, status, parseAnthropicError(text), headers),
    chat: {
      path: '/v1/messages',
      body: (request) => toBody(request, false),
      json(message: AnthropicMessage, { text, request }) {
        if (message?.type !== 'message' || !Array.isArray(message.content)) throw upstreamError(source, 'malformed_response', text.slice(0, 200))
        return fromAnthropicMessage(message, { excludeReasoning: excludesReasoning(request) })
      },
    },
    chatStream: {
      path: '/v1/messages',
      accept: 'text/event-stream',
      body: (request) => toBody(request, true),
      events: (body, { request }) => anthropicChunks(body, source, { excludeReasoning: excludesReasoning(request) }),
    },
    // Anthropic's own Messages API: `/messages` requests are passed on unchanged (docs/native.md); an `error` event fails the stream.
    native: {
      messages: {
        path: '/v1/messages',
        // The client's body is written for its version and betas (context_management, …): they go with it.
        passHeaders: ['anthropic-version', 'anthropic-beta'],
        isAnswer: (answer) => answer.type === 'message' && Array.isArray(answer.content),
        streamError: ({ type, data }) => {
          if (type !== 'error') return undefined
          const error = data.error as { type?: string; message?: string } | undefined
          return anthropicError(source, undefined, { type: error?.type, message: error?.message ?? 'the stream failed' })
        },
      },
    },
    check: { path: '/v1/models', read: (answer: { data?: unknown[] }) => `${answer?.data?.length ?? 0} models listed` },
  }
}
