/**
 * Providers' `embed` (docs/capabilities.md) over real HTTP on 127.0.0.1: the OpenAI-compatible provider against the
 * fake OpenAI upstream (`POST /v1/embeddings`), the Gemini provider against the fake Gemini API (`:embedContent`,
 * `:batchEmbedContents`). Each test asserts the vectors (those of `fakeEmbedding`), their order, the usage, what the
 * upstream received, and how failures are classified.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { GatewayError } from '../../src/errors'
import { anthropic } from '../../src/providers/anthropic'
import { gemini } from '../../src/providers/gemini'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { CallOptions } from '../../src/contracts'
import { fakeEmbedding, startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { asUpstream } from '../helpers/upstream-error'

const KEY = 'sk-embed-test'
const GEMINI_KEY = 'AIzaSyFAKE-embed-test-key-0123456789'
const call = (timeoutMs = 5000): CallOptions => ({ signal: AbortSignal.timeout(10_000), timeoutMs })
const failure = async (promise: Promise<unknown>): Promise<GatewayError> => {
  try {
    await promise
  } catch (error) {
    return error as GatewayError
  }
  throw new Error('expected the call to fail')
}

describe('OpenAI-compatible embed', () => {
  let fake: FakeOpenAI
  const provider = () => openaiCompatible({ slug: 'acme', name: 'Acme', baseURL: fake.url, apiKey: KEY })
  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: KEY })
  })
  afterAll(() => fake.close())
  beforeEach(() => {
    fake.requests.length = 0
    fake.retryAfter = undefined
  })

  it('posts OpenAI’s body to /embeddings and answers one float vector per input, in order, with the usage', async () => {
    const result = await provider().embed!({ model: 'text-embedding-3-small', input: ['first text', 'the second one'], dimensions: 16, user: 'user-7' }, call())
    expect(fake.requests).toHaveLength(1)
    const [sent] = fake.requests
    expect(sent.method).toBe('POST')
    expect(sent.path).toBe('/v1/embeddings')
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(sent.body).toEqual({
      model: 'text-embedding-3-small',
      input: ['first text', 'the second one'],
      dimensions: 16,
      user: 'user-7',
      encoding_format: 'float',
    })
    expect(result.data).toEqual([
      { index: 0, embedding: fakeEmbedding('first text', 16) },
      { index: 1, embedding: fakeEmbedding('the second one', 16) },
    ])
    expect(result.usage).toEqual({ prompt_tokens: 3 + 4, total_tokens: 7 })
    expect(result.model).toBe('text-embedding-3-small')
    expect(result.id).toBe('req_fake_1')
  })

  it('embeds one string and token arrays, leaving out fields that were not asked', async () => {
    const one = await provider().embed!({ model: 'text-embedding-3-small', input: 'hello' }, call())
    expect(fake.requests[0].body).toEqual({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'float' })
    expect(one.data).toEqual([{ index: 0, embedding: fakeEmbedding('hello', 1536) }])
    const tokens = await provider().embed!(
      {
        model: 'text-embedding-3-small',
        input: [
          [1, 2, 3],
          [4, 5],
        ],
        dimensions: 4,
      },
      call(),
    )
    expect(tokens.data.map((d) => d.embedding)).toEqual([fakeEmbedding('1 2 3', 4), fakeEmbedding('4 5', 4)])
    expect(tokens.usage?.prompt_tokens).toBe(5)
    const single = await provider().embed!({ model: 'text-embedding-3-small', input: [7, 8, 9], dimensions: 4 }, call())
    expect(single.data).toEqual([{ index: 0, embedding: fakeEmbedding('7 8 9', 4) }])
  })

  it('sorts an answer whose data come out of order by index', async () => {
    fake.modes['embed-shuffled'] = 'shuffled'
    const result = await provider().embed!({ model: 'embed-shuffled', input: ['a', 'b', 'c'] }, call())
    expect(result.data.map((d) => d.index)).toEqual([0, 1, 2])
    expect(result.data.map((d) => d.embedding)).toEqual(['a', 'b', 'c'].map((t) => fakeEmbedding(t, 8)))
  })

  it('leaves usage out when the host reports none (the gateway estimates it)', async () => {
    const result = await provider().embed!({ model: 'no-usage', input: 'x' }, call())
    expect(result.usage).toBeUndefined()
    expect(result.data[0].embedding).toEqual(fakeEmbedding('x', 8))
  })

  it.each([
    ['fail-malformed', /expected 2 embeddings, got none/],
    ['fail-short', /expected 2 embeddings, got 1/],
    ['fail-null', /embedding 0 is not a vector of numbers/],
    ['fail-badjson', /"object": "list"/],
  ])('answers malformed_response (502, retryable) to %s', async (model, raw) => {
    const error = await failure(provider().embed!({ model, input: ['one', 'two'] }, call()))
    expect(error.status).toBe(502)
    expect(error.metadata).toMatchObject({ provider_name: 'Acme', error_type: 'malformed_response' })
    expect(error.metadata?.raw).toMatch(raw)
    expect(asUpstream(error).retryable).toBe(true)
  })

  it('classifies HTTP errors as chat does: 429 with Retry-After, 503 overloaded, 500, 401, 400, a reset connection', async () => {
    const rate = await failure(provider().embed!({ model: 'fail-429', input: 'x' }, call()))
    expect(rate.status).toBe(429)
    expect(rate.metadata?.error_type).toBe('rate_limit_exceeded')
    expect(asUpstream(rate).retryAfterMs).toBe(2000)
    expect(asUpstream(rate).retryOnSameProvider).toBe(true)

    fake.retryAfter = '7'
    const busy = await failure(provider().embed!({ model: 'fail-503', input: 'x' }, call()))
    expect(busy.metadata?.error_type).toBe('provider_overloaded')
    expect(asUpstream(busy).retryAfterMs).toBe(7000)

    const down = await failure(provider().embed!({ model: 'fail-500', input: 'x' }, call()))
    expect([down.status, down.metadata?.error_type]).toEqual([502, 'provider_unavailable'])
    expect(asUpstream(down).retryable).toBe(true)

    const key = await failure(
      openaiCompatible({ slug: 'acme', name: 'Acme', baseURL: fake.url, apiKey: 'sk-wrong' }).embed!({ model: 'text-embedding-3-small', input: 'x' }, call()),
    )
    expect([key.status, key.metadata?.error_type]).toEqual([502, 'authentication'])
    expect(asUpstream(key).retryable).toBe(false)

    const bad = await failure(provider().embed!({ model: 'text-embedding-ada-002', input: 'x', dimensions: 8 }, call()))
    expect(bad.status).toBe(400)
    expect(bad.metadata?.error_type).toBe('invalid_request')
    expect(bad.message).toBe('Acme rejected the request: This model does not support specifying dimensions.')

    const reset = await failure(provider().embed!({ model: 'fail-reset', input: 'x' }, call()))
    expect(reset.metadata?.error_type).toBe('provider_unavailable')
    expect(asUpstream(reset).retryOnSameProvider).toBe(true)
  })

  it('times out an upstream that never answers (408) and uses a customer’s own key when given one', async () => {
    const error = await failure(provider().embed!({ model: 'hang', input: 'x' }, call(150)))
    expect([error.status, error.metadata?.error_type]).toEqual([408, 'timeout'])
    fake.keyModes['sk-customer'] = 'no-usage'
    const byok = await provider().embed!({ model: 'text-embedding-3-small', input: 'x' }, { ...call(), apiKey: 'sk-customer' })
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-customer')
    expect(byok.usage).toBeUndefined()
  })
})

describe('Gemini embed', () => {
  let fake: FakeGemini
  const provider = () => gemini({ apiKey: GEMINI_KEY, baseURL: fake.url })
  beforeAll(async () => {
    fake = await startFakeGemini({ apiKey: GEMINI_KEY })
  })
  afterAll(() => fake.close())
  beforeEach(() => {
    fake.requests.length = 0
  })

  it('embeds one text with :embedContent', async () => {
    const result = await provider().embed!({ model: 'gemini-embedding-001', input: 'hello gemini', dimensions: 32 }, call())
    expect(fake.requests).toHaveLength(1)
    const [sent] = fake.requests
    expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:embedContent')
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY)
    expect(sent.body).toEqual({ content: { parts: [{ text: 'hello gemini' }] }, outputDimensionality: 32 })
    expect(result.data).toEqual([{ index: 0, embedding: fakeEmbedding('hello gemini', 32) }])
    expect(result.usage).toBeUndefined()
  })

  it('embeds several texts with :batchEmbedContents, and maps usageMetadata when Gemini reports it', async () => {
    const result = await provider().embed!({ model: 'gemini-embedding-2', input: ['one', 'two', 'three'] }, call())
    const [sent] = fake.requests
    expect(sent.path).toBe('/v1beta/models/gemini-embedding-2:batchEmbedContents')
    expect(sent.body).toEqual({ requests: ['one', 'two', 'three'].map((text) => ({ model: 'models/gemini-embedding-2', content: { parts: [{ text }] } })) })
    expect(result.data).toEqual(['one', 'two', 'three'].map((text, index) => ({ index, embedding: fakeEmbedding(text, 3072) })))
    expect(result.usage).toEqual({ prompt_tokens: 1 + 1 + 2, total_tokens: 4 }) // a token per 4 characters
  })

  it('splits 250 texts into batches of 100, 100 and 50 and merges them in input order', async () => {
    const texts = Array.from({ length: 250 }, (_, i) => `text number ${i}`)
    const result = await provider().embed!({ model: 'gemini-embedding-2', input: texts, dimensions: 4 }, call())
    expect(fake.requests.map((r) => r.body.requests.length).sort((a, b) => b - a)).toEqual([100, 100, 50])
    expect(fake.requests.every((r) => r.body.requests.every((q: any) => q.outputDimensionality === 4))).toBe(true)
    expect(result.data).toHaveLength(250)
    expect(result.data.map((d) => d.index)).toEqual(texts.map((_, i) => i))
    expect(result.data.map((d) => d.embedding)).toEqual(texts.map((text) => fakeEmbedding(text, 4)))
    expect(result.usage?.prompt_tokens).toBe(texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0))
  })

  it('fails the whole request when one batch fails, with that batch’s error', async () => {
    fake.script['gemini-embedding-001'] = ['gemini-embedding-001', 'fail-503']
    const texts = Array.from({ length: 150 }, (_, i) => `t${i}`)
    const error = await failure(provider().embed!({ model: 'gemini-embedding-001', input: texts, dimensions: 4 }, call()))
    expect(error.metadata).toMatchObject({ provider_name: 'Google AI Studio', error_type: 'provider_overloaded' })
    expect(asUpstream(error).retryOnSameProvider).toBe(true)
  })

  it('refuses token arrays with a 400 naming input, before any call', async () => {
    const error = await failure(provider().embed!({ model: 'gemini-embedding-001', input: [[1, 2], [3]] }, call()))
    expect(error.status).toBe(400)
    expect(error.param).toBe('input')
    expect(error.message).toMatch(/token arrays/)
    const lone = await failure(provider().embed!({ model: 'gemini-embedding-001', input: [1, 2, 3] }, call()))
    expect(lone.param).toBe('input')
    expect(fake.requests).toHaveLength(0)
  })

  it('classifies Gemini’s errors: 429 with RetryInfo, 400, 403 (the key redacted), malformed answers, a model that does not embed', async () => {
    const rate = await failure(provider().embed!({ model: 'fail-429', input: 'x' }, call()))
    expect([rate.status, rate.metadata?.error_type]).toEqual([429, 'rate_limit_exceeded'])
    expect(asUpstream(rate).retryAfterMs).toBe(17_000)

    const bad = await failure(provider().embed!({ model: 'fail-400', input: 'x' }, call()))
    expect([bad.status, bad.metadata?.error_type]).toEqual([400, 'invalid_request'])

    const suspended = await failure(provider().embed!({ model: 'fail-403', input: 'x' }, call()))
    expect(suspended.metadata?.error_type).toBe('authentication')
    expect(suspended.metadata?.raw).toContain('[redacted]')
    expect(suspended.metadata?.raw).not.toContain(GEMINI_KEY)

    const malformed = await failure(provider().embed!({ model: 'fail-malformed', input: ['a', 'b'] }, call()))
    expect(malformed.metadata?.error_type).toBe('malformed_response')
    const short = await failure(provider().embed!({ model: 'fail-short', input: ['a', 'b'] }, call()))
    expect(short.metadata?.raw).toMatch(/expected 2 embeddings, got 1/)

    const chatModel = await failure(provider().embed!({ model: 'gemini-2.5-flash', input: 'x' }, call()))
    expect(chatModel.status).toBe(400)
    expect(chatModel.metadata?.raw).toMatch(/not supported for embedContent/)
  })
})

describe('Anthropic', () => {
  it('has no embeddings API, so no embed', () => {
    expect(anthropic({ apiKey: 'sk-ant' }).embed).toBeUndefined()
  })
})
