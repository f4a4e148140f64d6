import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { anthropic, ANTHROPIC_VERSION } from '../../src/index'
import { callOptions, drain, streamedText } from './calls'
import { asUpstream } from '../helpers/upstream-error'
import { runProviderContract, textRequest, WEATHER_TOOL } from './contract'
import { startReplay, type Replay } from './replay'
import { errorReply, jsonReply, sseReply } from './wire'

const P = 'anthropic'
const MODEL = 'claude-sonnet-4-5-20250929'
const created = expect.any(Number)
const usage = (prompt: number, completion: number, read = 0, written = 0, reasoning = 0) => ({
  prompt_tokens: prompt + read + written,
  completion_tokens: completion,
  total_tokens: prompt + read + written + completion,
  prompt_tokens_details: { cached_tokens: read, cache_write_tokens: written },
  completion_tokens_details: { reasoning_tokens: reasoning },
})
const chunkOf =
  (id: string) =>
  (delta: Record<string, unknown>, finish: string | null = null) => ({ id, created, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })
const textChunk = chunkOf('msg_01Hv8a7B2cD4eF6gH8iJ0kL2')
const toolChunk = chunkOf('msg_014p7gG3wDgGV9EUtLvnow3U')
const provider = (origin: string, options: Parameters<typeof anthropic>[0] = {}) =>
  anthropic({ baseURL: origin, apiKey: 'sk-service-test', models: [], ...options })

runProviderContract('anthropic()', {
  provider: (origin) => provider(origin),
  model: MODEL,
  routes: { chat: 'POST /v1/messages', stream: 'POST /v1/messages', check: 'GET /v1/models' },
  auth: (key) => ['authorization', `Bearer ${key}`],
  chat: {
    text: {
      reply: jsonReply(P, 'message-text.json'),
      expected: {
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        created,
        model: MODEL,
        choices: [
          { index: 0, message: { role: 'assistant', content: 'The capital of France is Paris.', refusal: null, reasoning: null }, finish_reason: 'end_turn' },
        ],
        usage: usage(14, 8),
      },
    },
    tool: {
      reply: jsonReply(P, 'message-tool.json'),
      expected: {
        id: 'msg_01Aq9w938a90dw8q',
        created,
        model: MODEL,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: "I'll check the weather in Paris.",
              refusal: null,
              reasoning: null,
              tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
            },
            finish_reason: 'tool_use',
          },
        ],
        usage: usage(58, 17),
      },
    },
  },
  stream: {
    text: {
      reply: sseReply(P, 'stream-text.sse'),
      expected: [
        textChunk({ role: 'assistant', content: '' }),
        textChunk({ content: 'The capital' }),
        textChunk({ content: ' of France' }),
        textChunk({ content: ' is Paris.' }),
        textChunk({}, 'end_turn'),
        { id: 'msg_01Hv8a7B2cD4eF6gH8iJ0kL2', created, model: MODEL, choices: [], usage: usage(14, 8) },
      ],
    },
    tool: {
      reply: sseReply(P, 'stream-tool.sse'),
      expected: [
        toolChunk({ role: 'assistant', content: '' }),
        toolChunk({ tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        toolChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Pa' } }] }),
        toolChunk({ tool_calls: [{ index: 0, function: { arguments: 'ris"}' } }] }),
        toolChunk({}, 'tool_use'),
        { id: 'msg_014p7gG3wDgGV9EUtLvnow3U', created, model: MODEL, choices: [], usage: usage(58, 17) },
      ],
    },
  },
  sent: {
    // temperature is refused by this API version and OpenRouter's transforms mean nothing here: both stay behind.
    text: {
      model: MODEL,
      max_tokens: 64,
      system: [{ type: 'text', text: 'Answer in one sentence.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
      stop_sequences: ['\n\n'],
      metadata: { user_id: 'user-42' },
    },
    stream: {
      model: MODEL,
      max_tokens: 64,
      system: [{ type: 'text', text: 'Answer in one sentence.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
      stop_sequences: ['\n\n'],
      metadata: { user_id: 'user-42' },
      stream: true,
    },
    tool: {
      model: MODEL,
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: "What's the weather in Paris?" }] }],
      tools: [{ name: 'get_weather', description: 'The current weather in a city.', input_schema: WEATHER_TOOL.function.parameters }],
      tool_choice: { type: 'auto' },
    },
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
      title: '400 prompt is too long',
      reply: errorReply(400, P, 'error-400-context.json'),
      status: 400,
      errorType: 'context_length_exceeded',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '401 authentication_error',
      reply: errorReply(401, P, 'error-401.json'),
      status: 502,
      errorType: 'authentication',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '403 permission_error',
      reply: errorReply(403, P, 'error-403.json'),
      status: 502,
      errorType: 'authentication',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '429 rate_limit_error with retry-after: 30',
      reply: errorReply(429, P, 'error-429.json', { 'retry-after': '30', 'anthropic-ratelimit-input-tokens-remaining': '0' }),
      status: 429,
      errorType: 'rate_limit_exceeded',
      sameProvider: true,
      retryAfterMs: 30_000,
    },
    {
      title: '500 api_error',
      reply: errorReply(500, P, 'error-500.json'),
      status: 502,
      errorType: 'provider_unavailable',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '529 overloaded_error',
      reply: errorReply(529, P, 'error-529.json'),
      status: 502,
      errorType: 'provider_overloaded',
      sameProvider: true,
      retryAfterMs: null,
    },
    {
      title: '529 overloaded_error with retry-after: 4',
      reply: errorReply(529, P, 'error-529.json', { 'retry-after': '4' }),
      status: 502,
      errorType: 'provider_overloaded',
      sameProvider: true,
      retryAfterMs: 4000,
    },
  ],
  check: { reply: jsonReply(P, 'models.json'), rejected: errorReply(401, P, 'error-401.json'), target: 'GET /v1/models', message: '2 models listed' },
})

describe('anthropic(): Anthropic’s own wire', () => {
  let replay: Replay
  beforeAll(async () => {
    replay = await startReplay()
  })
  afterAll(() => replay.close())
  beforeEach(() => replay.reset())

  it('sends anthropic-version and, when asked, the key as x-api-key', async () => {
    replay.on('POST /v1/messages', jsonReply(P, 'message-text.json'))
    await provider(replay.origin, { authHeader: 'x-api-key', headers: { 'anthropic-beta': 'context-1m-2025-08-07' } }).chat(textRequest(MODEL), callOptions())
    const { headers } = replay.requests[0]
    expect([headers['anthropic-version'], headers['x-api-key'], headers.authorization, headers['anthropic-beta'], headers.accept]).toEqual([
      ANTHROPIC_VERSION,
      'sk-service-test',
      undefined,
      'context-1m-2025-08-07',
      'application/json',
    ])
  })

  it('a whole answer with thinking → reasoning, reasoning_details with the signature, cache reads and writes in usage', async () => {
    replay.on('POST /v1/messages', jsonReply(P, 'message-thinking.json'))
    const completion = await provider(replay.origin).chat(textRequest(MODEL), callOptions())
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: 'The capital of France is Paris.',
        refusal: null,
        reasoning: 'The user asks for the capital of France. That is Paris.',
        reasoning_details: [
          {
            type: 'reasoning.text',
            text: 'The user asks for the capital of France. That is Paris.',
            signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
            format: 'anthropic-claude-v1',
            index: 0,
          },
          { type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP', format: 'anthropic-claude-v1', index: 1 },
        ],
      },
      finish_reason: 'end_turn',
    })
    expect(completion.usage).toEqual(usage(30, 210, 1024, 256))
  })

  it('a streamed answer with thinking → reasoning pieces, the signature at the block’s end, then the text', async () => {
    replay.on('POST /v1/messages', sseReply(P, 'stream-thinking.sse'))
    const { chunks, error } = await drain(await provider(replay.origin).chatStream(textRequest(MODEL), callOptions()))
    expect(error).toBeUndefined()
    const chunk = chunkOf('msg_01Sk3nM5pQ7rT9vW1xY3zA5b')
    const detail = (text: string) => ({ type: 'reasoning.text', text, format: 'anthropic-claude-v1', index: 0 })
    expect(chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning: 'The user asks for the capital of France.', reasoning_details: [detail('The user asks for the capital of France.')] }),
      chunk({ reasoning: ' That is Paris.', reasoning_details: [detail(' That is Paris.')] }),
      chunk({ reasoning_details: [{ ...detail(''), signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' }] }),
      chunk({ content: 'The capital of France is Paris.' }),
      chunk({}, 'end_turn'),
      { id: 'msg_01Sk3nM5pQ7rT9vW1xY3zA5b', created, model: MODEL, choices: [], usage: usage(30, 210, 1024, 256) },
    ])
  })

  it('an error event mid-stream (overloaded) → the chunks before it, then provider_overloaded', async () => {
    replay.on('POST /v1/messages', sseReply(P, 'stream-error-event.sse'))
    const { chunks, error } = await drain(await provider(replay.origin).chatStream(textRequest(MODEL), callOptions()))
    expect(streamedText(chunks)).toBe('The capital')
    expect([error?.status, error?.metadata?.error_type, error?.metadata?.raw]).toEqual([502, 'provider_overloaded', 'Overloaded'])
    expect(asUpstream(error).retryOnSameProvider).toBe(true)
  })

  it('a stream that ends before message_stop → provider_unavailable', async () => {
    replay.on('POST /v1/messages', { chunks: sseReply(P, 'stream-text.sse').chunks!.slice(0, -1) })
    const { chunks, error } = await drain(await provider(replay.origin).chatStream(textRequest(MODEL), callOptions()))
    expect(streamedText(chunks)).toBe('The capital of France is Paris.')
    expect([error?.metadata?.error_type, error?.metadata?.raw]).toEqual(['provider_unavailable', 'the event stream ended before message_stop'])
  })
})
