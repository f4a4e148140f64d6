/**
 * The official `openai` client's Responses API (`client.responses`) unchanged against the gateway over real HTTP on
 * 127.0.0.1, in front of the fake OpenAI (test/fakes/openai.ts) and the fake Anthropic Messages API
 * (test/fakes/anthropic.ts): whole and streamed answers, function-call round trips, structured output,
 * previous_response_id, exact usage and cost, and errors in OpenAI's shape (docs/responses.md).
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { anthropic } from '../../src/providers/anthropic'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { tokenCost } from '../helpers/sse'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const SONNET = 'anthropic/claude-sonnet-5.5'
const SONNET_PRICING = { prompt: '0.000002', completion: '0.00001' }
const ANTHROPIC_KEY = 'sk-ant-api03-test-key-0123456789'

/** The exact cost of a request in USD at the given prices, and in EUR at 0.86 (rounded half-up once, to 12 digits). */
const costOf = tokenCost
/** The fake OpenAI's prompt tokens: the JSON of the messages it received / 4. */
const fakePromptTokens = (body: any) => Math.ceil(JSON.stringify(body.messages).length / 4)
const words = (text: string) => text.split(/\s+/).filter(Boolean).length

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
}

let fake: FakeOpenAI
let claude: FakeAnthropic
let t: TestGateway

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY })
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: fake.url,
        apiKey: 'sk-upstream',
        models: [
          { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: PRICING, maxCompletionTokens: 1000 },
          { id: 'fake/broken', upstreamId: 'fail-500', pricing: PRICING, maxCompletionTokens: 1000 },
        ],
      }),
      anthropic({ apiKey: ANTHROPIC_KEY, baseURL: claude.url, models: anthropicModels }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
  await claude?.close()
})

/** A new customer (its own org with 5 EUR) and the openai client on its key. */
async function customerWithClient(credits = '5') {
  const customer = await createCustomer(t.gateway, { credits })
  return { ...customer, client: openaiClient(t.url, customer.key) }
}
const chatsSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')
const messagesSince = (from: number) => claude.requests.slice(from).filter((r) => r.path === '/v1/messages')
const spent = async (orgId: string) => (await t.gateway.admin.getCredits(orgId)).total_usage

describe('openai SDK: client.responses on an OpenAI-compatible model', () => {
  it('create answers a whole Response with the exact usage and cost; the org pays exactly the cost × 0.86', async () => {
    const { client, user, auth } = await customerWithClient()
    const sent = fake.requests.length
    const { data: response, response: raw } = await client.responses
      .create({ model: 'fake/gpt-test', input: 'What is the capital of France?', instructions: 'Be brief.', max_output_tokens: 100, temperature: 0.5 })
      .withResponse()

    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] },
      ],
      max_tokens: 100,
      temperature: 0.5,
    })
    const answer = 'Hello from gpt-test: What is the capital of France?'
    expect(response.id).toMatch(/^resp_[0-9a-f]{44}$/)
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'fake/gpt-test', instructions: 'Be brief.', store: true, error: null })
    expect(response.output_text).toBe(answer)
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(new RegExp(`^msg_${response.id.slice(5)}[0-9a-f]{8}$`)),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: answer, annotations: [] }],
      },
    ])
    const input = fakePromptTokens(upstream.body)
    const cost = costOf(PRICING, input, words(answer))
    expect(response.usage).toEqual({
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: words(answer),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + words(answer),
      cost: Number(cost.usd),
      cost_currency: 'USD',
      cost_eur: Number(cost.eur),
      is_byok: false,
      cost_details: expect.any(Object),
    })
    expect(await spent(user.org_id)).toBe(cost.eur)

    // The usage record behind /generation is chat's, with the same cost.
    const generationId = raw.headers.get('x-generation-id')!
    expect(generationId).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    const generation = (await (await t.request(`/api/v1/generation?id=${generationId}`, { headers: auth })).json()) as any
    expect(generation.data).toMatchObject({ model: 'fake/gpt-test', tokens_prompt: input, tokens_completion: words(answer), total_cost: Number(cost.usd) })
  })

  it('create with stream: true yields the Responses events in order, text deltas joining the answer, usage in response.completed', async () => {
    const { client, user } = await customerWithClient()
    const sent = fake.requests.length
    const stream = await client.responses.create({ model: 'fake/gpt-test', input: 'Tell me a story', stream: true })
    const events: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const event of stream) events.push(event)

    const answer = 'Hello from gpt-test: Tell me a story'
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      // One delta a word, as the fake streams them.
      ...Array(words(answer)).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    const deltas = events.filter((e) => e.type === 'response.output_text.delta') as OpenAI.Responses.ResponseTextDeltaEvent[]
    expect(deltas.map((d) => d.delta).join('')).toBe(answer)
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect(completed.response.output).toEqual([
      { id: deltas[0].item_id, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: answer, annotations: [] }] },
    ])
    const input = fakePromptTokens(chatsSince(sent)[0].body)
    const cost = costOf(PRICING, input, words(answer))
    expect(completed.response.usage).toMatchObject({
      input_tokens: input,
      output_tokens: words(answer),
      total_tokens: input + words(answer),
      cost: Number(cost.usd),
    })
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('responses.stream() gives the final Response, as streamed', async () => {
    const { client } = await customerWithClient()
    const texts: string[] = []
    const stream = client.responses.stream({ model: 'fake/gpt-test', input: 'Stream me' })
    stream.on('response.output_text.delta', (event) => texts.push(event.delta))
    const final = await stream.finalResponse()
    expect(texts.join('')).toBe('Hello from gpt-test: Stream me')
    expect(final.output_text).toBe('Hello from gpt-test: Stream me')
    expect(final.status).toBe('completed')
  })

  it('a function call round trip: function_call, then its function_call_output with previous_response_id, then the answer', async () => {
    const { client } = await customerWithClient()
    const first = await client.responses.create({ model: 'fake/gpt-test', input: 'Paris', tools: [weatherTool] })
    expect(first.output).toEqual([
      {
        // An item's id carries its response's: fc_, the response id's 44 hex digits, 8 random ones.
        id: expect.stringMatching(new RegExp(`^fc_${first.id.slice(5)}[0-9a-f]{8}$`)),
        type: 'function_call',
        call_id: expect.stringMatching(/^call_fake0/),
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ])
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall

    const sent = fake.requests.length
    const second = await client.responses.create({
      model: 'fake/gpt-test',
      previous_response_id: first.id,
      tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 °C' }],
    })
    expect(second.output_text).toBe('The tool said: Sunny, 24 °C')
    expect(second.previous_response_id).toBe(first.id)
    const [upstream] = chatsSince(sent)
    expect(upstream.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Paris' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: call.call_id, content: 'Sunny, 24 °C' },
    ])
    expect(upstream.body.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.parameters, strict: true } },
    ])
  })

  it('the same round trip streamed: function_call events with argument deltas', async () => {
    const { client } = await customerWithClient()
    const stream = await client.responses.create({ model: 'fake/gpt-test', input: 'Lyon', tools: [weatherTool], stream: true })
    const events: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const event of stream) events.push(event)
    const types = events.map((e) => e.type)
    // {"city":"Lyon"} comes in pieces of 5 characters: 3 deltas.
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    const done = events.find((e) => e.type === 'response.function_call_arguments.done') as OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent
    expect(done).toMatchObject({ name: 'get_weather', arguments: '{"city":"Lyon"}', output_index: 0 })
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    const call = completed.response.output[0] as OpenAI.Responses.ResponseFunctionToolCall
    const answer = await client.responses.create({
      model: 'fake/gpt-test',
      previous_response_id: completed.response.id,
      tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Rain' }],
    })
    expect(answer.output_text).toBe('The tool said: Rain')
  })

  it('structured output: text.format json_schema becomes chat’s response_format, and the answer is the JSON', async () => {
    const { client } = await customerWithClient()
    const sent = fake.requests.length
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    }
    const response = await client.responses.create({
      model: 'fake/gpt-test',
      input: 'Ada',
      text: { format: { type: 'json_schema', name: 'person', schema, strict: true } },
    })
    expect(JSON.parse(response.output_text)).toEqual({ name: 'Ada', age: 42 })
    expect(response.text).toEqual({ format: { type: 'json_schema', name: 'person', schema, strict: true } })
    expect(chatsSince(sent)[0].body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'person', schema, strict: true } })
  })

  it('previous_response_id prepends the stored conversation: input, then output', async () => {
    const { client } = await customerWithClient()
    const first = await client.responses.create({ model: 'fake/gpt-test', input: 'My name is Ada' })
    const sent = fake.requests.length
    const second = await client.responses.create({ model: 'fake/gpt-test', input: 'What is my name?', previous_response_id: first.id })
    expect(chatsSince(sent)[0].body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'My name is Ada' }] },
      { role: 'assistant', content: 'Hello from gpt-test: My name is Ada' },
      { role: 'user', content: [{ type: 'text', text: 'What is my name?' }] },
    ])
    expect(second.previous_response_id).toBe(first.id)
    // retrieve reads it back as it was answered.
    expect(await client.responses.retrieve(second.id)).toEqual(second)
  })

  it('a fallback: a model whose provider fails is replaced by the next of `models`, and the response names the model that served', async () => {
    const { client, user } = await customerWithClient()
    const sent = fake.requests.length
    const response = await client.responses.create({ model: 'fake/broken', models: ['fake/gpt-test'], input: 'Fall back' } as any)
    expect(response.model).toBe('fake/gpt-test')
    expect(response.output_text).toBe('Hello from gpt-test: Fall back')
    const chats = chatsSince(sent)
    expect(chats.map((c) => c.body.model)).toEqual([...chats.slice(0, -1).map(() => 'fail-500'), 'gpt-test'])
    const cost = costOf(PRICING, fakePromptTokens(chats.at(-1)!.body), words('Hello from gpt-test: Fall back'))
    expect(await spent(user.org_id)).toBe(cost.eur)
  })
})

describe('openai SDK: client.responses on an Anthropic model', () => {
  it('create answers whole; Claude’s thinking is a reasoning item whose signed block rides in encrypted_content', async () => {
    const { client, user } = await customerWithClient()
    const sent = claude.requests.length
    const response = await client.responses.create({
      model: SONNET,
      input: 'Paris',
      reasoning: { effort: 'low' },
      include: ['reasoning.encrypted_content'],
    })
    const thought = 'The user asked about Paris; I should answer plainly.'
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^rs_/),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: thought }],
        encrypted_content: expect.stringMatching(/^gw1\./),
      },
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello from claude-sonnet-5-5: Paris', annotations: [] }],
      },
    ])
    const [upstream] = messagesSince(sent)
    expect(upstream.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Paris' }] }])
    const usage = response.usage!
    expect(usage.output_tokens_details.reasoning_tokens).toBe(words(thought))
    const cost = costOf(SONNET_PRICING, usage.input_tokens, usage.output_tokens)
    expect((usage as any).cost).toBe(Number(cost.usd))
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('a function call round trip streamed then whole: the thinking block goes back signed with the tool call', async () => {
    const { client } = await customerWithClient()
    const stream = await client.responses.create({ model: SONNET, input: 'Paris', tools: [weatherTool], stream: true })
    const events: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const event of stream) events.push(event)
    // Sonnet 5.5 thinks by default with its thinking omitted: a reasoning item without summary, then the call.
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    const [reasoning, call] = completed.response.output as [OpenAI.Responses.ResponseReasoningItem, OpenAI.Responses.ResponseFunctionToolCall]
    expect(reasoning).toEqual({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [] })
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', call_id: expect.stringMatching(/^toolu_/) })

    const sent = claude.requests.length
    const answer = await client.responses.create({
      model: SONNET,
      previous_response_id: completed.response.id,
      tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 °C' }],
    })
    expect(answer.output.at(-1)).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'The tools said: Sunny, 24 °C' }] })
    const [upstream] = messagesSince(sent)
    expect(upstream.body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: '', signature: expect.stringMatching(/^fakesig_/) },
        { type: 'tool_use', id: call.call_id, name: 'get_weather', input: { city: 'Paris' } },
      ],
    })
    expect(upstream.body.messages[2]).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id, content: 'Sunny, 24 °C' }] })
  })

  it('structured output on Claude: the json_schema format reaches Anthropic as its output format', async () => {
    const { client } = await customerWithClient()
    const sent = claude.requests.length
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }
    const response = await client.responses.create({
      model: 'anthropic/claude-haiku-4.5',
      input: 'Rome',
      text: { format: { type: 'json_schema', name: 'place', schema, strict: true } },
    })
    expect(JSON.parse(response.output_text)).toEqual({ city: 'Rome' })
    expect(messagesSince(sent)[0].body.output_config.format).toMatchObject({ type: 'json_schema', schema })
  })
})

/** Paging params with `before`: OpenAI's API reference has the cursor, the SDK's type only `after`. */
const withBefore = (query: { before: string; after?: string; limit?: number }) => query as OpenAI.Responses.InputItemListParams

describe('openai SDK: client.responses.inputItems.list', () => {
  /** A stored conversation of two turns: 4 input items, the answer, then one more input item. */
  async function twoTurns(client: OpenAI) {
    const first = await client.responses.create({
      model: 'fake/gpt-test',
      input: [
        { role: 'developer', content: 'Use metric units.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
        { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'Sunny' },
      ],
      tools: [weatherTool],
    })
    const second = await client.responses.create({ model: 'fake/gpt-test', input: 'Thanks!', previous_response_id: first.id })
    return { first, second }
  }

  it('lists the input items, newest first by default, each with an id that names its response; order asc reverses it', async () => {
    const { client } = await customerWithClient()
    const { first, second } = await twoTurns(client)
    const hex = (response: { id: string }) => response.id.slice(5)
    const asc = [
      { id: `msg_${hex(first)}000000`, type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Use metric units.' }] },
      { id: `msg_${hex(first)}000001`, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
      { id: `fc_${hex(first)}000002`, type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: `fco_${hex(first)}000003`, type: 'function_call_output', call_id: 'call_a', output: 'Sunny' },
      first.output[0],
      { id: `msg_${hex(second)}000005`, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks!' }] },
    ]
    expect(first.output).toEqual([
      {
        id: expect.stringMatching(new RegExp(`^msg_${hex(first)}[0-9a-f]{8}$`)),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'The tool said: Sunny', annotations: [] }],
      },
    ])

    const page = await client.responses.inputItems.list(second.id)
    expect(page.data).toEqual([...asc].reverse())
    expect(page.has_more).toBe(false)
    const { data: body } = await client.responses.inputItems.list(second.id, { order: 'asc' }).withResponse()
    expect(body.data).toEqual(asc)
    expect(body.has_more).toBe(false)
    // The raw list: OpenAI's shape, first_id and last_id.
    const raw = await client.get(`/responses/${second.id}/input_items`, { query: { order: 'asc', limit: 2 } })
    expect(raw).toEqual({ object: 'list', data: asc.slice(0, 2), first_id: asc[0].id, last_id: asc[1].id, has_more: true })
    // The first response's own input items keep the same ids.
    expect((await client.responses.inputItems.list(first.id, { order: 'asc' })).data).toEqual(asc.slice(0, 4))
  })

  it('pages with limit, after and before; the SDK’s iterator walks every page', async () => {
    const { client } = await customerWithClient()
    const { second } = await twoTurns(client)
    const desc = (await client.responses.inputItems.list(second.id, { limit: 100 })).data
    expect(desc).toHaveLength(6)
    const ids = desc.map((item) => item.id)

    const page = await client.responses.inputItems.list(second.id, { limit: 4 })
    expect(page.data.map((item) => item.id)).toEqual(ids.slice(0, 4))
    expect(page.has_more).toBe(true)
    expect(page.hasNextPage()).toBe(true)
    const next = await page.getNextPage()
    expect(next.data.map((item) => item.id)).toEqual(ids.slice(4))
    expect(next.has_more).toBe(false)

    const walked: string[] = []
    for await (const item of client.responses.inputItems.list(second.id, { limit: 2 })) walked.push(item.id)
    expect(walked).toEqual(ids)
    const ascending: string[] = []
    for await (const item of client.responses.inputItems.list(second.id, { order: 'asc', limit: 4 })) ascending.push(item.id)
    expect(ascending).toEqual([...ids].reverse())

    expect((await client.responses.inputItems.list(second.id, { after: ids[1], limit: 3 })).data.map((i) => i.id)).toEqual(ids.slice(2, 5))
    const before = await client.responses.inputItems.list(second.id, withBefore({ before: ids[4], limit: 2 }))
    expect(before.data.map((i) => i.id)).toEqual(ids.slice(2, 4))
    expect(before.has_more).toBe(true)
    const between = await client.responses.inputItems.list(second.id, withBefore({ after: ids[0], before: ids[3] }))
    expect(between.data.map((i) => i.id)).toEqual(ids.slice(1, 3))
    expect(between.has_more).toBe(false)
    const end = await client.responses.inputItems.list(second.id, { after: ids[5] })
    expect(end.data).toEqual([])
    expect(end.has_more).toBe(false)
  })

  it('an unknown id and another org’s are the same 404; a bad limit, order or cursor is a 400, all in OpenAI’s shape', async () => {
    const { client } = await customerWithClient()
    const other = await customerWithClient()
    const theirs = await other.client.responses.create({ model: 'fake/gpt-test', input: 'Secret' })
    const unknown = 'resp_0000000000000000000000000000000000000000000b'
    for (const id of [unknown, theirs.id]) {
      const error = await client.responses.inputItems.list(id).catch((e) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error.error).toEqual({ message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: 'not_found' })
    }
    const mine = await client.responses.create({ model: 'fake/gpt-test', input: 'Mine' })
    const cases: [Record<string, unknown>, string][] = [
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ order: 'sideways' }, 'order'],
      [{ after: 'msg_nope' }, 'after'],
      [{ before: 'msg_nope' }, 'before'],
    ]
    for (const [query, param] of cases) {
      const error = await client.responses.inputItems.list(mine.id, query as never).catch((e) => e)
      expect(error, JSON.stringify(query)).toBeInstanceOf(OpenAI.BadRequestError)
      expect(error.error, JSON.stringify(query)).toMatchObject({ type: 'invalid_request_error', param, code: 'invalid_request' })
    }
  })
})

describe('openai SDK: item_reference input items', () => {
  it('a function call round trip that references the stored call (and the user’s message) instead of resending them', async () => {
    const { client } = await customerWithClient()
    const first = await client.responses.create({ model: 'fake/gpt-test', input: 'Paris', tools: [weatherTool] })
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall
    expect(call.type).toBe('function_call')
    const [question] = (await client.responses.inputItems.list(first.id)).data

    const sent = fake.requests.length
    const second = await client.responses.create({
      model: 'fake/gpt-test',
      tools: [weatherTool],
      input: [
        { type: 'item_reference', id: question.id },
        { type: 'item_reference', id: call.id! },
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 °C' },
      ],
    })
    expect(second.output_text).toBe('The tool said: Sunny, 24 °C')
    expect(second.previous_response_id).toBeNull()
    const [upstream] = chatsSince(sent)
    expect(upstream.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Paris' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: call.call_id, content: 'Sunny, 24 °C' },
    ])
    // Stored resolved: the referenced items under their own ids, the output given one of the second response.
    expect((await client.responses.inputItems.list(second.id, { order: 'asc' })).data).toEqual([
      question,
      call,
      { id: `fco_${second.id.slice(5)}000002`, type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 °C' },
    ])
  })

  it('with previous_response_id, a reference may name an item the client sent with its own id', async () => {
    const { client } = await customerWithClient()
    const first = await client.responses.create({
      model: 'fake/gpt-test',
      // A message as inputItems.list gives it back, with its id (the SDK's input type has none).
      input: [{ type: 'message', id: 'msg_client_1', role: 'user', content: 'Remember Ada' } as OpenAI.Responses.ResponseInputItem],
    })
    const sent = fake.requests.length
    await client.responses.create({
      model: 'fake/gpt-test',
      previous_response_id: first.id,
      input: [{ type: 'item_reference', id: 'msg_client_1' }],
    })
    expect(chatsSince(sent)[0].body.messages).toEqual([
      { role: 'user', content: 'Remember Ada' },
      { role: 'assistant', content: 'Hello from gpt-test: Remember Ada' },
      { role: 'user', content: 'Remember Ada' },
    ])
  })

  it('an unknown item, another org’s, or one of a deleted response is a 400 naming the input index; no provider is called', async () => {
    const { client } = await customerWithClient()
    const other = await customerWithClient()
    const theirs = await other.client.responses.create({ model: 'fake/gpt-test', input: 'Paris', tools: [weatherTool] })
    const gone = await client.responses.create({ model: 'fake/gpt-test', input: 'Paris', tools: [weatherTool] })
    await client.responses.delete(gone.id)
    const sent = fake.requests.length
    for (const id of ['fc_unknown', theirs.output[0].id!, gone.output[0].id!, `msg_${gone.id.slice(5)}000000`]) {
      const error = await client.responses
        .create({
          model: 'fake/gpt-test',
          input: [
            { role: 'user', content: 'Hi' },
            { type: 'item_reference', id },
          ],
        })
        .catch((e) => e)
      expect(error, id).toBeInstanceOf(OpenAI.BadRequestError)
      expect(error.error, id).toEqual({
        message: `input.1: item '${id}' not found: an item_reference must name an input or output item of a stored response of this organization`,
        type: 'invalid_request_error',
        param: 'input.1.id',
        code: 'invalid_request',
      })
    }
    expect(fake.requests.length).toBe(sent)
  })
})

describe('openai SDK: errors in OpenAI’s shape', () => {
  it('a built-in tool is a 400 naming its type', async () => {
    const { client } = await customerWithClient()
    const sent = fake.requests.length
    const error = await client.responses.create({ model: 'fake/gpt-test', input: 'Search', tools: [{ type: 'web_search' }] }).catch((e) => e)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(error.error).toEqual({
      message:
        'tools.0.type: "web_search" is a built-in tool of OpenAI\'s that this gateway cannot run; only function tools ({ type: "function" }, also grouped in a { type: "namespace" }) are served',
      type: 'invalid_request_error',
      param: 'tools.0.type',
      code: 'invalid_request',
    })
    expect(fake.requests.length).toBe(sent)
  })

  it('a bad key is a 401', async () => {
    const client = openaiClient(t.url, 'sk-service-v1-not-a-key')
    const error = await client.responses.create({ model: 'fake/gpt-test', input: 'Hi' }).catch((e) => e)
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
    expect(error.error).toEqual({
      message: 'Invalid API key: unknown, revoked, disabled or expired',
      type: 'authentication_error',
      param: null,
      code: 'unauthorized',
    })
  })

  it('credits that cannot cover the hold are a 402 with the gateway’s metadata', async () => {
    const { client } = await customerWithClient('0.000000001')
    const error = await client.responses.create({ model: 'fake/gpt-test', input: 'Hi' }).catch((e) => e)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error.status).toBe(402)
    expect(error.error).toMatchObject({ type: 'insufficient_quota', param: null, code: 'insufficient_credits', metadata: expect.any(Object) })
  })

  it('an unknown previous_response_id, and another org’s, are the same 404', async () => {
    const { client } = await customerWithClient()
    const other = await customerWithClient()
    const theirs = await other.client.responses.create({ model: 'fake/gpt-test', input: 'Secret' })
    const unknown = 'resp_0000000000000000000000000000000000000000000a'
    for (const id of [unknown, theirs.id]) {
      const error = await client.responses.create({ model: 'fake/gpt-test', input: 'Hi', previous_response_id: id }).catch((e) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error.error).toEqual({
        message: `Response with id '${id}' not found.`,
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'not_found',
      })
      const read = await client.responses.retrieve(id).catch((e) => e)
      expect(read).toBeInstanceOf(OpenAI.NotFoundError)
    }
  })
})
