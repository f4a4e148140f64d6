import { openai } from '../../src/index'
import { runProviderContract, textRequest, toolRequest, WEATHER_TOOL } from './contract'
import { errorReply, jsonReply, openaiFormatWire } from './wire'

const P = 'openai'
const MODEL = 'gpt-4o-mini'
const { model: _model, transforms: _transforms, max_tokens: _max, ...text } = textRequest(MODEL)

// OpenAI's answers are OpenAI's format already: the provider passes them on as they came.
runProviderContract('openai()', {
  provider: (origin) => openai({ baseURL: `${origin}/v1`, apiKey: 'sk-service-test', models: [] }),
  model: MODEL,
  ...openaiFormatWire(P),
  sent: {
    // max_tokens goes as max_completion_tokens; OpenRouter's `transforms` stays behind.
    text: { model: MODEL, ...text, max_completion_tokens: 64 },
    stream: { model: MODEL, ...text, max_completion_tokens: 64, stream: true, stream_options: { include_usage: true } },
    tool: { ...toolRequest(MODEL), tools: [WEATHER_TOOL] },
  },
  errors: [
    {
      title: '400 invalid_request_error',
      reply: errorReply(400, P, 'error-400.json'),
      status: 400,
      errorType: 'invalid_request',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '400 context_length_exceeded',
      reply: errorReply(400, P, 'error-400-context.json'),
      status: 400,
      errorType: 'context_length_exceeded',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '401 invalid_api_key',
      reply: errorReply(401, P, 'error-401.json'),
      status: 502,
      errorType: 'authentication',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '403 model_not_found',
      reply: errorReply(403, P, 'error-403.json'),
      status: 502,
      errorType: 'authentication',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '429 with Retry-After: 2',
      reply: errorReply(429, P, 'error-429.json', { 'retry-after': '2', 'x-ratelimit-remaining-requests': '0' }),
      status: 429,
      errorType: 'rate_limit_exceeded',
      sameProvider: true,
      retryAfterMs: 2000,
    },
    {
      title: '429 with retry-after-ms: 120',
      reply: errorReply(429, P, 'error-429.json', { 'retry-after-ms': '120' }),
      status: 429,
      errorType: 'rate_limit_exceeded',
      sameProvider: true,
      retryAfterMs: 120,
    },
    {
      title: '500 server_error',
      reply: errorReply(500, P, 'error-500.json'),
      status: 502,
      errorType: 'provider_unavailable',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '503 overloaded with Retry-After: 1',
      reply: errorReply(503, P, 'error-503.json', { 'retry-after': '1' }),
      status: 502,
      errorType: 'provider_overloaded',
      sameProvider: true,
      retryAfterMs: 1000,
    },
  ],
  check: { reply: jsonReply(P, 'models.json'), rejected: errorReply(401, P, 'error-401.json'), target: 'GET /models', message: '2 models listed' },
})
