/**
 * OpenAI's legacy text completions (POST /completions, docs/completions.md) with the clients that call them, over real
 * HTTP on 127.0.0.1: the `openai` SDK's `completions.create` (whole and streamed), the AI SDK's completion models
 * (`@ai-sdk/openai-compatible`'s `completionModel`, `@openrouter/ai-sdk-provider`'s `.completion`), and raw requests
 * for the exact SSE and the 400s. Behind the gateway, the fake OpenAI API (test/fakes/openai.ts) and the fake
 * Anthropic API (test/fakes/anthropic.ts): each test checks what reached the upstream (one user message holding the
 * prompt), what the client parsed, and that the exact cost was charged and recorded.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { createOpenRouter } from '@openrouter/ai-sdk-provider'
import { generateText, streamText } from 'ai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropic } from '../../src/providers/anthropic'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse, tokenCost } from '../helpers/sse'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const ANTHROPIC_KEY = 'sk-ant-api03-completions-0123456789'
const HAIKU = anthropicModels.find((m) => m.id === 'anthropic/claude-haiku-4.5')!

let fake: FakeOpenAI
let claude: FakeAnthropic
let t: TestGateway

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY })
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    retry: { maxRetries: 0 },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: fake.url,
        apiKey: 'sk-upstream',
        models: [
          { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: PRICING, maxCompletionTokens: 1000 },
          { id: 'fake/broken', upstreamId: 'fail-500', pricing: PRICING, maxCompletionTokens: 1000 },
          { id: 'fake/midstream', upstreamId: 'fail-midstream', pricing: PRICING, maxCompletionTokens: 1000 },
        ],
      }),
      anthropic({ apiKey: ANTHROPIC_KEY, baseURL: claude.url, models: [HAIKU] }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
  await claude?.close()
})

/** A new customer (its own org with `credits` EUR) and the openai client on its key. */
async function customerWithClient(credits = '5') {
  const customer = await createCustomer(t.gateway, { credits })
  return { ...customer, client: openaiClient(t.url, customer.key) }
}
const chatsSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')
const spent = async (orgId: string) => (await t.gateway.admin.getCredits(orgId)).total_usage
/** The fake's prompt tokens (a quarter of its messages' JSON) and completion tokens (one per word). */
const fakePromptTokens = (body: any) => Math.ceil(JSON.stringify(body.messages).length / 4)
const words = (text: string) => text.split(/\s+/).filter(Boolean).length
/** The usage record behind /generation. */
const generation = async (id: string, auth: Record<string, string>) =>
  ((await (await t.request(`/api/v1/generation?id=${id}`, { headers: auth })).json()) as any).data
/** A raw POST /completions. */
const post = (body: unknown, auth: Record<string, string>) =>
  t.request('/api/v1/completions', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })

describe('openai SDK: completions.create', () => {
  it('whole: the prompt as one user message, the text completion with its usage, the exact cost charged and recorded', async () => {
    const { client, user, auth } = await customerWithClient()
    const sent = fake.requests.length
    const prompt = 'Once upon a time'
    const { data: completion, response } = await client.completions
      .create({ model: 'fake/gpt-test', prompt, max_tokens: 50, temperature: 0.5, top_p: 0.9, stop: ['\n\n'], user: 'end-user-7', n: 1 })
      .withResponse()
    const [upstream] = chatsSince(sent)
    expect(upstream.body).toEqual({
      model: 'gpt-test',
      messages: [{ role: 'user', content: prompt }],
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      stop: ['\n\n'],
      user: 'end-user-7',
      n: 1,
    })
    const text = `Hello from gpt-test: ${prompt}`
    const input = fakePromptTokens(upstream.body)
    const cost = tokenCost(PRICING, input, words(text))
    const generationId = response.headers.get('x-generation-id')!
    expect(completion).toEqual({
      id: generationId,
      object: 'text_completion',
      created: expect.any(Number),
      model: 'fake/gpt-test',
      provider: 'Fake',
      system_fingerprint: 'fp_fake123',
      choices: [{ text, index: 0, finish_reason: 'stop', logprobs: null }],
      usage: {
        prompt_tokens: input,
        completion_tokens: words(text),
        total_tokens: input + words(text),
        prompt_tokens_details: expect.objectContaining({ cached_tokens: 0, cache_write_tokens: 0 }),
        completion_tokens_details: expect.objectContaining({ reasoning_tokens: 0 }),
        cost: Number(cost.usd),
        cost_currency: 'USD',
        cost_eur: Number(cost.eur),
        is_byok: false,
        cost_details: expect.objectContaining({ upstream_inference_cost: Number(cost.usd) }),
      },
    })
    expect(generationId).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(await spent(user.org_id)).toBe(cost.eur)
    expect(await generation(generationId, auth)).toMatchObject({
      model: 'fake/gpt-test',
      tokens_prompt: input,
      tokens_completion: words(text),
      total_cost: (completion.usage as unknown as { cost: number }).cost,
      finish_reason: 'stop',
    })
  })

  it('a prompt given as a list of one string; max_tokens reached is finish_reason "length"', async () => {
    const { client, user } = await customerWithClient()
    const sent = fake.requests.length
    const completion = await client.completions.create({ model: 'fake/gpt-test', prompt: ['Count to ten please'], max_tokens: 2 })
    const [upstream] = chatsSince(sent)
    expect(upstream.body.messages).toEqual([{ role: 'user', content: 'Count to ten please' }])
    expect(completion.choices).toEqual([{ text: 'Hello from', index: 0, finish_reason: 'length', logprobs: null }])
    const cost = tokenCost(PRICING, fakePromptTokens(upstream.body), 2)
    expect(completion.usage).toMatchObject({ completion_tokens: 2, cost: Number(cost.usd) })
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('stream: text_completion chunks whose texts join the answer, then the usage chunk with the cost; charged and recorded as it says', async () => {
    const { client, user, auth } = await customerWithClient()
    const sent = fake.requests.length
    const stream = await client.completions.create({ model: 'fake/gpt-test', prompt: 'Tell me a story', stream: true, stream_options: { include_usage: true } })
    const chunks: OpenAI.Completions.Completion[] = []
    for await (const chunk of stream) chunks.push(chunk)
    const text = 'Hello from gpt-test: Tell me a story'
    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({ model: 'gpt-test', messages: [{ role: 'user', content: 'Tell me a story' }], stream: true })
    const id = chunks[0].id
    for (const chunk of chunks) expect(chunk).toMatchObject({ id, object: 'text_completion', model: 'fake/gpt-test', provider: 'Fake' })
    const texts = chunks.slice(0, -1)
    expect(texts.map((c) => c.choices[0].text).join('')).toBe(text)
    for (const chunk of texts)
      expect(chunk.choices).toEqual([{ text: expect.any(String), index: 0, finish_reason: expect.toBeOneOf([null, 'stop']), logprobs: null }])
    expect(texts.at(-1)!.choices[0].finish_reason).toBe('stop')
    const input = fakePromptTokens(upstream.body)
    const cost = tokenCost(PRICING, input, words(text))
    const last = chunks.at(-1)!
    expect(last.choices).toEqual([])
    expect(last.usage).toMatchObject({ prompt_tokens: input, completion_tokens: words(text), cost: Number(cost.usd), cost_eur: Number(cost.eur) })
    expect(await spent(user.org_id)).toBe(cost.eur)
    expect(await generation(id, auth)).toMatchObject({ model: 'fake/gpt-test', total_cost: Number(cost.usd), streamed: true })
  })

  it('the raw stream: data: events of text_completion chunks, the usage chunk, then data: [DONE]', async () => {
    const { auth } = await customerWithClient()
    const res = await post({ model: 'fake/gpt-test', prompt: 'Hi', stream: true }, auth)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const { events } = await readSse(res)
    expect(events.at(-1)).toBe('[DONE]')
    const usage = events.at(-2)
    expect(Object.keys(usage)).toEqual(['id', 'object', 'created', 'model', 'provider', 'choices', 'usage'])
    expect(usage).toMatchObject({ object: 'text_completion', choices: [] })
    const first = events[0]
    expect(first).toEqual({
      id: usage.id,
      object: 'text_completion',
      created: usage.created,
      model: 'fake/gpt-test',
      provider: 'Fake',
      choices: [{ text: 'Hello', index: 0, finish_reason: null, logprobs: null }],
    })
  })

  it('served by a provider without an OpenAI API: Claude through the chat translation, billed at its prices', async () => {
    const { client, user } = await customerWithClient()
    const sent = claude.requests.length
    const completion = await client.completions.create({ model: 'anthropic/claude-haiku-4.5', prompt: 'Say hi', max_tokens: 64 })
    const upstream = claude.requests.slice(sent).find((r) => r.path === '/v1/messages')!
    expect(upstream.body).toMatchObject({
      model: 'claude-haiku-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hi' }] }],
    })
    const text = 'Hello from claude-haiku-4-5: Say hi'
    expect(completion).toMatchObject({
      object: 'text_completion',
      model: 'anthropic/claude-haiku-4.5',
      choices: [{ text, index: 0, finish_reason: 'stop', logprobs: null }],
    })
    const prompt = Math.ceil(JSON.stringify({ system: upstream.body.system, tools: upstream.body.tools, messages: upstream.body.messages }).length / 4)
    const cost = tokenCost(HAIKU.pricing, prompt, words(text))
    expect(completion.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: words(text), cost: Number(cost.usd) })
    expect(await spent(user.org_id)).toBe(cost.eur)
  })
})

describe('errors, in the gateway envelope', () => {
  it.each([
    [{ prompt: 'x', suffix: 'the end' }, 'suffix', 'suffix: is not served'],
    [{ prompt: 'x', echo: true }, 'echo', 'echo: is not served'],
    [{ prompt: 'x', logprobs: 2 }, 'logprobs', 'logprobs: is not served'],
    [{ prompt: 'x', best_of: 3 }, 'best_of', 'best_of: is not served above 1'],
    [{ prompt: ['one', 'two'] }, 'prompt', 'prompt: must be one prompt'],
    [{ prompt: [1, 2, 3] }, 'prompt', 'prompt: must be a string, or a list of one string'],
    [{}, 'prompt', 'prompt: is required'],
    [{ prompt: 'x', messages: [{ role: 'user', content: 'x' }] }, 'messages', 'messages: is a chat field'],
    [{ prompt: 'x', tools: [] }, 'tools', 'tools: is a chat field'],
    [{ prompt: 'x', temperature: 3 }, 'temperature', 'temperature: must be <=2'],
  ])('400 for %j, naming %s; nothing reaches the upstream or is charged', async (body, param, message) => {
    const { auth, user } = await customerWithClient()
    const sent = fake.requests.length
    const res = await post({ model: 'fake/gpt-test', ...body }, auth)
    expect(res.status).toBe(400)
    const error = ((await res.json()) as any).error
    expect(error).toMatchObject({ code: 400, type: 'invalid_request', param })
    expect(error.message).toContain(message)
    expect(fake.requests.length).toBe(sent)
    expect(await spent(user.org_id)).toBe('0')
  })

  it('accepts the legacy fields at their neutral values (suffix "", echo false, logprobs null, best_of 1)', async () => {
    const { auth } = await customerWithClient()
    const sent = fake.requests.length
    const res = await post({ model: 'fake/gpt-test', prompt: 'Hi', suffix: '', echo: false, logprobs: null, best_of: 1 }, auth)
    expect(res.status).toBe(200)
    expect(chatsSince(sent)[0].body).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
  })

  it('the SDK reads the 400, 401, 402, 404 and 502 envelopes as its error classes; nothing is charged', async () => {
    const { client, user } = await customerWithClient()
    await expect(client.completions.create({ model: 'fake/gpt-test', prompt: 'x', suffix: 'y' })).rejects.toMatchObject({
      status: 400,
      constructor: OpenAI.BadRequestError,
      error: { code: 400, type: 'invalid_request', param: 'suffix' },
    })
    await expect(client.completions.create({ model: 'fake/nope', prompt: 'x' })).rejects.toMatchObject({ status: 404, constructor: OpenAI.NotFoundError })
    await expect(client.completions.create({ model: 'fake/broken', prompt: 'x' })).rejects.toMatchObject({
      status: 502,
      constructor: OpenAI.InternalServerError,
    })
    expect(await spent(user.org_id)).toBe('0')
    const poor = await customerWithClient('')
    await expect(poor.client.completions.create({ model: 'fake/gpt-test', prompt: 'x' })).rejects.toMatchObject({ status: 402 })
    await expect(openaiClient(t.url, 'sk-nope').completions.create({ model: 'fake/gpt-test', prompt: 'x' })).rejects.toMatchObject({
      status: 401,
      constructor: OpenAI.AuthenticationError,
    })
  })

  it('a stream that fails after it began: an error chunk with finish_reason "error", which the SDK throws; billed as the record says', async () => {
    const { client, user, auth } = await customerWithClient()
    const res = await post({ model: 'fake/midstream', prompt: 'Tell me a long story', stream: true }, auth)
    const { events } = await readSse(res)
    const failed = events.find((e) => typeof e === 'object' && e.error)
    expect(failed).toMatchObject({ object: 'text_completion', error: { code: 502 }, choices: [{ text: '', index: 0, finish_reason: 'error', logprobs: null }] })
    // Charged what the usage record says the streamed part cost (docs/chat.md#streaming).
    const record = await generation(failed.id, auth)
    expect(await spent(user.org_id)).toBe(tokenCost(PRICING, record.tokens_prompt, record.tokens_completion).eur)
    const stream = await client.completions.create({ model: 'fake/midstream', prompt: 'Tell me a long story', stream: true })
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError)
  })
})

describe('AI SDK completion models', () => {
  it("@ai-sdk/openai-compatible's completionModel: generateText and streamText, usage and the cost charged", async () => {
    const { key, user } = await customerWithClient()
    const provider = createOpenAICompatible({ name: 'gateway', baseURL: `${t.url}/api/v1`, apiKey: key, includeUsage: true })
    const sent = fake.requests.length
    const result = await generateText({ model: provider.completionModel('fake/gpt-test'), prompt: 'Hi there', maxRetries: 0 })
    const [upstream] = chatsSince(sent)
    // The AI SDK writes the conversation as one prompt text, and stops at the next user turn.
    const prompt = 'user:\nHi there\n\nassistant:\n'
    expect(upstream.body).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: prompt }], stop: ['\nuser:'] })
    const text = `Hello from gpt-test: ${prompt}`
    expect(result.text).toBe(text)
    expect(result.finishReason).toBe('stop')
    const input = fakePromptTokens(upstream.body)
    expect(result.usage).toMatchObject({ inputTokens: input, outputTokens: words(text) })
    const first = tokenCost(PRICING, input, words(text))
    expect(await spent(user.org_id)).toBe(first.eur)

    const streamed = streamText({ model: provider.completionModel('fake/gpt-test'), prompt: 'Hi there', maxRetries: 0 })
    // The fake streams word by word, a space before each word but the first.
    expect(await streamed.text).toBe(text.split(/\s+/).filter(Boolean).join(' '))
    expect(await streamed.usage).toMatchObject({ inputTokens: input, outputTokens: words(text) })
    expect(await streamed.finishReason).toBe('stop')
    expect(chatsSince(sent).at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    expect(await spent(user.org_id)).toBe(tokenCost(PRICING, 2 * input, 2 * words(text)).eur)
  })

  it("@openrouter/ai-sdk-provider's .completion(model): generateText, and the model's own stream with the cost in its metadata", async () => {
    const { key, user } = await customerWithClient()
    const openrouter = createOpenRouter({ baseURL: `${t.url}/api/v1`, apiKey: key })
    const sent = fake.requests.length
    const result = await generateText({ model: openrouter.completion('fake/gpt-test'), prompt: 'Hello gateway', maxRetries: 0 })
    const [upstream] = chatsSince(sent)
    expect(upstream.body.messages).toHaveLength(1)
    expect(upstream.body.messages[0].role).toBe('user')
    const promptText = upstream.body.messages[0].content as string
    expect(promptText).toContain('Hello gateway')
    const text = `Hello from gpt-test: ${promptText}`
    expect(result.text).toBe(text)
    const input = fakePromptTokens(upstream.body)
    const cost = tokenCost(PRICING, input, words(text))
    expect(result.usage).toMatchObject({ inputTokens: input, outputTokens: words(text) })
    expect(await spent(user.org_id)).toBe(cost.eur)

    // Its stream read from the model itself: the provider (2.10.0) sends text deltas without a text-start, which
    // `ai` 6's streamText drops, against OpenRouter as here (docs/completions.md#clients).
    const { stream } = await openrouter.completion('fake/gpt-test').doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hello gateway' }] }] })
    const parts: any[] = []
    for await (const part of stream as unknown as AsyncIterable<any>) parts.push(part)
    expect(
      parts
        .filter((p) => p.type === 'text-delta')
        .map((p) => p.delta)
        .join(''),
    ).toBe(text.split(/\s+/).filter(Boolean).join(' '))
    expect(parts.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: { unified: 'stop' },
      usage: { inputTokens: { total: input }, outputTokens: { total: words(text) } },
      providerMetadata: { openrouter: { usage: { cost: Number(tokenCost(PRICING, input, words(text)).usd) } } },
    })
    expect(await spent(user.org_id)).toBe(tokenCost(PRICING, 2 * input, 2 * words(text)).eur)
  })
})
