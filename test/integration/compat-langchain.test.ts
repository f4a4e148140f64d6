/**
 * LangChain's `ChatOpenAI` (`@langchain/openai` with `@langchain/core`, pinned in package.json) unchanged against the
 * gateway over real HTTP on 127.0.0.1, only its base URL pointed at `…/api/v1`, with the fake OpenAI upstream of
 * test/fakes/openai.ts behind it: invoke, stream, bindTools, withStructuredOutput and batch. Each test checks what
 * reached the upstream, what LangChain returned and the exact cost (the gateway's usage.cost as LangChain passes it on,
 * and what the org paid).
 */
import { HumanMessage, ToolMessage, type AIMessage, type AIMessageChunk } from '@langchain/core/messages'
import { ChatOpenAI } from '@langchain/openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }

/** The exact cost: USD at the model's prices, EUR at 0.86 (rounded half-up once, to 12 digits). */
const chatCost = (promptTokens: number, completionTokens: number) => {
  const usd = BigInt(promptTokens) * units(PRICING.prompt) + BigInt(completionTokens) * units(PRICING.completion)
  return { usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) }
}
/** The fake's token counts: its prompt is the JSON of the messages it received / 4, its completion one token per word. */
const fakePromptTokens = (upstreamBody: any) => Math.ceil(JSON.stringify(upstreamBody.messages).length / 4)
const words = (text: string) => text.split(/\s+/).filter(Boolean).length

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
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: fake.url,
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
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

/** A new customer (its own org with 5 EUR) and ChatOpenAI on its key, only the base URL changed. */
async function customerWithModel(fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}) {
  const customer = await createCustomer(t.gateway, { credits: '5' })
  const model = new ChatOpenAI({ model: 'fake/gpt-test', apiKey: customer.key, maxRetries: 0, configuration: { baseURL: `${t.url}/api/v1` }, ...fields })
  const spent = async () => (await t.gateway.admin.getCredits(customer.user.org_id)).total_usage
  return { ...customer, model, spent }
}
const chatsSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')

describe('@langchain/openai ChatOpenAI', () => {
  it('invoke answers with the token usage; the org pays exactly the gateway’s cost', async () => {
    const { model, spent } = await customerWithModel({ temperature: 0.2, maxTokens: 60 })
    const sent = fake.requests.length
    const text = 'What is the capital of France?'
    const message = (await model.invoke([new HumanMessage(text)])) as AIMessage

    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({ model: 'gpt-test', messages: [{ role: 'user', content: text }], temperature: 0.2, max_tokens: 60 })
    const answer = `Hello from gpt-test: ${text}`
    expect(message.content).toBe(answer)
    const promptTokens = fakePromptTokens(upstream.body)
    expect(message.usage_metadata).toMatchObject({ input_tokens: promptTokens, output_tokens: words(answer), total_tokens: promptTokens + words(answer) })
    expect(message.response_metadata).toMatchObject({
      finish_reason: 'stop',
      model_name: 'fake/gpt-test',
      tokenUsage: { promptTokens, completionTokens: words(answer), totalTokens: promptTokens + words(answer) },
    })
    expect(message.id).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    // LangChain keeps the gateway's usage object, cost included, in response_metadata.usage.
    const cost = chatCost(promptTokens, words(answer))
    expect(message.response_metadata.usage).toMatchObject({
      prompt_tokens: promptTokens,
      completion_tokens: words(answer),
      cost: Number(cost.usd),
      cost_eur: Number(cost.eur),
      cost_currency: 'USD',
      is_byok: false,
    })
    expect(await spent()).toBe(cost.eur)
  })

  it('stream yields the answer in chunks, with the usage in the last', async () => {
    const { model, spent } = await customerWithModel()
    const sent = fake.requests.length
    const text = 'Tell me a story'
    const chunks: AIMessageChunk[] = []
    for await (const chunk of await model.stream(text)) chunks.push(chunk)

    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({ model: 'gpt-test', stream: true, stream_options: { include_usage: true } })
    const answer = `Hello from gpt-test: ${text}`
    expect(chunks.map((c) => c.content).join('')).toBe(answer)
    expect(chunks.length).toBeGreaterThan(3)
    const whole = chunks.reduce((sum, c) => sum.concat(c))
    const promptTokens = fakePromptTokens(upstream.body)
    expect(whole.usage_metadata).toMatchObject({ input_tokens: promptTokens, output_tokens: words(answer), total_tokens: promptTokens + words(answer) })
    expect(await spent()).toBe(chatCost(promptTokens, words(answer)).eur)
  })

  it('bindTools returns the tool call, and a ToolMessage gets the answer', async () => {
    const { model } = await customerWithModel()
    const withTools = model.bindTools([weatherTool])
    const first = (await withTools.invoke([new HumanMessage('Berlin')])) as AIMessage
    expect(first.tool_calls).toEqual([
      expect.objectContaining({ name: 'get_weather', args: { city: 'Berlin' }, id: expect.stringMatching(/^call_fake0/), type: 'tool_call' }),
    ])
    expect(first.response_metadata.finish_reason).toBe('tool_calls')

    const sent = fake.requests.length
    const second = (await withTools.invoke([
      new HumanMessage('Berlin'),
      first,
      new ToolMessage({ tool_call_id: first.tool_calls![0].id!, content: 'Cloudy, 12 °C' }),
    ])) as AIMessage
    expect(second.content).toBe('The tool said: Cloudy, 12 °C')
    const [upstream] = chatsSince(sent)
    expect(upstream.body.tools).toEqual([weatherTool])
    expect(upstream.body.messages.slice(1)).toEqual([
      expect.objectContaining({
        role: 'assistant',
        tool_calls: [{ id: first.tool_calls![0].id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Berlin"}' } }],
      }),
      { role: 'tool', tool_call_id: first.tool_calls![0].id, content: 'Cloudy, 12 °C' },
    ])
  })

  it('withStructuredOutput sends a json_schema response format and parses the answer', async () => {
    const { model } = await customerWithModel()
    const sent = fake.requests.length
    const schema = {
      title: 'person',
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    }
    const person = await model.withStructuredOutput<{ name: string; age: number }>(schema, { name: 'person' }).invoke('Ada')
    expect(person).toEqual({ name: 'Ada', age: 42 })
    const [upstream] = chatsSince(sent)
    expect(upstream.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'person', schema: { type: 'object', properties: schema.properties, required: ['name', 'age'] } },
    })
  })

  it('batch answers each input in its own request, each billed', async () => {
    const { model, spent } = await customerWithModel()
    const sent = fake.requests.length
    const answers = (await model.batch(['First question', 'Second question'])) as AIMessage[]
    expect(answers.map((a) => a.content)).toEqual(['Hello from gpt-test: First question', 'Hello from gpt-test: Second question'])
    const upstream = chatsSince(sent)
    expect(upstream.map((r) => r.body.messages[0].content).sort()).toEqual(['First question', 'Second question'])
    // Each request is charged on its own, rounded once: the org pays the sum of the two.
    const eur = upstream.reduce(
      (sum, r) => sum + units(chatCost(fakePromptTokens(r.body), words(`Hello from gpt-test: ${r.body.messages[0].content}`)).eur),
      0n,
    )
    expect(await spent()).toBe(decimalText(eur))
  })
})
