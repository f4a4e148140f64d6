import { describe, expect, it } from 'vitest'
import { hostedProvider } from '../../src/index'
import { callOptions } from './calls'
import { runProviderContract, textRequest, toolRequest, WEATHER_TOOL } from './contract'
import { startReplay } from './replay'
import { errorReply, jsonReply, openaiFormatWire } from './wire'

const P = 'mistral'
const MODEL = 'mistral-small-latest'
const { transforms: _transforms, user: _user, ...shared } = textRequest(MODEL)

// A hosted OpenAI-compatible host: its answers pass through as they came; Mistral puts the usage on the finishing chunk.
runProviderContract("hostedProvider('mistral')", {
  provider: (origin) => hostedProvider('mistral', { baseURL: `${origin}/v1`, apiKey: 'sk-service-test', models: [] }),
  model: MODEL,
  ...openaiFormatWire(P),
  // What every OpenAI-compatible host is sent; Mistral's own fields (random_seed, no user, no stream_options) are in
  // mistral-request.test.ts.
  sent: {
    text: expect.objectContaining(shared),
    stream: expect.objectContaining({ ...shared, stream: true }),
    tool: { ...toolRequest(MODEL), tools: [WEATHER_TOOL] },
  },
  errors: [
    {
      title: '400 invalid_request_message_order',
      reply: errorReply(400, P, 'error-400.json'),
      status: 400,
      errorType: 'invalid_request',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '401 Unauthorized',
      reply: errorReply(401, P, 'error-401.json'),
      status: 502,
      errorType: 'authentication',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '429 rate_limited, no Retry-After',
      reply: errorReply(429, P, 'error-429.json'),
      status: 429,
      errorType: 'rate_limit_exceeded',
      sameProvider: true,
      retryAfterMs: null,
    },
    {
      title: '500 internal_server_error',
      reply: errorReply(500, P, 'error-500.json'),
      status: 502,
      errorType: 'provider_unavailable',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '503 service_tier_capacity_exceeded',
      reply: errorReply(503, P, 'error-503.json'),
      status: 502,
      errorType: 'provider_overloaded',
      sameProvider: true,
      retryAfterMs: null,
    },
  ],
  check: { reply: jsonReply(P, 'models.json'), rejected: errorReply(401, P, 'error-401.json'), target: 'GET /models', message: '3 models listed' },
})

describe("hostedProvider('mistral'): Mistral's own facts", () => {
  it('OpenRouter’s transforms never reach Mistral', async () => {
    const replay = await startReplay()
    replay.on('POST /v1/chat/completions', jsonReply(P, 'chat-text.json'))
    await hostedProvider('mistral', { baseURL: `${replay.origin}/v1`, apiKey: 'k', models: [] }).chat(textRequest(MODEL), callOptions())
    await replay.close()
    expect(Object.keys(replay.requests[0].body)).not.toContain('transforms')
  })

  it('is listed for customers’ own keys and takes one choice per request', () => {
    const provider = hostedProvider('mistral', { baseURL: 'http://127.0.0.1:9/v1', models: [] })
    expect([provider.slug, provider.name, provider.byokSupported, provider.serviceKey, provider.maxChoices]).toEqual([
      'mistral',
      'Mistral',
      true,
      false,
      undefined,
    ])
  })
})
