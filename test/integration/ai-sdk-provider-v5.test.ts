/**
 * The gateway's own AI SDK provider, `model-gateway/ai-sdk` (docs/first-party.md#the-ai-sdk-provider), made with
 * `specificationVersion: 'v2'` and driven by the real `ai` 5 package (LanguageModelV2, EmbeddingModelV2), installed
 * beside `ai` 6 as the dev dependency alias `"ai-v5": "npm:ai@^5.0.0"`: generateText, streamText with a tool over two
 * steps, generateObject and streamed structured output with a JSON schema, reasoning streamed, embed and embedMany, a
 * refused call as an APICallError, an aborted stream. Costs reported are those billed (GET /generation).
 */
import { APICallError } from '@ai-sdk/provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGatewayProvider } from '../../src/ai-sdk'
import { fakeEmbedding } from '../fakes/openai'
import {
  type AiSdkFixture,
  EMBED_PRICE,
  embedTokens,
  fakePromptTokens,
  PRICING,
  startAiSdkFixture,
  sum,
  WEATHER_SCHEMA,
  words,
} from '../helpers/ai-sdk-fixture'
import { httpClient } from '../helpers/http-client'
import { tokenCost } from '../helpers/sse'

/** `ai` 5, under its alias (a name in a variable, so that the type check does not need it installed). */
const AI_V5 = 'ai-v5'
let ai: any
let f: AiSdkFixture

beforeAll(async () => {
  ai = await import(/* @vite-ignore */ AI_V5)
  f = await startAiSdkFixture()
})
afterAll(() => f?.close())

const weather = () =>
  ai.tool({
    description: 'The current weather in a city',
    inputSchema: ai.jsonSchema(WEATHER_SCHEMA),
    execute: async ({ city }: { city: string }) => `Sunny in ${city}`,
  })
const customer = (credits: string | null = '5') => f.customer(credits, 'v2')

describe('model-gateway/ai-sdk with ai 5 (LanguageModelV2, EmbeddingModelV2)', () => {
  it('makes v2 models, which ai 5 takes where it refuses the default v3 ones', async () => {
    const v3 = createGatewayProvider({ client: httpClient(f.t.url, 'unused') })
    await expect(ai.generateText({ model: v3('fake/gpt-test'), prompt: 'Hi', maxRetries: 0 })).rejects.toMatchObject({
      name: 'AI_UnsupportedModelVersionError',
      version: 'v3',
    })
    const provider = createGatewayProvider({ client: httpClient(f.t.url, 'unused'), specificationVersion: 'v2' })
    expect(provider('fake/gpt-test')).toMatchObject({ specificationVersion: 'v2', provider: 'model-gateway.chat', modelId: 'fake/gpt-test' })
    expect(provider.textEmbeddingModel('e/f')).toMatchObject({ specificationVersion: 'v2', provider: 'model-gateway.embedding', maxEmbeddingsPerCall: 2048 })
    expect(provider.embeddingModel('e/f').specificationVersion).toBe('v2')
  })

  it('generateText: the answer, v2 usage, and the billed cost in providerMetadata', async () => {
    const { gateway, spent, generation } = await customer()
    const sent = f.upstream.requests.length
    const text = 'How are you?'
    const result = await ai.generateText({ model: gateway('fake/gpt-test'), prompt: text, maxOutputTokens: 50, temperature: 0.3, maxRetries: 0 })

    const [upstream] = f.chatsSince(sent)
    expect(upstream.body).toMatchObject({ model: 'gpt-test', messages: [{ role: 'user', content: text }], max_tokens: 50, temperature: 0.3 })
    const answer = `Hello from gpt-test: ${text}`
    expect(result.text).toBe(answer)
    expect(result.finishReason).toBe('stop')
    const promptTokens = fakePromptTokens(upstream.body)
    expect(result.usage).toEqual({
      inputTokens: promptTokens,
      outputTokens: words(answer),
      totalTokens: promptTokens + words(answer),
      reasoningTokens: 0,
      cachedInputTokens: 0,
    })
    const billed = await generation(result.response.id)
    const cost = tokenCost(PRICING, promptTokens, words(answer))
    expect(billed.total_cost).toBe(Number(cost.usd))
    expect(result.providerMetadata?.modelGateway).toEqual({
      generationId: result.response.id,
      provider: 'Fake',
      cost: billed.total_cost,
      costCurrency: 'USD',
      costEur: billed.cost_eur,
      isByok: false,
    })
    expect(await spent()).toBe(cost.eur)
  })

  it('streamText with a tool: streamed, executed, sent back, both steps billed', async () => {
    const { gateway, spent, generation } = await customer()
    const sent = f.upstream.requests.length
    const result = ai.streamText({
      model: gateway('fake/gpt-test'),
      prompt: 'Lisbon',
      maxRetries: 0,
      stopWhen: ai.stepCountIs(3),
      tools: { get_weather: weather() },
    })
    let toolInput = ''
    let text = ''
    for await (const part of result.fullStream) {
      if (part.type === 'tool-input-delta') toolInput += part.delta
      if (part.type === 'text-delta') text += part.text
      if (part.type === 'error') throw part.error
    }
    expect(toolInput).toBe('{"city":"Lisbon"}')
    expect(text).toBe('The tool said: Sunny in Lisbon')
    const steps = await result.steps
    expect(steps.map((step: any) => step.finishReason)).toEqual(['tool-calls', 'stop'])
    const [first, second] = f.chatsSince(sent)
    const callId = steps[0].toolCalls[0].toolCallId
    expect(second.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } }] },
      { role: 'tool', tool_call_id: callId, content: 'Sunny in Lisbon' },
    ])
    const paid: string[] = []
    for (const [i, step] of steps.entries()) {
      const billed = await generation(step.response.id)
      const body = [first, second][i].body
      const completion = i === 0 ? Math.ceil('{"city":"Lisbon"}'.length / 4) : words(text)
      const cost = tokenCost(PRICING, fakePromptTokens(body), completion)
      expect(billed).toMatchObject({ streamed: true, tokens_completion: completion, total_cost: Number(cost.usd) })
      expect(step.providerMetadata?.modelGateway).toMatchObject({ cost: billed.total_cost, costEur: billed.cost_eur })
      paid.push(cost.eur)
    }
    expect(await spent()).toBe(sum(paid))
  })

  it('structured output: generateObject and streamText’s experimental_output send a json_schema', async () => {
    const { gateway } = await customer()
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    }
    const sent = f.upstream.requests.length
    const { object } = await ai.generateObject({ model: gateway('fake/gpt-test'), prompt: 'Ada', maxRetries: 0, schema: ai.jsonSchema(schema) })
    expect(object).toEqual({ name: 'Ada', age: 42 })
    const streamed = ai.streamText({
      model: gateway('fake/gpt-test'),
      prompt: 'Grace',
      maxRetries: 0,
      experimental_output: ai.Output.object({ schema: ai.jsonSchema(schema) }),
    })
    let last: unknown
    for await (const partial of streamed.experimental_partialOutputStream) last = partial
    expect(last).toEqual({ name: 'Grace', age: 42 })
    const [whole, stream] = f.chatsSince(sent)
    expect(whole.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema, strict: true } })
    expect(stream.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema, strict: true } })
  })

  it('reasoning: streamText on Claude streams the thinking, then the answer, with the reasoning tokens', async () => {
    const { gateway } = await customer()
    const question = 'Why is grass green?'
    const result = ai.streamText({
      model: gateway('anthropic/claude-sonnet-5.5'),
      prompt: question,
      maxRetries: 0,
      providerOptions: { modelGateway: { reasoning: { effort: 'low' } } },
    })
    let reasoning = ''
    let text = ''
    for await (const part of result.fullStream) {
      if (part.type === 'reasoning-delta') reasoning += part.text
      if (part.type === 'text-delta') text += part.text
    }
    const thinking = `The user asked about ${question}; I should answer plainly.`
    expect(reasoning).toBe(thinking)
    expect(text).toBe(`Hello from claude-sonnet-5-5: ${question}`)
    expect((await result.usage).reasoningTokens).toBe(words(thinking))
  })

  it('embed and embedMany: the vectors, the tokens and the billed cost', async () => {
    const { gateway, spent, generation } = await customer()
    const model = gateway.textEmbeddingModel('openai/text-embedding-3-small')
    const one = await ai.embed({ model, value: 'The quick brown fox', maxRetries: 0 })
    expect(one.embedding).toEqual(fakeEmbedding('The quick brown fox', 1536))
    expect(one.usage).toEqual({ tokens: embedTokens(['The quick brown fox']) })
    const values = ['jumps over', 'the lazy dog']
    const many = await ai.embedMany({ model, values, maxRetries: 0 })
    expect(many.embeddings).toEqual(values.map((value) => fakeEmbedding(value, 1536)))
    const billed = await generation(many.providerMetadata?.modelGateway?.generationId)
    expect(many.providerMetadata?.modelGateway?.cost).toBe(billed.total_cost)
    const eur = [embedTokens(['The quick brown fox']), embedTokens(values)].map((n) => tokenCost({ prompt: EMBED_PRICE, completion: '0' }, n, 0).eur)
    expect(await spent()).toBe(sum(eur))
  })

  it('a refused call is an APICallError with its status (402)', async () => {
    const { gateway } = await customer(null)
    const error = await ai.generateText({ model: gateway('fake/gpt-test'), prompt: 'Hi', maxRetries: 0 }).catch((e: unknown) => e)
    expect(APICallError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ statusCode: 402, isRetryable: false, data: { type: 'insufficient_credits' } })
  })

  it('aborting streamText stops the upstream and bills what was generated', async () => {
    const { gateway, user, spent } = await customer()
    const aborted = f.upstream.aborted
    const controller = new AbortController()
    const result = ai.streamText({ model: gateway('fake/slow'), prompt: 'one two three four five six', maxRetries: 0, abortSignal: controller.signal })
    let text = ''
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        text += part.text
        if (words(text) === 2) controller.abort()
      }
    }
    expect(text).toBe('Hello from')
    await expect.poll(() => f.upstream.aborted, { timeout: 3000 }).toBe(aborted + 1)
    const cancelled = async () => (await f.t.gateway.admin.usage(user.org_id)).find((r) => r.status === 'cancelled')
    await expect.poll(async () => (await cancelled())?.status, { timeout: 3000 }).toBe('cancelled')
    expect(await spent()).toBe((await cancelled())!.cost_eur)
  })
})
