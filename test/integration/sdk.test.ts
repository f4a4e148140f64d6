/**
 * Official clients against POST /api/v1/chat/completions, over real HTTP on 127.0.0.1: the `openai` SDK and the
 * Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`), with the fake OpenAI upstream of test/fakes/openai.ts behind
 * the gateway. Each test asserts what the client parsed and, where it matters, what the fake received.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, jsonSchema, streamText, tool } from 'ai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { openaiClient } from '../helpers/clients'

// ---------------------------------------------------------------------------------------------------------------
// Exact decimal arithmetic for expected costs, in ledger units of 10^-12 (the gateway's money scale).

const SCALE = 12
const pow10 = (n: number) => 10n ** BigInt(n)

/** A plain decimal string as { coefficient, scale }: "0.000002" → 2n at scale 6. */
const parseDecimal = (text: string) => {
  const [whole, fraction = ''] = text.split('.')
  return { coefficient: BigInt(whole + fraction), scale: fraction.length }
}

/** Rounds coefficient × 10^-scale half-up to 10^-12 units. */
const toUnits = (coefficient: bigint, scale: number): bigint => {
  if (scale <= SCALE) return coefficient * pow10(SCALE - scale)
  const divisor = pow10(scale - SCALE)
  return (coefficient + divisor / 2n) / divisor
}

/** 10^-12 units as the shortest plain decimal text ("0.0000258"). */
const unitsToText = (units: bigint): string => {
  const fraction = (units % pow10(SCALE)).toString().padStart(SCALE, '0').replace(/0+$/, '')
  return `${units / pow10(SCALE)}${fraction ? `.${fraction}` : ''}`
}

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const USD_TO_EUR = '0.86'

/** The exact cost of a request in USD and EUR (each rounded once, half-up, to 12 digits) as decimal text. */
function expectedCost(promptTokens: number, completionTokens: number) {
  const prompt = parseDecimal(PRICING.prompt)
  const completion = parseDecimal(PRICING.completion)
  const rate = parseDecimal(USD_TO_EUR)
  const scale = Math.max(prompt.scale, completion.scale)
  const usd =
    BigInt(promptTokens) * prompt.coefficient * pow10(scale - prompt.scale) +
    BigInt(completionTokens) * completion.coefficient * pow10(scale - completion.scale)
  return {
    cost: unitsToText(toUnits(usd, scale)),
    costEur: unitsToText(toUnits(usd * rate.coefficient, scale + rate.scale)),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// What the fake upstream reports (see planAnswer in test/fakes/openai.ts).

/** The fake's prompt token count for the messages it received. */
const fakePromptTokens = (upstreamBody: any) => Math.ceil(JSON.stringify(upstreamBody.messages).length / 4)
/** The fake's completion token count for a text answer: one token per word. */
const fakeCompletionTokens = (text: string) => text.split(/\s+/).filter(Boolean).length

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}

let fake: FakeOpenAI
let t: TestGateway

beforeAll(async () => {
  fake = await startFakeOpenAI()
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: USD_TO_EUR },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: fake.url,
        apiKey: 'sk-upstream-test',
        models: [
          {
            id: 'fake/gpt-test',
            upstreamId: 'gpt-test',
            pricing: PRICING,
            supportedParameters: ['max_tokens', 'temperature', 'tools', 'tool_choice', 'response_format', 'structured_outputs'],
          },
          { id: 'fake/rate-limited', upstreamId: 'fail-429', pricing: PRICING },
        ],
      }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

/** The chat requests the fake received since `from` (an index into fake.requests). */
const upstreamChatsSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')

describe('openai SDK', () => {
  let client: OpenAI
  let orgId: string
  /** Raw bodies of the gateway's JSON answers, as the SDK received them. */
  const rawBodies: string[] = []

  beforeAll(async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    orgId = customer.user.org_id
    client = openaiClient(t.url, customer.key, rawBodies)
  })

  it('answers a whole completion with the exact cost, and charges the org exactly cost_eur', async () => {
    const text = 'What is the capital of France?'
    const before = await t.gateway.admin.getCredits(orgId)
    expect(before).toMatchObject({ balance: '5', total_usage: '0' })
    const sent = fake.requests.length

    const completion = await client.chat.completions.create({ model: 'fake/gpt-test', messages: [{ role: 'user', content: text }] })

    const answer = `Hello from gpt-test: ${text}`
    expect(completion.object).toBe('chat.completion')
    expect(completion.id).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(completion.model).toBe('fake/gpt-test')
    expect(completion.choices).toHaveLength(1)
    expect(completion.choices[0].message.role).toBe('assistant')
    expect(completion.choices[0].message.content).toBe(answer)
    expect(completion.choices[0].finish_reason).toBe('stop')

    // The fake's token counts, passed through.
    const [upstream] = upstreamChatsSince(sent)
    expect(upstream.body.model).toBe('gpt-test')
    expect(upstream.headers.authorization).toBe('Bearer sk-upstream-test')
    const usage = completion.usage as OpenAI.CompletionUsage & { cost: number; cost_eur: number; cost_currency: string }
    expect(usage.prompt_tokens).toBe(fakePromptTokens(upstream.body))
    expect(usage.completion_tokens).toBe(fakeCompletionTokens(answer))
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens)

    // The exact cost: tokens × pricing in USD, × 0.86 in EUR.
    const expected = expectedCost(usage.prompt_tokens, usage.completion_tokens)
    expect(typeof usage.cost).toBe('number')
    expect(typeof usage.cost_eur).toBe('number')
    expect(usage.cost).toBe(Number(expected.cost))
    expect(usage.cost_eur).toBe(Number(expected.costEur))
    expect(usage.cost_currency).toBe('USD')
    // …written as exact decimal text on the wire (no binary noise, no exponent).
    const raw = rawBodies.at(-1)!
    expect(raw).toContain(`"cost":${expected.cost},`)
    expect(raw).toContain(`"cost_eur":${expected.costEur},`)

    // The org paid exactly cost_eur.
    const after = await t.gateway.admin.getCredits(orgId)
    expect(after.total_usage).toBe(expected.costEur)
    expect(after.total_credits).toBe('5')
    expect(after.balance).toBe(unitsToText(5n * pow10(SCALE) - toUnits(parseDecimal(expected.costEur).coefficient, parseDecimal(expected.costEur).scale)))
  })

  it('streams the answer, with usage and cost in one final chunk whose choices are empty', async () => {
    const text = 'Tell me a story'
    const stream = await client.chat.completions.create({ model: 'fake/gpt-test', messages: [{ role: 'user', content: text }], stream: true })
    const chunks: OpenAI.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)

    const answer = `Hello from gpt-test: ${text}`
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(answer)
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
    expect(chunks[0].id).toMatch(/^gen-/)
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'fake/gpt-test')).toBe(true)

    const withUsage = chunks.filter((c) => c.usage)
    expect(withUsage).toHaveLength(1)
    const last = chunks.at(-1)!
    expect(withUsage[0]).toBe(last)
    expect(last.choices).toEqual([])
    const usage = last.usage as OpenAI.CompletionUsage & { cost: number; cost_eur: number }
    expect(usage.completion_tokens).toBe(fakeCompletionTokens(answer))
    const expected = expectedCost(usage.prompt_tokens, usage.completion_tokens)
    expect(usage.cost).toBe(Number(expected.cost))
    expect(usage.cost_eur).toBe(Number(expected.costEur))

    // The last chunk with a choice carries the finish reason.
    const lastWithChoice = chunks.filter((c) => c.choices.length).at(-1)!
    expect(lastWithChoice.choices[0].finish_reason).toBe('stop')
  })

  it('returns a tool call, then answers the tool result in a round trip', async () => {
    const text = 'Paris'
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: text }]
    const first = await client.chat.completions.create({ model: 'fake/gpt-test', messages, tools: [weatherTool] })

    const choice = first.choices[0]
    expect(choice.finish_reason).toBe('tool_calls')
    expect(choice.message.content).toBeNull()
    expect(choice.message.tool_calls).toHaveLength(1)
    const call = choice.message.tool_calls![0]
    expect(call.type).toBe('function')
    if (call.type !== 'function') throw new Error('expected a function tool call')
    expect(call.id).toMatch(/^call_fake0/)
    expect(call.function.name).toBe('get_weather')
    expect(JSON.parse(call.function.arguments)).toEqual({ city: text })

    const sent = fake.requests.length
    const toolResult = 'Sunny, 24 °C'
    const second = await client.chat.completions.create({
      model: 'fake/gpt-test',
      tools: [weatherTool],
      messages: [
        ...messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }],
        },
        { role: 'tool', tool_call_id: call.id, content: toolResult },
      ],
    })
    expect(second.choices[0].finish_reason).toBe('stop')
    expect(second.choices[0].message.content).toBe(`The tool said: ${toolResult}`)

    const [upstream] = upstreamChatsSince(sent)
    const upstreamMessages = upstream.body.messages
    expect(upstreamMessages).toHaveLength(3)
    expect(upstreamMessages[1]).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: call.function.arguments } }],
    })
    expect(upstreamMessages[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: toolResult })
    expect(upstream.body.tools).toEqual([weatherTool])
  })

  it('streams a tool call whose arguments arrive in pieces', async () => {
    const text = 'Berlin'
    const stream = await client.chat.completions.create({
      model: 'fake/gpt-test',
      messages: [{ role: 'user', content: text }],
      tools: [weatherTool],
      stream: true,
    })
    const calls: { id?: string; name?: string; arguments: string }[] = []
    const chunks: OpenAI.ChatCompletionChunk[] = []
    for await (const chunk of stream) {
      chunks.push(chunk)
      for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
        const call = (calls[delta.index] ??= { arguments: '' })
        if (delta.id) call.id = delta.id
        if (delta.function?.name) call.name = delta.function.name
        call.arguments += delta.function?.arguments ?? ''
      }
    }

    expect(calls).toHaveLength(1)
    expect(calls[0].id).toMatch(/^call_fake0/)
    expect(calls[0].name).toBe('get_weather')
    expect(JSON.parse(calls[0].arguments)).toEqual({ city: text })
    // The arguments really came in several pieces.
    expect(chunks.filter((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments).length).toBeGreaterThan(1)

    const lastWithChoice = chunks.filter((c) => c.choices.length).at(-1)!
    expect(lastWithChoice.choices[0].finish_reason).toBe('tool_calls')
    expect(chunks.at(-1)!.choices).toEqual([])
    expect(chunks.at(-1)!.usage?.completion_tokens).toBe(Math.ceil(calls[0].arguments.length / 4))
  })

  it('answers JSON matching a json_schema response format, passed upstream unchanged', async () => {
    const text = 'Ada'
    const responseFormat = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'person',
        schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'] },
      },
    }
    const sent = fake.requests.length
    const completion = await client.chat.completions.create({
      model: 'fake/gpt-test',
      messages: [{ role: 'user', content: text }],
      response_format: responseFormat,
    })

    expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ name: text, age: 42 })
    const [upstream] = upstreamChatsSince(sent)
    expect(upstream.body.response_format).toEqual(responseFormat)
  })

  it('surfaces an upstream 429 as the SDK’s RateLimitError', async () => {
    const failure = await client.chat.completions.create({ model: 'fake/rate-limited', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (error: unknown) => error,
    )

    expect(failure).toBeInstanceOf(OpenAI.RateLimitError)
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    const error = failure as InstanceType<typeof OpenAI.RateLimitError>
    expect(error.status).toBe(429)
    expect(error.message).toMatch(/Fake is rate limiting requests/)
    expect(error.headers.get('retry-after')).toBe('2')
    expect(error.error).toMatchObject({ code: 429, type: 'rate_limited', metadata: { provider_name: 'Fake', error_type: 'rate_limit_exceeded' } })

    // A stream refused before its first byte fails the same way.
    const streamed = await client.chat.completions.create({ model: 'fake/rate-limited', messages: [{ role: 'user', content: 'hi' }], stream: true }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(streamed).toBeInstanceOf(OpenAI.RateLimitError)
    expect((streamed as InstanceType<typeof OpenAI.RateLimitError>).status).toBe(429)
  })
})

describe('Vercel AI SDK (@ai-sdk/openai-compatible)', () => {
  let model: ReturnType<ReturnType<typeof createOpenAICompatible>['chatModel']>

  beforeAll(async () => {
    const { key } = await createCustomer(t.gateway, { credits: '5' })
    model = createOpenAICompatible({ name: 'gateway', baseURL: `${t.url}/api/v1`, apiKey: key }).chatModel('fake/gpt-test')
  })

  it('generateText returns the answer and the fake’s token counts', async () => {
    const text = 'How are you?'
    const sent = fake.requests.length
    const result = await generateText({ model, prompt: text, maxRetries: 0 })

    const answer = `Hello from gpt-test: ${text}`
    expect(result.text).toBe(answer)
    expect(result.finishReason).toBe('stop')
    const [upstream] = upstreamChatsSince(sent)
    expect(upstream.body.messages).toEqual([{ role: 'user', content: text }])
    expect(result.usage.inputTokens).toBe(fakePromptTokens(upstream.body))
    expect(result.usage.outputTokens).toBe(fakeCompletionTokens(answer))
    expect(result.usage.totalTokens).toBe(fakePromptTokens(upstream.body) + fakeCompletionTokens(answer))
  })

  it('streamText streams the answer', async () => {
    const text = 'Stream this please'
    const sent = fake.requests.length
    const result = streamText({ model, prompt: text, maxRetries: 0 })
    let streamed = ''
    for await (const piece of result.textStream) streamed += piece

    const answer = `Hello from gpt-test: ${text}`
    expect(streamed).toBe(answer)
    expect(await result.finishReason).toBe('stop')
    const [upstream] = upstreamChatsSince(sent)
    expect(upstream.body.stream).toBe(true)
    const usage = await result.usage
    expect(usage.inputTokens).toBe(fakePromptTokens(upstream.body))
    expect(usage.outputTokens).toBe(fakeCompletionTokens(answer))
  })

  it('generateText returns a typed tool call', async () => {
    const text = 'Lisbon'
    const result = await generateText({
      model,
      prompt: text,
      maxRetries: 0,
      tools: {
        get_weather: tool({ description: weatherTool.function.description, inputSchema: jsonSchema<{ city: string }>(weatherTool.function.parameters as any) }),
      },
    })

    expect(result.finishReason).toBe('tool-calls')
    expect(result.toolCalls).toHaveLength(1)
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: text } })
    expect(result.toolCalls[0].toolCallId).toMatch(/^call_fake0/)
  })
})
