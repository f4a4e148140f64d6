import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { localProvider, openaiCompatible } from '../../src/index'
import { callOptions, rejection } from './calls'
import { runProviderContract, textRequest, toolRequest, WEATHER_TOOL } from './contract'
import { startReplay, type Replay } from './replay'
import { errorReply, jsonReply, openaiFormatWire } from './wire'

const P = 'ollama'
const MODEL = 'llama3.2:latest'
const { transforms: _transforms, ...text } = textRequest(MODEL)
const local = (origin: string, apiKey?: string) =>
  openaiCompatible({ slug: 'ollama', name: 'Ollama', baseURL: `${origin}/v1`, apiKey, discover: true, region: 'local' })

// A local OpenAI-compatible server (Ollama's /v1): its answers pass through as they came.
runProviderContract('openaiCompatible() local (Ollama)', {
  provider: (origin) => local(origin, 'sk-service-test'),
  model: MODEL,
  ...openaiFormatWire(P),
  sent: {
    text,
    stream: { ...text, stream: true, stream_options: { include_usage: true } },
    tool: { ...toolRequest(MODEL), tools: [WEATHER_TOOL] },
  },
  errors: [
    {
      title: '400 invalid message',
      reply: errorReply(400, P, 'error-400.json'),
      status: 400,
      errorType: 'invalid_request',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '404 model not pulled',
      reply: errorReply(404, P, 'error-404.json'),
      status: 400,
      errorType: 'invalid_request',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '500 runner terminated',
      reply: errorReply(500, P, 'error-500.json'),
      status: 502,
      errorType: 'provider_unavailable',
      sameProvider: false,
      retryAfterMs: null,
    },
  ],
  check: { reply: jsonReply(P, 'models.json'), rejected: errorReply(401, P, 'error-401.json'), target: 'GET /models', message: '2 models listed' },
})

describe('openaiCompatible() local: discovery through GET /models', () => {
  let replay: Replay
  beforeAll(async () => {
    replay = await startReplay()
  })
  afterAll(() => replay.close())

  it('lists the server’s models, free, under the provider’s slug', async () => {
    replay.reset()
    replay.on('GET /v1/models', jsonReply(P, 'models.json'))
    const models = await local(replay.origin).discoverModels!(callOptions())
    expect(models).toEqual([
      {
        id: 'ollama/llama3.2:latest',
        upstreamId: 'llama3.2:latest',
        name: 'Ollama: llama3.2:latest',
        created: 1732000000,
        pricing: { prompt: '0', completion: '0' },
      },
      {
        id: 'ollama/qwen2.5-coder:7b',
        upstreamId: 'qwen2.5-coder:7b',
        name: 'Ollama: qwen2.5-coder:7b',
        created: 1731000000,
        pricing: { prompt: '0', completion: '0' },
      },
    ])
    expect(replay.requests[0].headers.authorization).toBeUndefined()
  })

  it('localProvider() discovers too, under its own slug', async () => {
    replay.reset()
    replay.on('GET /v1/models', jsonReply(P, 'models.json'))
    const provider = localProvider({ slug: 'lab', name: 'Lab', baseURL: `${replay.origin}/v1` })
    expect([provider.slug, provider.region, provider.byokSupported]).toEqual(['lab', 'local', false])
    expect((await provider.discoverModels!(callOptions())).map((m) => m.id)).toEqual(['lab/llama3.2:latest', 'lab/qwen2.5-coder:7b'])
  })

  it('a failing GET /models → the mapped error (500 → provider_unavailable)', async () => {
    replay.reset()
    replay.on('GET /v1/models', errorReply(500, P, 'error-500.json'))
    const error = await rejection(local(replay.origin).discoverModels!(callOptions()))
    expect([error.status, error.metadata?.error_type, error.metadata?.raw]).toEqual([
      502,
      'provider_unavailable',
      'llama runner process has terminated: signal: killed',
    ])
  })

  it('a provider built without discover has no discoverModels', () => {
    expect(openaiCompatible({ slug: 'x', name: 'X', baseURL: 'http://127.0.0.1:9/v1' }).discoverModels).toBeUndefined()
  })
})
