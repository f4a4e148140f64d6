import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { anthropic, gemini, hostedProvider, openai } from '../../src/index'
import { callOptions, rejection } from './calls'
import { asUpstream } from '../helpers/upstream-error'
import { SERVICE_KEY } from './contract'
import { startReplay, type Replay } from './replay'
import { errorReply, jsonReply, wireJson } from './wire'

// embed() on the wire: OpenAI's POST /v1/embeddings and Gemini's :embedContent / :batchEmbedContents fixtures.

const TEXTS = ['The capital of France is Paris.', 'Rome is the capital of Italy.']
const openaiVectors = wireJson('openai', 'embeddings.json').data.map((d: { embedding: number[] }) => d.embedding)
const geminiVectors = wireJson('gemini', 'batch-embed-contents.json').embeddings.map((e: { values: number[] }) => e.values)

describe('embed(): which providers have it', () => {
  it('OpenAI-compatible hosts and Gemini embed; Anthropic has no embeddings API', () => {
    expect([typeof openai().embed, typeof hostedProvider('mistral').embed, typeof gemini().embed, typeof anthropic().embed]).toEqual([
      'function',
      'function',
      'function',
      'undefined',
    ])
  })
})

describe('embed() on the wire', () => {
  let replay: Replay
  beforeAll(async () => {
    replay = await startReplay()
  })
  afterAll(() => replay.close())
  beforeEach(() => replay.reset())
  const openaiProvider = () => openai({ baseURL: `${replay.origin}/v1`, apiKey: SERVICE_KEY, models: [] })
  const geminiProvider = () => gemini({ baseURL: replay.origin, apiKey: SERVICE_KEY, models: [] })

  it('OpenAI: POST /v1/embeddings with the inputs, dimensions and user → one vector per input, in order, with usage', async () => {
    replay.on('POST /v1/embeddings', jsonReply('openai', 'embeddings.json'))
    const result = await openaiProvider().embed!({ model: 'text-embedding-3-small', input: TEXTS, dimensions: 4, user: 'user-42' }, callOptions())
    expect(result).toEqual({
      data: [
        { index: 0, embedding: openaiVectors[0] },
        { index: 1, embedding: openaiVectors[1] },
      ],
      usage: { prompt_tokens: 9, total_tokens: 9 },
      model: 'text-embedding-3-small',
    })
    const [sent] = replay.requests
    expect(sent.headers.authorization).toBe(`Bearer ${SERVICE_KEY}`)
    expect(sent.body).toMatchObject({ model: 'text-embedding-3-small', input: TEXTS, dimensions: 4, user: 'user-42' })
    expect(sent.body.encoding_format ?? 'float').toBe('float')
  })

  it('OpenAI: vectors answered out of order are put back in input order', async () => {
    const answer = wireJson('openai', 'embeddings.json')
    replay.on('POST /v1/embeddings', { body: { ...answer, data: [...answer.data].reverse() } })
    const result = await openaiProvider().embed!({ model: 'text-embedding-3-small', input: TEXTS }, callOptions())
    expect(result.data.map((d) => d.embedding)).toEqual(openaiVectors)
  })

  it('OpenAI: fewer vectors than inputs → malformed_response', async () => {
    const answer = wireJson('openai', 'embeddings.json')
    replay.on('POST /v1/embeddings', { body: { ...answer, data: answer.data.slice(0, 1) } })
    const error = await rejection(openaiProvider().embed!({ model: 'text-embedding-3-small', input: TEXTS }, callOptions()))
    expect([error.status, error.metadata?.error_type]).toEqual([502, 'malformed_response'])
  })

  it('OpenAI: 429 with Retry-After → rate_limit_exceeded, retried on the same provider after 2 s', async () => {
    replay.on('POST /v1/embeddings', errorReply(429, 'openai', 'error-429.json', { 'retry-after': '2' }))
    const error = await rejection(openaiProvider().embed!({ model: 'text-embedding-3-small', input: TEXTS }, callOptions()))
    expect([error.status, error.metadata?.error_type, asUpstream(error).retryOnSameProvider, asUpstream(error).retryAfterMs]).toEqual([
      429,
      'rate_limit_exceeded',
      true,
      2000,
    ])
  })

  it('Gemini: one text → :embedContent with outputDimensionality → one vector, no usage reported', async () => {
    replay.on('POST /v1beta/models/gemini-embedding-001:embedContent', jsonReply('gemini', 'embed-content.json'))
    const result = await geminiProvider().embed!({ model: 'gemini-embedding-001', input: TEXTS[0], dimensions: 4 }, callOptions())
    expect(result.data).toEqual([{ index: 0, embedding: wireJson('gemini', 'embed-content.json').embedding.values }])
    expect(result.usage ?? undefined).toBeUndefined()
    expect(replay.requests[0].headers['x-goog-api-key']).toBe(SERVICE_KEY)
    expect(replay.requests[0].body).toEqual({ content: { parts: [{ text: TEXTS[0] }] }, outputDimensionality: 4 })
  })

  it('Gemini: several texts → :batchEmbedContents, one request per text naming the model → vectors in order', async () => {
    replay.on('POST /v1beta/models/gemini-embedding-001:batchEmbedContents', jsonReply('gemini', 'batch-embed-contents.json'))
    const result = await geminiProvider().embed!({ model: 'gemini-embedding-001', input: TEXTS }, callOptions())
    expect(result.data).toEqual([
      { index: 0, embedding: geminiVectors[0] },
      { index: 1, embedding: geminiVectors[1] },
    ])
    expect(replay.requests[0].body).toEqual({ requests: TEXTS.map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] } })) })
  })

  it('Gemini: token arrays → 400 naming input, before any call', async () => {
    const error = await rejection(geminiProvider().embed!({ model: 'gemini-embedding-001', input: [[1, 2, 3]] }, callOptions()))
    expect([error.status, error.param]).toEqual([400, 'input'])
    expect(replay.requests).toHaveLength(0)
  })

  it('Gemini: 429 RESOURCE_EXHAUSTED with RetryInfo → rate_limit_exceeded, retry after 37 s', async () => {
    replay.on('POST /v1beta/models/gemini-embedding-001:embedContent', errorReply(429, 'gemini', 'error-429.json'))
    const error = await rejection(geminiProvider().embed!({ model: 'gemini-embedding-001', input: 'x' }, callOptions()))
    expect([error.status, error.metadata?.error_type, asUpstream(error).retryAfterMs]).toEqual([429, 'rate_limit_exceeded', 37_000])
  })
})
