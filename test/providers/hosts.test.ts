import { describe, expect, it } from 'vitest'
import { HOSTS } from '../../src/providers/hosts'
import { hostedProvider } from '../../src/index'
import { runProviderContract, textRequest, toolRequest, WEATHER_TOOL } from './contract'
import { errorReply, jsonReply, openaiFormatWire } from './wire'

// Every hosted OpenAI-compatible host without a request hook of its own speaks OpenAI's chat format exactly, so the
// contract runs for each over OpenAI's recorded fixtures (Mistral, whose hook rewrites fields, has its own file).
const P = 'openai'
const MODEL = 'some-model'
const { transforms: _transforms, ...text } = textRequest(MODEL)

const plain = HOSTS.filter((h) => !h.chatBody)

describe('the hosts the shared contract runs for', () => {
  it('are every hosted provider but Mistral', () => {
    expect(plain.map((h) => h.slug)).toEqual(['groq', 'together', 'fireworks', 'deepseek', 'xai'])
  })
})

for (const host of plain) {
  runProviderContract(`hostedProvider('${host.slug}')`, {
    provider: (origin) => hostedProvider(host.slug, { baseURL: `${origin}/v1`, apiKey: 'sk-service-test', models: [] }),
    model: MODEL,
    ...openaiFormatWire(P),
    sent: {
      text,
      stream: { ...text, stream: true, stream_options: { include_usage: true } },
      tool: { ...toolRequest(MODEL), tools: [WEATHER_TOOL] },
    },
    errors: [
      { title: '400', reply: errorReply(400, P, 'error-400.json'), status: 400, errorType: 'invalid_request', sameProvider: false, retryAfterMs: null },
      { title: '401', reply: errorReply(401, P, 'error-401.json'), status: 502, errorType: 'authentication', sameProvider: false, retryAfterMs: null },
      {
        title: '429 with Retry-After: 2',
        reply: errorReply(429, P, 'error-429.json', { 'retry-after': '2' }),
        status: 429,
        errorType: 'rate_limit_exceeded',
        sameProvider: true,
        retryAfterMs: 2000,
      },
      { title: '500', reply: errorReply(500, P, 'error-500.json'), status: 502, errorType: 'provider_unavailable', sameProvider: false, retryAfterMs: null },
    ],
    check: { reply: jsonReply(P, 'models.json'), rejected: errorReply(401, P, 'error-401.json'), target: 'GET /models', message: '2 models listed' },
  })
}
