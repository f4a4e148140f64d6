/**
 * OpenRouter's Vercel AI SDK provider, `@openrouter/ai-sdk-provider` with `ai` (both pinned in package.json),
 * unchanged against the gateway over real HTTP on 127.0.0.1: the fake OpenAI upstream (test/fakes/openai.ts) for text,
 * tools and structured output, the fake Anthropic Messages API (test/fakes/anthropic.ts) for reasoning. Each test
 * checks what reached the upstream, what the AI SDK returned, and the exact cost it reports in
 * providerMetadata.openrouter.usage (and what the org paid).
 */
import { createOpenRouter } from '@openrouter/ai-sdk-provider'
import { generateText, jsonSchema, Output, stepCountIs, streamText, tool } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { anthropic } from '../../src/providers/anthropic'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { ProviderModel } from '../../src/contracts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const ANTHROPIC_KEY = 'sk-ant-api03-compat-0123456789'
const SONNET = anthropicModels.find((m) => m.id === 'anthropic/claude-sonnet-5.5')!

/** The exact cost: USD at the model's prices, EUR at 0.86 (rounded half-up once, to 12 digits). */
const usdToEur = (usd: bigint) => ({ usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) })
const costAt = (pricing: ProviderModel['pricing'], promptTokens: number, completionTokens: number) =>
  usdToEur(BigInt(promptTokens) * units(pricing.prompt) + BigInt(completionTokens) * units(pricing.completion))

/** The fakes' token counts (see test/fakes/openai.ts and test/fakes/anthropic.ts). */
const fakePromptTokens = (upstreamBody: any) => Math.ceil(JSON.stringify(upstreamBody.messages).length / 4)
const anthropicPromptTokens = (body: any) => Math.ceil(JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages }).length / 4)
const words = (text: string) => text.split(/\s+/).filter(Boolean).length

let openai: FakeOpenAI
let claude: FakeAnthropic
let t: TestGateway

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY })
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: openai.url,
        apiKey: 'sk-upstream',
        models: [
          {
            id: 'fake/gpt-test',
            upstreamId: 'gpt-test',
            pricing: PRICING,
            supportedParameters: ['max_tokens', 'temperature', 'tools', 'tool_choice', 'response_format', 'structured_outputs'],
          },
        ],
      }),
      anthropic({ apiKey: ANTHROPIC_KEY, baseURL: claude.url, models: [SONNET] }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await openai?.close()
  await claude?.close()
})

/** A new customer (its own org with 5 EUR) and the provider on its key. */
async function customerWithProvider() {
  const customer = await createCustomer(t.gateway, { credits: '5' })
  const openrouter = createOpenRouter({ apiKey: customer.key, baseURL: `${t.url}/api/v1` })
  const spent = async () => (await t.gateway.admin.getCredits(customer.user.org_id)).total_usage
  return { ...customer, openrouter, spent }
}
const chatsSince = (from: number) => openai.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')
const messagesSince = (from: number) => claude.requests.slice(from).filter((r) => r.path === '/v1/messages')

describe('@openrouter/ai-sdk-provider', () => {
  it('generateText answers, with the token counts and the exact cost in providerMetadata.openrouter.usage', async () => {
    const { openrouter, spent } = await customerWithProvider()
    const sent = openai.requests.length
    const text = 'How are you?'
    const result = await generateText({ model: openrouter('fake/gpt-test'), prompt: text, maxOutputTokens: 50, temperature: 0.3, maxRetries: 0 })

    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({ model: 'gpt-test', messages: [{ role: 'user', content: text }], max_tokens: 50, temperature: 0.3 })
    const answer = `Hello from gpt-test: ${text}`
    expect(result.text).toBe(answer)
    expect(result.finishReason).toBe('stop')
    const promptTokens = fakePromptTokens(upstream.body)
    expect(result.usage).toMatchObject({ inputTokens: promptTokens, outputTokens: words(answer), totalTokens: promptTokens + words(answer) })
    const cost = costAt(PRICING, promptTokens, words(answer))
    expect(result.providerMetadata?.openrouter).toMatchObject({
      usage: { promptTokens, completionTokens: words(answer), totalTokens: promptTokens + words(answer), cost: Number(cost.usd) },
    })
    expect(result.response.id).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(await spent()).toBe(cost.eur)
  })

  it('streamText streams the answer, with the usage and exact cost at its end', async () => {
    const { openrouter, spent } = await customerWithProvider()
    const sent = openai.requests.length
    const text = 'Stream this please'
    const result = streamText({ model: openrouter('fake/gpt-test'), prompt: text, maxRetries: 0 })
    let streamed = ''
    for await (const piece of result.textStream) streamed += piece

    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({ model: 'gpt-test', stream: true, stream_options: { include_usage: true } })
    const answer = `Hello from gpt-test: ${text}`
    expect(streamed).toBe(answer)
    expect(await result.finishReason).toBe('stop')
    const promptTokens = fakePromptTokens(upstream.body)
    expect(await result.usage).toMatchObject({ inputTokens: promptTokens, outputTokens: words(answer) })
    const cost = costAt(PRICING, promptTokens, words(answer))
    expect((await result.providerMetadata)?.openrouter).toMatchObject({ usage: { promptTokens, completionTokens: words(answer), cost: Number(cost.usd) } })
    expect(await spent()).toBe(cost.eur)
  })

  it('tools: generateText calls the tool, sends its result back and answers it', async () => {
    const { openrouter } = await customerWithProvider()
    const sent = openai.requests.length
    const result = await generateText({
      model: openrouter('fake/gpt-test'),
      prompt: 'Lisbon',
      maxRetries: 0,
      stopWhen: stepCountIs(2),
      tools: {
        get_weather: tool({
          description: 'The current weather in a city',
          inputSchema: jsonSchema<{ city: string }>({
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
            additionalProperties: false,
          }),
          execute: async ({ city }) => `Sunny in ${city}`,
        }),
      },
    })

    expect(result.steps).toHaveLength(2)
    expect(result.steps[0].toolCalls).toEqual([
      expect.objectContaining({ toolName: 'get_weather', input: { city: 'Lisbon' }, toolCallId: expect.stringMatching(/^call_fake0/) }),
    ])
    expect(result.text).toBe('The tool said: Sunny in Lisbon')
    const [first, second] = chatsSince(sent)
    expect(first.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The current weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        },
      },
    ])
    const callId = result.steps[0].toolCalls[0].toolCallId
    expect(second.body.messages.slice(1)).toEqual([
      expect.objectContaining({
        role: 'assistant',
        tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } }],
      }),
      { role: 'tool', tool_call_id: callId, name: 'get_weather', content: 'Sunny in Lisbon' },
    ])
  })

  it('structured output: Output.object sends a json_schema response format and parses the answer', async () => {
    const { openrouter } = await customerWithProvider()
    const sent = openai.requests.length
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    } as const
    const result = await generateText({
      model: openrouter('fake/gpt-test'),
      prompt: 'Ada',
      maxRetries: 0,
      output: Output.object({ schema: jsonSchema<{ name: string; age: number }>(schema) }),
    })

    expect(result.output).toEqual({ name: 'Ada', age: 42 })
    const [upstream] = chatsSince(sent)
    expect(upstream.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { schema } })
  })

  it('reasoning: generateText on Claude returns the thinking as reasoningText and bills it', async () => {
    const { openrouter, spent } = await customerWithProvider()
    const sent = claude.requests.length
    const question = 'Why is the sky blue?'
    const result = await generateText({ model: openrouter('anthropic/claude-sonnet-5.5', { reasoning: { effort: 'high' } }), prompt: question, maxRetries: 0 })

    const [upstream] = messagesSince(sent)
    expect(upstream.body).toMatchObject({ model: 'claude-sonnet-5-5', thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    const thinking = `The user asked about ${question}; I should answer plainly.`
    expect(result.reasoningText).toBe(thinking)
    expect(result.text).toBe(`Hello from claude-sonnet-5-5: ${question}`)
    const completionTokens = words(thinking) + words(result.text)
    expect(result.usage.outputTokens).toBe(completionTokens)
    const cost = costAt(SONNET.pricing, anthropicPromptTokens(upstream.body), completionTokens)
    expect(result.providerMetadata?.openrouter).toMatchObject({
      usage: { completionTokens, completionTokensDetails: { reasoningTokens: words(thinking) }, cost: Number(cost.usd) },
    })
    expect(await spent()).toBe(cost.eur)
  })

  it('reasoning: streamText on Claude streams the thinking once, then the answer', async () => {
    const { openrouter } = await customerWithProvider()
    const question = 'Why is grass green?'
    const result = streamText({ model: openrouter('anthropic/claude-sonnet-5.5', { reasoning: { effort: 'low' } }), prompt: question, maxRetries: 0 })
    let reasoning = ''
    let text = ''
    for await (const part of result.fullStream) {
      if (part.type === 'reasoning-delta') reasoning += part.text
      if (part.type === 'text-delta') text += part.text
    }
    const thinking = `The user asked about ${question}; I should answer plainly.`
    expect(reasoning).toBe(thinking)
    expect(await result.reasoningText).toBe(thinking)
    expect(text).toBe(`Hello from claude-sonnet-5-5: ${question}`)
  })
})
