/**
 * The AI SDK provider (src/ai-sdk/, docs/first-party.md#the-ai-sdk-provider) on what the in-process client answers
 * and HTTP never shows: amounts as exact-number objects (src/http/exact-json.ts) rather than JSON numbers, and
 * finish reasons and usage in the shapes of both specifications. A stub client answers fixed objects; the
 * integration tests (test/integration/ai-sdk-provider*.test.ts) run the provider against a gateway.
 */
import { describe, expect, it } from 'vitest'
import { createGatewayProvider, type OpenAIShapedClient } from '../../src/ai-sdk'
import { ExactNumber } from '../../src/http/exact-json'

/** The usage of an in-process answer: exact amounts, as the gateway's answers hold them before JSON. */
const usage = {
  prompt_tokens: 10,
  completion_tokens: 7,
  total_tokens: 17,
  prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 2 },
  completion_tokens_details: { reasoning_tokens: 3 },
  cost: new ExactNumber('0.000000123456789012'),
  cost_currency: 'USD',
  cost_eur: new ExactNumber('0.000000106172838550'),
  is_byok: false,
  cost_details: { upstream_inference_cost: new ExactNumber('0.000000123456789012') },
}

/** A client answering one completion (whole) or these chunks (streamed), keeping the bodies it was given. */
function stubClient(finishReason: string | null, chunks: any[] = []) {
  const bodies: Record<string, unknown>[] = []
  const client: OpenAIShapedClient = {
    chat: {
      completions: {
        async create(body) {
          bodies.push(body)
          if (body.stream) {
            return (async function* () {
              yield* chunks
            })()
          }
          return {
            id: 'gen-1',
            model: 'a/b',
            created: 1_764_147_600,
            provider: 'Up',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, finish_reason: finishReason }],
            usage,
          }
        },
      },
    },
    embeddings: {
      async create() {
        return {
          id: 'gen-2',
          data: [
            { index: 1, embedding: [0.5] },
            { index: 0, embedding: [0.25] },
          ],
          usage: { prompt_tokens: 2, total_tokens: 2, cost: new ExactNumber('0.00000004') },
        }
      },
    },
  }
  return { client, bodies }
}

const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Hi' }] }]

/** Every part of a stream. */
async function partsOf(stream: ReadableStream<any>) {
  const parts: any[] = []
  for await (const part of stream as unknown as AsyncIterable<any>) parts.push(part)
  return parts
}

describe('the AI SDK provider on in-process answers', () => {
  it('v3: exact amounts as numbers in providerMetadata and usage.raw; input and output tokens split', async () => {
    const { client } = stubClient('stop')
    const result = await createGatewayProvider({ client })('a/b').doGenerate({ prompt })
    expect(result.providerMetadata).toEqual({
      modelGateway: { generationId: 'gen-1', provider: 'Up', cost: 0.000000123456789012, costCurrency: 'USD', costEur: 0.00000010617283855, isByok: false },
    })
    expect(result.usage).toEqual({
      inputTokens: { total: 10, noCache: 4, cacheRead: 4, cacheWrite: 2 },
      outputTokens: { total: 7, text: 4, reasoning: 3 },
      raw: { ...usage, cost: 0.000000123456789012, cost_eur: 0.00000010617283855, cost_details: { upstream_inference_cost: 0.000000123456789012 } },
    })
    expect(result.response).toMatchObject({ id: 'gen-1', modelId: 'a/b', timestamp: new Date(1_764_147_600_000) })
    expect(JSON.stringify(result.response?.body)).not.toContain('exact')
  })

  it('v2: the usage of ai 5 and the finish reason as a string', async () => {
    const { client } = stubClient('length')
    const result = await createGatewayProvider({ client, specificationVersion: 'v2' })('a/b').doGenerate({ prompt })
    expect(result.finishReason).toBe('length')
    expect(result.usage).toEqual({ inputTokens: 10, outputTokens: 7, totalTokens: 17, reasoningTokens: 3, cachedInputTokens: 4 })
    expect(result.providerMetadata?.modelGateway?.cost).toBe(0.000000123456789012)
  })

  for (const [raw, v3, v2] of [
    ['stop', 'stop', 'stop'],
    ['length', 'length', 'length'],
    ['tool_calls', 'tool-calls', 'tool-calls'],
    ['content_filter', 'content-filter', 'content-filter'],
    ['error', 'error', 'error'],
    ['end_turn', 'other', 'other'],
    [null, 'other', 'unknown'],
  ] as const) {
    it(`finish_reason ${raw}: v3 { unified: ${v3} }, v2 ${v2}`, async () => {
      const { client } = stubClient(raw)
      expect((await createGatewayProvider({ client })('a/b').doGenerate({ prompt })).finishReason).toEqual({ unified: v3, raw: raw ?? undefined })
      expect((await createGatewayProvider({ client, specificationVersion: 'v2' })('a/b').doGenerate({ prompt })).finishReason).toBe(v2)
    })
  }

  it('a stream: the last chunk’s exact amounts in the finish part; an error chunk as an error part, finished as an error', async () => {
    const { client, bodies } = stubClient(null, [
      { id: 'gen-3', model: 'a/b', created: 1, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] },
      { id: 'gen-3', choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }] },
      { id: 'gen-3', error: { code: 502, message: 'The provider failed' }, choices: [{ index: 0, delta: {}, finish_reason: 'error' }] },
      { id: 'gen-3', choices: [], usage },
    ])
    const { stream } = await createGatewayProvider({ client })('a/b').doStream({ prompt, includeRawChunks: false })
    const parts = await partsOf(stream)
    expect(bodies[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    expect(parts.map((part) => part.type)).toEqual([
      'stream-start',
      'response-metadata',
      'text-start',
      'text-delta',
      'text-delta',
      'error',
      'text-end',
      'finish',
    ])
    expect(parts[5].error).toMatchObject({ name: 'AI_APICallError', statusCode: 502, message: 'The provider failed', isRetryable: true })
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'error', raw: 'error' },
      usage: expect.objectContaining({ inputTokens: { total: 10, noCache: 4, cacheRead: 4, cacheWrite: 2 } }),
      providerMetadata: {
        modelGateway: { generationId: 'gen-3', cost: 0.000000123456789012, costCurrency: 'USD', costEur: 0.00000010617283855, isByok: false },
      },
    })
  })

  it('a stream whose tool call is cut by an error: its input ended, no call to run, finished as an error', async () => {
    const { client } = stubClient(null, [
      {
        id: 'gen-4',
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] } }],
      },
      { id: 'gen-4', error: { code: 502, message: 'cut' }, choices: [{ index: 0, delta: {}, finish_reason: 'error' }] },
    ])
    const parts = await partsOf((await createGatewayProvider({ client })('a/b').doStream({ prompt })).stream)
    expect(parts.map((part) => part.type)).toEqual([
      'stream-start',
      'response-metadata',
      'tool-input-start',
      'tool-input-delta',
      'error',
      'tool-input-end',
      'finish',
    ])
    expect(parts.at(-1).finishReason).toEqual({ unified: 'error', raw: 'error' })
  })

  it('a stream of two tool calls whose arguments arrive in pieces: each call whole at the end, in order', async () => {
    const call = (index: number, fn: Record<string, string>, id?: string) => ({
      id: 'gen-5',
      choices: [{ index: 0, delta: { tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] } }],
    })
    const { client } = stubClient(null, [
      call(0, { name: 'f', arguments: '' }, 'call_a'),
      call(1, { name: 'g', arguments: '{"b"' }, 'call_b'),
      call(0, { arguments: '{"a":1}' }),
      call(1, { arguments: ':2}' }),
      { id: 'gen-5', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ])
    const parts = await partsOf((await createGatewayProvider({ client, specificationVersion: 'v2' })('a/b').doStream({ prompt })).stream)
    expect(parts.filter((part) => part.type.startsWith('tool-'))).toEqual([
      { type: 'tool-input-start', id: 'call_a', toolName: 'f' },
      { type: 'tool-input-start', id: 'call_b', toolName: 'g' },
      { type: 'tool-input-delta', id: 'call_b', delta: '{"b"' },
      { type: 'tool-input-delta', id: 'call_a', delta: '{"a":1}' },
      { type: 'tool-input-delta', id: 'call_b', delta: ':2}' },
      { type: 'tool-input-end', id: 'call_a' },
      { type: 'tool-call', toolCallId: 'call_a', toolName: 'f', input: '{"a":1}' },
      { type: 'tool-input-end', id: 'call_b' },
      { type: 'tool-call', toolCallId: 'call_b', toolName: 'g', input: '{"b":2}' },
    ])
    expect(parts.at(-1).finishReason).toBe('tool-calls')
  })

  it('embeddings: in input order, with the exact cost as a number', async () => {
    const { client } = stubClient(null)
    const result = await createGatewayProvider({ client })
      .embeddingModel('e/f')
      .doEmbed({ values: ['a', 'b'] })
    expect(result.embeddings).toEqual([[0.25], [0.5]])
    expect(result.usage).toEqual({ tokens: 2 })
    expect(result.providerMetadata).toEqual({ modelGateway: { generationId: 'gen-2', cost: 0.00000004 } })
  })
})
