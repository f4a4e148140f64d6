/**
 * Anthropic's own client, `@anthropic-ai/sdk` (pinned in package.json), unchanged against the gateway's Messages API
 * (POST /messages, docs/messages.md) over real HTTP on 127.0.0.1: `baseURL` is the gateway's `/api` (the SDK adds
 * `/v1/messages`). Behind it, the fake Anthropic API (test/fakes/anthropic.ts), natively (the request passed on
 * unchanged, docs/native.md) and through the chat translation (the same provider without its native API), and the
 * fake OpenAI API (test/fakes/openai.ts). Each test checks what the SDK parsed, what reached the upstream, and the
 * exact cost charged.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { anthropic } from '../../src/providers/anthropic'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { ProviderModel } from '../../src/contracts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { withoutNative } from '../helpers/providers'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { tokenCost } from '../helpers/sse'

const KEY = 'sk-ant-api03-test-key-0123456789'
const HAIKU = anthropicModels.find((m) => m.id === 'anthropic/claude-haiku-4.5')!
const OVERLOADED: ProviderModel = { ...HAIKU, id: 'anthropic/claude-overloaded', upstreamId: 'claude-overloaded', name: 'overloaded' }
const GPT_PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const weather = {
  name: 'get_weather',
  description: 'The current weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
}

/** The fake Anthropic's prompt tokens (test/fakes/anthropic.ts) and the fakes' completion tokens (one per word). */
const anthropicPromptTokens = (body: any) => Math.ceil(JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages }).length / 4)
const openaiPromptTokens = (body: any) => Math.ceil(JSON.stringify(body.messages).length / 4)
const words = (text: string) => text.split(/\s+/).filter(Boolean).length
/** The exact cost in USD at the prices, and in EUR (× 0.86, rounded half-up to 12 digits). */
const costOf = tokenCost

let claude: FakeAnthropic
let openai: FakeOpenAI
let t: TestGateway
/** The same gateway, but its Anthropic provider without the native Messages API: every request is translated. */
let translated: TestGateway

const startWith = (native: boolean) => {
  const claudeProvider = anthropic({ apiKey: KEY, baseURL: claude.url, models: [HAIKU, OVERLOADED] })
  return startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    health: { failureThreshold: 1_000 },
    retry: { maxRetries: 0 },
    providers: [
      native ? claudeProvider : withoutNative(claudeProvider),
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: openai.url,
        apiKey: 'sk-openai',
        models: [
          { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: GPT_PRICING, supportedParameters: ['tools', 'tool_choice', 'max_tokens'] },
          {
            id: 'fake/gpt-reasoning',
            upstreamId: 'gpt-reasoning',
            pricing: GPT_PRICING,
            reasoning: { efforts: ['low', 'medium', 'high'] },
            supportedParameters: ['tools', 'tool_choice', 'max_tokens', 'reasoning'],
          },
        ],
      }),
    ],
  })
}

beforeAll(async () => {
  claude = await startFakeAnthropic({ apiKey: KEY })
  openai = await startFakeOpenAI({ apiKey: 'sk-openai' })
  t = await startWith(true)
  translated = await startWith(false)
})

afterAll(async () => {
  await t?.close()
  await translated?.close()
  await claude?.close()
  await openai?.close()
})

/** A new customer (its own org with `credits` EUR) and an SDK client on its key. */
async function customerWithSdk(credits = '5', options: ConstructorParameters<typeof Anthropic>[0] = {}, on = t) {
  const customer = await createCustomer(on.gateway, { credits })
  const sdk = new Anthropic({ apiKey: customer.key, baseURL: `${on.url}/api`, maxRetries: 0, ...options })
  return { ...customer, sdk }
}
const spent = async (orgId: string, on = t) => (await on.gateway.admin.getCredits(orgId)).total_usage
const lastClaude = () => claude.requests.filter((r) => r.path === '/v1/messages').at(-1)!
const lastOpenAI = () => openai.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!

describe.each([
  { via: 'natively', native: true },
  { via: 'through the chat translation', native: false },
])('@anthropic-ai/sdk on an Anthropic model ($via)', ({ native }) => {
  const gateway = () => (native ? t : translated)
  const customerWithSdk_ = (credits = '5') => customerWithSdk(credits, {}, gateway())

  it('messages.create: text with a system prompt, exact usage, the cost charged, the message id a generation id', async () => {
    const { sdk, user, auth } = await customerWithSdk_()
    const params = {
      model: 'anthropic/claude-haiku-4.5',
      max_tokens: 200,
      system: 'Answer briefly.',
      messages: [{ role: 'user' as const, content: 'What is the capital of France?' }],
      metadata: { user_id: 'user-42' },
    }
    const message = await sdk.messages.create(params)
    const upstream = lastClaude()
    if (native) expect(upstream.body).toEqual({ ...params, model: 'claude-haiku-4-5', stream: false })
    else
      expect(upstream.body).toMatchObject({
        model: 'claude-haiku-4-5',
        max_tokens: 200,
        system: [{ type: 'text', text: 'Answer briefly.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
        metadata: { user_id: 'user-42' },
      })
    const text = 'Hello from claude-haiku-4-5: What is the capital of France?'
    expect(message.content).toEqual([{ type: 'text', text }])
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'anthropic/claude-haiku-4.5', stop_reason: 'end_turn', stop_sequence: null })
    const prompt = anthropicPromptTokens(upstream.body)
    const cost = costOf(HAIKU.pricing, prompt, words(text))
    expect(message.usage).toMatchObject({
      input_tokens: prompt,
      output_tokens: words(text),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cost: Number(cost.usd),
      is_byok: false,
    })
    expect(await spent(user.org_id, gateway())).toBe(cost.eur)
    expect(message.id).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    const generation = await gateway().request(`/api/v1/generation?id=${message.id}`, { headers: auth })
    expect((await generation.json()).data).toMatchObject({
      id: message.id,
      model: 'anthropic/claude-haiku-4.5',
      tokens_prompt: prompt,
      native_finish_reason: 'end_turn',
    })
  })

  it('messages.stream: the events the SDK reads, its final message and the cost charged', async () => {
    const { sdk, user } = await customerWithSdk_()
    const stream = sdk.messages.stream({ model: 'anthropic/claude-haiku-4.5', max_tokens: 200, messages: [{ role: 'user', content: 'Tell me a story' }] })
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    const message = await stream.finalMessage()
    const text = 'Hello from claude-haiku-4-5: Tell me a story'
    const deltas = words(text)
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      ...Array(deltas).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(message.content).toEqual([{ type: 'text', text }])
    expect(message.stop_reason).toBe('end_turn')
    const prompt = anthropicPromptTokens(lastClaude().body)
    const cost = costOf(HAIKU.pricing, prompt, deltas)
    expect(message.usage).toMatchObject({ input_tokens: prompt, output_tokens: deltas, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
    expect(await spent(user.org_id, gateway())).toBe(cost.eur)
  })

  it('a tool round trip: tool_use, then the tool_result answered', async () => {
    const { sdk } = await customerWithSdk_()
    const question = { role: 'user' as const, content: 'Paris' }
    const first = await sdk.messages.create({ model: 'anthropic/claude-haiku-4.5', max_tokens: 300, tools: [weather], messages: [question] })
    expect(first.stop_reason).toBe('tool_use')
    expect(first.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_fake/), name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
    ])
    const call = first.content[0] as Anthropic.ToolUseBlock
    const second = await sdk.messages.create({
      model: 'anthropic/claude-haiku-4.5',
      max_tokens: 300,
      tools: [weather],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 24 °C' }] },
      ],
    })
    expect(second.content).toEqual([{ type: 'text', text: 'The tools said: Sunny, 24 °C' }])
    expect(second.stop_reason).toBe('end_turn')
    // Natively the assistant's blocks go back as the SDK sent them; translated, as chat's tool call becomes one.
    const sentCall = native ? first.content[0] : { type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris' } }
    expect(lastClaude().body.messages.slice(1)).toEqual([
      { role: 'assistant', content: [sentCall] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 24 °C' }] },
    ])
  })

  it('thinking with a budget and a tool, streamed: the signature received is the one sent back, and Anthropic accepts it', async () => {
    const { sdk } = await customerWithSdk_()
    const params = {
      model: 'anthropic/claude-haiku-4.5',
      max_tokens: 4000,
      thinking: { type: 'enabled' as const, budget_tokens: 2048 },
      tools: [weather],
    }
    const question = { role: 'user' as const, content: 'Oslo' }
    const stream = sdk.messages.stream({ ...params, messages: [question] })
    const first = await stream.finalMessage()
    expect(lastClaude().body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
    const thought = 'The user asked about Oslo; I should answer plainly.'
    expect(first.content).toEqual([
      { type: 'thinking', thinking: thought, signature: expect.stringMatching(/^fakesig_/) },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_fake/), name: 'get_weather', input: { city: 'Oslo' }, caller: { type: 'direct' } },
    ])
    expect(first.stop_reason).toBe('tool_use')
    expect(first.usage.output_tokens_details).toEqual({ thinking_tokens: words(thought) })
    const [thinking, call] = first.content as [Anthropic.ThinkingBlock, Anthropic.ToolUseBlock]

    const second = await sdk.messages.create({
      ...params,
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Snow' }] },
      ],
    })
    // The fake checks the signature against the text (a changed block is a 400): this answer proves it held.
    expect(lastClaude().body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: thought, signature: thinking.signature })
    expect(second.content.at(-1)).toEqual({ type: 'text', text: 'The tools said: Snow' })
  })
})

describe('@anthropic-ai/sdk on an OpenAI model', () => {
  it('messages.create answers with the exact usage and cost', async () => {
    const { sdk, user } = await customerWithSdk()
    const message = await sdk.messages.create({
      model: 'fake/gpt-test',
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be kind.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi there' }] }],
    })
    const upstream = lastOpenAI()
    expect(upstream.body.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be kind.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Hi there' }] },
    ])
    const text = 'Hello from gpt-test: Hi there'
    const prompt = openaiPromptTokens(upstream.body)
    const cost = costOf(GPT_PRICING, prompt, words(text))
    expect(message.content).toEqual([{ type: 'text', text }])
    expect(message.usage).toMatchObject({ input_tokens: prompt, output_tokens: words(text), cost: Number(cost.usd) })
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('messages.create with stream: true: the raw events as Anthropic sends them, a text block started as { type, text } alone', async () => {
    const { sdk, user } = await customerWithSdk()
    const stream = await sdk.messages.create({ model: 'fake/gpt-test', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi there' }] })
    const events: Record<string, unknown>[] = []
    for await (const event of stream) events.push(event as unknown as Record<string, unknown>)
    const text = 'Hello from gpt-test: Hi there'
    // Anthropic's streaming docs (docs/messages.md#streaming): no `citations` on a plain text block, started or whole.
    expect(events[1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    expect(
      events
        .filter((e) => e.type === 'content_block_delta')
        .map((e) => (e.delta as { text: string }).text)
        .join(''),
    ).toBe(text)
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: words(text) } })
    expect(events.at(-1)).toEqual({ type: 'message_stop' })
    const cost = costOf(GPT_PRICING, openaiPromptTokens(lastOpenAI().body), words(text))
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('a streamed tool round trip', async () => {
    const { sdk } = await customerWithSdk()
    const question = { role: 'user' as const, content: 'Rome' }
    const first = await sdk.messages
      .stream({ model: 'fake/gpt-test', max_tokens: 100, tools: [weather], tool_choice: { type: 'any' }, messages: [question] })
      .finalMessage()
    expect(lastOpenAI().body).toMatchObject({
      tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather.input_schema } }],
    })
    expect(first.stop_reason).toBe('tool_use')
    expect(first.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^call_fake0/), name: 'get_weather', input: { city: 'Rome' }, caller: { type: 'direct' } },
    ])
    const call = first.content[0] as Anthropic.ToolUseBlock
    const second = await sdk.messages
      .stream({
        model: 'fake/gpt-test',
        max_tokens: 100,
        tools: [weather],
        messages: [
          question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Warm' }] },
        ],
      })
      .finalMessage()
    expect(lastOpenAI().body.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
      { role: 'tool', tool_call_id: call.id, content: 'Warm' },
    ])
    expect(second.content).toEqual([{ type: 'text', text: 'The tool said: Warm' }])
  })
})

describe('@anthropic-ai/sdk on an OpenAI reasoning model', () => {
  it('messages.stream with thinking and a system prompt: the budget becomes a reasoning effort, the reasoning tokens thinking tokens', async () => {
    const { sdk, user } = await customerWithSdk()
    const question = 'Think about the weather in Oslo today please'
    const stream = sdk.messages.stream({
      model: 'fake/gpt-reasoning',
      max_tokens: 4000,
      system: 'Answer plainly.',
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: question }],
    })
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    const message = await stream.finalMessage()
    const upstream = lastOpenAI().body
    // A budget of 2,048 tokens is OpenAI's `low` effort (docs/reasoning.md); the system prompt its system message.
    expect(upstream).toMatchObject({ model: 'gpt-reasoning', reasoning_effort: 'low', stream: true })
    expect(upstream.messages[0]).toEqual({ role: 'system', content: 'Answer plainly.' })
    const text = `Hello from gpt-reasoning: ${question}`
    expect(types[0]).toBe('message_start')
    expect(types.at(-1)).toBe('message_stop')
    expect(message.content).toEqual([{ type: 'text', text }])
    // The fake reports 7 of the completion tokens as reasoning: Anthropic's thinking tokens.
    expect(message.usage).toMatchObject({ output_tokens: words(text), output_tokens_details: { thinking_tokens: 7 } })
    const cost = costOf(GPT_PRICING, openaiPromptTokens(upstream), words(text))
    expect(await spent(user.org_id)).toBe(cost.eur)
  })
})

describe('@anthropic-ai/sdk: auth, errors, fallbacks, count_tokens', () => {
  it('authenticates with x-api-key as well as Authorization: Bearer', async () => {
    const { key } = await createCustomer(t.gateway, { credits: '1' })
    const sdk = new Anthropic({ apiKey: null, baseURL: `${t.url}/api`, maxRetries: 0, defaultHeaders: { 'x-api-key': key } })
    const message = await sdk.messages.create({ model: 'fake/gpt-test', max_tokens: 50, messages: [{ role: 'user', content: 'key?' }] })
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from gpt-test: key?' }])
  })

  it('takes Anthropic’s bare model ids, as Claude Code sends them (claude-haiku-4-5 → anthropic/claude-haiku-4.5), and answers with them', async () => {
    const { sdk } = await customerWithSdk()
    const message = await sdk.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'bare?' }] })
    expect(message.model).toBe('claude-haiku-4-5')
    const streamed = await sdk.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'bare?' }] }).finalMessage()
    expect(streamed.model).toBe('claude-haiku-4-5')
    expect(lastClaude().body.model).toBe('claude-haiku-4-5')
    const unknown = await sdk.messages.create({ model: 'claude-nothing-9', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError)
    expect(unknown.error.error.message).toMatch(/^Model claude-nothing-9 is not available on this gateway/)
  })

  it('answers 401, 402, 404 and 400 in Anthropic shape, as the SDK error classes', async () => {
    const bad = new Anthropic({ apiKey: 'sk-nope', baseURL: `${t.url}/api`, maxRetries: 0 })
    const request = { model: 'fake/gpt-test', max_tokens: 50, messages: [{ role: 'user' as const, content: 'x' }] }
    const unauthorized = await bad.messages.create(request).catch((e) => e)
    expect(unauthorized).toBeInstanceOf(Anthropic.AuthenticationError)
    expect(unauthorized.error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', message: 'Invalid API key: unknown, revoked, disabled or expired' },
    })

    const { sdk: poor } = await customerWithSdk('')
    const broke = await poor.messages.create(request).catch((e) => e)
    expect(broke.status).toBe(402)
    expect(broke.error.error.type).toBe('billing_error')

    const { sdk } = await customerWithSdk()
    const missing = await sdk.messages.create({ ...request, model: 'nobody/nothing' }).catch((e) => e)
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError)
    expect(missing.error.error.type).toBe('not_found_error')

    const invalid = await sdk.messages.create({ ...request, max_tokens: 0 }).catch((e) => e)
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError)
    expect(invalid.error).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: must be >=1', param: 'max_tokens' },
      request_id: invalid.headers.get('x-request-id'),
    })
  })

  it('falls back to the models list when the model fails', async () => {
    const { sdk } = await customerWithSdk()
    const message = await sdk.messages.create({
      model: 'anthropic/claude-overloaded',
      models: ['fake/gpt-test'],
      max_tokens: 50,
      messages: [{ role: 'user', content: 'fallback' }],
    } as Anthropic.MessageCreateParamsNonStreaming)
    expect(message.model).toBe('fake/gpt-test')
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from gpt-test: fallback' }])
  })

  it('messages.countTokens estimates the prompt as the gateway does (4 characters a token), unbilled', async () => {
    const { sdk, user } = await customerWithSdk()
    const counted = await sdk.messages.countTokens({ model: 'fake/gpt-test', system: 'Be brief.', messages: [{ role: 'user', content: 'How many tokens?' }] })
    const chat = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'How many tokens?' },
    ]
    expect(counted).toEqual({ input_tokens: Math.ceil(JSON.stringify(chat).length / 4) })
    expect(await spent(user.org_id)).toBe('0')
  })
})
