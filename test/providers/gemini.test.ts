import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { gemini } from '../../src/index'
import { callOptions, drain, rejection } from './calls'
import { runProviderContract, textRequest, WEATHER_TOOL } from './contract'
import { startReplay, type Replay } from './replay'
import { errorReply, jsonReply, sseReply } from './wire'

const P = 'gemini'
const MODEL = 'gemini-2.5-flash'
const created = expect.any(Number)
const SIGNATURE = 'CiQB0e2Kb3Xq9Zs1lP4nW7yT0vR8uM2kH6jF5dG3sA1qE9cB'
const callId = expect.stringMatching(/^call_[\w-]{16}$/)
const usage = (prompt: number, completion: number, cached = 0, thoughts = 0) => ({
  prompt_tokens: prompt,
  completion_tokens: completion + thoughts,
  total_tokens: prompt + completion + thoughts,
  prompt_tokens_details: { cached_tokens: cached },
  completion_tokens_details: { reasoning_tokens: thoughts },
})
const chunkOf = (id: string) => (delta: Record<string, unknown>, finish?: string) => ({
  id,
  created,
  model: MODEL,
  choices: [
    {
      index: 0,
      delta,
      finish_reason: finish ? (finish === 'STOP' && delta.tool_calls ? 'tool_calls' : finish) : null,
      ...(finish ? { native_finish_reason: 'STOP' } : {}),
    },
  ],
})
const textChunk = chunkOf('pN7pdC5nGyNw4gmSz0hA1Df')
const toolChunk = chunkOf('qO8qeD6oHzOx5hnT0aiB2Eg')
const toolCall = {
  id: callId,
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
  extra_content: { google: { thought_signature: SIGNATURE } },
}
const signatureDetail = { type: 'reasoning.encrypted', format: 'google-gemini-v1', data: SIGNATURE, id: callId, index: 0 }
const provider = (origin: string) => gemini({ baseURL: origin, apiKey: 'sk-service-test', models: [] })
const question = { role: 'user', parts: [{ text: 'What is the capital of France?' }] }
const generationConfig = { candidateCount: 1, temperature: 0.2, maxOutputTokens: 64, stopSequences: ['\n\n'] }

runProviderContract('gemini()', {
  provider,
  model: MODEL,
  routes: { chat: `POST /v1beta/models/${MODEL}:generateContent`, stream: `POST /v1beta/models/${MODEL}:streamGenerateContent`, check: 'GET /v1beta/models' },
  streamQuery: { alt: 'sse' },
  auth: (key) => ['x-goog-api-key', key],
  chat: {
    text: {
      reply: jsonReply(P, 'generate-text.json'),
      expected: {
        id: 'mK4maZ2kDvKt1dkPw7eX8Ac',
        created,
        model: MODEL,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'The capital of France is Paris.', reasoning: null },
            finish_reason: 'STOP',
            native_finish_reason: 'STOP',
          },
        ],
        usage: usage(14, 8),
      },
    },
    tool: {
      reply: jsonReply(P, 'generate-tool.json'),
      expected: {
        id: 'nL5nbA3lEwLu2ekQx8fY9Bd',
        created,
        model: MODEL,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, reasoning: null, tool_calls: [toolCall], reasoning_details: [signatureDetail] },
            finish_reason: 'tool_calls',
            native_finish_reason: 'STOP',
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
        textChunk({ role: 'assistant', content: 'The capital' }),
        textChunk({ content: ' of France' }),
        textChunk({ content: ' is Paris.' }),
        textChunk({}, 'STOP'),
        { id: 'pN7pdC5nGyNw4gmSz0hA1Df', created, model: MODEL, choices: [], usage: usage(14, 8) },
      ],
    },
    tool: {
      reply: sseReply(P, 'stream-tool.sse'),
      expected: [
        toolChunk({ role: 'assistant', tool_calls: [{ index: 0, ...toolCall }], reasoning_details: [signatureDetail] }),
        { id: 'qO8qeD6oHzOx5hnT0aiB2Eg', created, model: MODEL, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls', native_finish_reason: 'STOP' }] },
        { id: 'qO8qeD6oHzOx5hnT0aiB2Eg', created, model: MODEL, choices: [], usage: usage(58, 17) },
      ],
    },
  },
  sent: {
    // The sampling fields in generationConfig; `user` and OpenRouter's transforms stay behind.
    text: { contents: [question], systemInstruction: { parts: [{ text: 'Answer in one sentence.' }] }, generationConfig },
    stream: { contents: [question], systemInstruction: { parts: [{ text: 'Answer in one sentence.' }] }, generationConfig },
    tool: {
      contents: [{ role: 'user', parts: [{ text: "What's the weather in Paris?" }] }],
      tools: [
        {
          functionDeclarations: [
            { name: 'get_weather', description: 'The current weather in a city.', parametersJsonSchema: WEATHER_TOOL.function.parameters },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      generationConfig: { candidateCount: 1 },
    },
  },
  errors: [
    {
      title: '400 INVALID_ARGUMENT',
      reply: errorReply(400, P, 'error-400.json'),
      status: 400,
      errorType: 'invalid_request',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '400 input token count exceeds the maximum',
      reply: errorReply(400, P, 'error-400-context.json'),
      status: 400,
      errorType: 'context_length_exceeded',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '400 API key not valid',
      reply: errorReply(400, P, 'error-400-key.json'),
      status: 502,
      errorType: 'authentication',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '403 PERMISSION_DENIED',
      reply: errorReply(403, P, 'error-403.json'),
      status: 502,
      errorType: 'authentication',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '429 RESOURCE_EXHAUSTED with RetryInfo 37s',
      reply: errorReply(429, P, 'error-429.json'),
      status: 429,
      errorType: 'rate_limit_exceeded',
      sameProvider: true,
      retryAfterMs: 37_000,
    },
    {
      title: '500 INTERNAL',
      reply: errorReply(500, P, 'error-500.json'),
      status: 502,
      errorType: 'provider_unavailable',
      sameProvider: false,
      retryAfterMs: null,
    },
    {
      title: '503 UNAVAILABLE (overloaded)',
      reply: errorReply(503, P, 'error-503.json'),
      status: 502,
      errorType: 'provider_overloaded',
      sameProvider: true,
      retryAfterMs: null,
    },
    { title: '504 DEADLINE_EXCEEDED', reply: errorReply(504, P, 'error-504.json'), status: 408, errorType: 'timeout', sameProvider: false, retryAfterMs: null },
  ],
  check: { reply: jsonReply(P, 'models.json'), rejected: errorReply(400, P, 'error-400-key.json'), target: 'GET /v1beta/models', message: '2 models listed' },
})

describe('gemini(): Gemini’s own wire', () => {
  let replay: Replay
  beforeAll(async () => {
    replay = await startReplay()
  })
  afterAll(() => replay.close())
  beforeEach(() => replay.reset())

  it('a whole answer with thoughts → reasoning, with cached and thought tokens in usage', async () => {
    replay.on(`POST /v1beta/models/${MODEL}:generateContent`, jsonReply(P, 'generate-thinking.json'))
    const completion = await provider(replay.origin).chat(textRequest(MODEL), callOptions())
    expect(completion.choices[0].message).toEqual({
      role: 'assistant',
      content: 'The capital of France is Paris.',
      reasoning: '**Identifying the capital**\n\nThe user asks for the capital of France, which is Paris.',
    })
    expect(completion.usage).toEqual(usage(1310, 8, 1152, 120))
  })

  it('a streamed answer with thoughts → delta.reasoning, then the text, then usage', async () => {
    replay.on(`POST /v1beta/models/${MODEL}:streamGenerateContent`, sseReply(P, 'stream-thinking.sse'))
    const { chunks, error } = await drain(await provider(replay.origin).chatStream(textRequest(MODEL), callOptions()))
    expect(error).toBeUndefined()
    const chunk = chunkOf('rP9rfE7pI0Py6ioU1bjC3Fh')
    expect(chunks).toEqual([
      chunk({ role: 'assistant', reasoning: '**Identifying the capital**\n\nThe user asks for the capital of France.' }),
      chunk({ content: 'The capital of France is Paris.' }),
      chunk({}, 'STOP'),
      { id: 'rP9rfE7pI0Py6ioU1bjC3Fh', created, model: MODEL, choices: [], usage: usage(1310, 8, 1152, 120) },
    ])
  })

  it('a key Gemini echoes in its error is redacted from metadata.raw', async () => {
    replay.on(`POST /v1beta/models/${MODEL}:generateContent`, {
      status: 400,
      body: { error: { code: 400, message: 'API key sk-customer-byok is not valid', status: 'INVALID_ARGUMENT' } },
    })
    const error = await rejection(provider(replay.origin).chat(textRequest(MODEL), callOptions({ apiKey: 'sk-customer-byok' })))
    expect(error.metadata?.raw).toBe('INVALID_ARGUMENT: API key [redacted] is not valid')
  })

  it('a blocked prompt (promptFeedback) → 400 content_filter', async () => {
    replay.on(`POST /v1beta/models/${MODEL}:generateContent`, {
      body: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, modelVersion: MODEL },
    })
    const error = await rejection(provider(replay.origin).chat(textRequest(MODEL), callOptions()))
    expect([error.status, error.metadata?.error_type, error.metadata?.raw]).toEqual([400, 'content_filter', 'promptFeedback.blockReason: PROHIBITED_CONTENT'])
  })

  it('an error event inside the stream (503) → the chunks before it, then provider_overloaded', async () => {
    const events = sseReply(P, 'stream-text.sse').chunks!
    replay.on(`POST /v1beta/models/${MODEL}:streamGenerateContent`, {
      chunks: [events[0], 'data: {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}\r\n\r\n'],
    })
    const { chunks, error } = await drain(await provider(replay.origin).chatStream(textRequest(MODEL), callOptions()))
    expect(chunks).toHaveLength(1)
    expect([error?.metadata?.error_type, error?.metadata?.raw]).toEqual([
      'provider_overloaded',
      'UNAVAILABLE: The model is overloaded. Please try again later.',
    ])
  })
})
