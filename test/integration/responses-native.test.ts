/**
 * POST /api/v1/responses served natively by OpenAI (docs/native.md#responses): the `openai` SDK's `client.responses`
 * against the gateway over real HTTP on 127.0.0.1, in front of the fake OpenAI's own Responses API
 * (test/fakes/openai-responses.ts). What reached the upstream (its `/v1/responses`, the conversation as input, no
 * previous_response_id, store false), the events compared with the fake's own, the gateway's ids, the exact cost
 * charged, stored responses, a stream failing after it began, a client leaving, and a fallback to a provider without
 * the Responses API (translated).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openai } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { ProviderModel } from '../../src/contracts'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { tokenCost } from '../helpers/sse'

const CUSTOMER_OPENAI_KEY = 'sk-cust-native-1111'
const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const model = (id: string, upstreamId: string, extra: Partial<ProviderModel> = {}): ProviderModel => ({
  id,
  upstreamId,
  pricing: PRICING,
  maxCompletionTokens: 1000,
  supportedParameters: ['tools', 'tool_choice', 'response_format', 'structured_outputs', 'max_tokens'],
  ...extra,
})
const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
}

/** The exact cost in USD at PRICING, and in EUR at 0.86 (rounded half-up once, to 12 digits). */
const costOf = (input: number, output: number) => tokenCost(PRICING, input, output)

let fake: FakeOpenAI
let t: TestGateway

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: ['sk-upstream', CUSTOMER_OPENAI_KEY] })
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    retry: { maxRetries: 0 },
    abortedStreamUsageWaitMs: 0,
    providers: [
      openai({
        apiKey: 'sk-upstream',
        baseURL: fake.url,
        models: [
          model('openai/gpt-test', 'gpt-test'),
          model('openai/o-test', 'o-test-reasoning', {
            reasoning: { efforts: ['low', 'medium', 'high'] },
            supportedParameters: ['tools', 'tool_choice', 'max_tokens', 'reasoning'],
          }),
          model('openai/midstream', 'fail-midstream'),
          model('openai/slow', 'slow'),
          model('openai/broken', 'fail-500'),
        ],
      }),
      // An OpenAI-compatible host without the Responses API: requests routed to it are translated to chat.
      openaiCompatible({ slug: 'compat', name: 'Compat', baseURL: fake.url, apiKey: 'sk-upstream', models: [model('compat/gpt-test', 'gpt-test')] }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

async function customerWithClient(credits = '5') {
  const customer = await createCustomer(t.gateway, { credits })
  return { ...customer, client: openaiClient(t.url, customer.key) }
}
const since = (from: number, path: string) => fake.requests.slice(from).filter((r) => r.path === path)
const spent = async (orgId: string) => (await t.gateway.admin.getCredits(orgId)).total_usage
const OURS = /^resp_[0-9a-f]{44}$/

/** The fake's own events for a body, called directly (what the gateway must pass on). */
async function directEvents(body: Record<string, unknown>): Promise<any[]> {
  const res = await fetch(`${fake.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream' },
    body: JSON.stringify({ ...body, stream: true }),
  })
  return parseEvents(await res.text())
}
function parseEvents(text: string): any[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n')
      const data = JSON.parse(dataLine.slice('data: '.length))
      expect(eventLine).toBe(`event: ${data.type}`)
      return data
    })
}

describe('openai SDK: client.responses on an OpenAI model, natively', () => {
  it('create goes to OpenAI’s /responses unchanged but for the model, store false; the answer under the gateway’s ids, with the exact cost', async () => {
    const { client, user, auth } = await customerWithClient()
    const from = fake.requests.length
    const params = {
      model: 'openai/gpt-test',
      input: 'What is the capital of France?',
      instructions: 'Be brief.',
      max_output_tokens: 100,
      temperature: 0.5,
      metadata: { team: 'a' },
    }
    const { data: response, response: raw } = await client.responses.create(params).withResponse()
    const [upstream] = since(from, '/v1/responses')
    expect(since(from, '/v1/chat/completions')).toEqual([])
    expect(upstream.body).toEqual({
      ...params,
      model: 'gpt-test',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is the capital of France?' }] }],
      store: false,
      stream: false,
    })
    const answer = 'Hello from gpt-test: What is the capital of France?'
    expect(response.id).toMatch(OURS)
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'openai/gpt-test', store: true, previous_response_id: null })
    expect((response as any).provider).toBe('OpenAI')
    expect(response.output_text).toBe(answer)
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(new RegExp(`^msg_${response.id.slice(5)}[0-9a-f]{8}$`)),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: answer, annotations: [], logprobs: [] }],
      },
    ])
    // The fake's usage: 1 + the words of the instructions and the input; one token per word of the answer.
    const input = 1 + 2 + 6
    const cost = costOf(input, 9)
    expect(response.usage).toMatchObject({ input_tokens: input, output_tokens: 9, total_tokens: input + 9, cost: Number(cost.usd), is_byok: false })
    expect(await spent(user.org_id)).toBe(cost.eur)
    const id = raw.headers.get('x-generation-id')
    const generation = await (await t.request(`/api/v1/generation?id=${id}`, { headers: auth })).json()
    expect(generation.data).toMatchObject({
      model: 'openai/gpt-test',
      provider_name: 'OpenAI',
      tokens_prompt: input,
      tokens_completion: 9,
      total_cost: Number(cost.usd),
    })
    expect(generation.data.upstream_id).toMatch(/^resp_fake\d+$/)
    // Stored under the gateway's id, retrievable as it was answered.
    expect(await client.responses.retrieve(response.id)).toEqual(response)
  })

  it('streamed: OpenAI’s events exactly as the fake sends them, renamed to the gateway’s ids, the cost in response.completed', async () => {
    const { client, user } = await customerWithClient()
    const body = { model: 'gpt-test-reasoning', input: 'Hi there', reasoning: { effort: 'low' as const, summary: 'auto' as const } }
    const expected = await directEvents(body)
    const res = await t.request('/api/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${(await createCustomer(t.gateway, { credits: '5' })).key}` },
      body: JSON.stringify({ ...body, model: 'openai/o-test', stream: true }),
    })
    expect(res.status).toBe(200)
    const got = parseEvents(await res.text())
    expect(got.map((e) => e.type)).toEqual(expected.map((e) => e.type))
    expect(got.map((e) => e.sequence_number)).toEqual(got.map((_, i) => i))
    const responseId = got[0].response.id
    expect(responseId).toMatch(OURS)
    // Every id of OpenAI's is replaced, the same one by the same id of ours.
    const text = JSON.stringify(got)
    expect(text).not.toMatch(/resp_fake|"(rs|msg)_\d+"/)
    const itemIds = [...new Set(got.flatMap((e) => [e.item_id, e.item?.id]).filter(Boolean))]
    expect(itemIds).toHaveLength(2)
    for (const itemId of itemIds) expect(itemId).toMatch(new RegExp(`^(rs|msg)_${responseId.slice(5)}[0-9a-f]{8}$`))
    const completed = got.at(-1)
    expect(completed.type).toBe('response.completed')
    const { cost, cost_currency, cost_eur, is_byok, cost_details, ...usage } = completed.response.usage
    expect(usage).toEqual({ ...expected.at(-1).response.usage })
    expect(cost).toBe(Number(costOf(usage.input_tokens, usage.output_tokens).usd))
    expect(completed.response.output.map((item: any) => item.type)).toEqual(['reasoning', 'message'])

    // And through the SDK's stream helper: the final response is the stored one.
    const stream = client.responses.stream({ model: 'openai/gpt-test', input: 'Tell me a story' })
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    const final = await stream.finalResponse()
    expect(types[0]).toBe('response.created')
    expect(types.at(-1)).toBe('response.completed')
    expect(final.output_text).toBe('Hello from gpt-test: Tell me a story')
    const stored = await client.responses.retrieve(final.id)
    expect(stored).toMatchObject({ id: final.id, status: 'completed', usage: final.usage })
    expect(stored.output_text).toBe(final.output_text)
    expect(stored.output.map((item) => item.id)).toEqual(final.output.map((item) => item.id))
    expect(await spent(user.org_id)).toBe(costOf(final.usage!.input_tokens, final.usage!.output_tokens).eur)
  })

  it('a function call round trip with previous_response_id: OpenAI receives the whole conversation, without the gateway’s ids', async () => {
    const { client } = await customerWithClient()
    const first = await client.responses.create({ model: 'openai/gpt-test', input: 'Weather in Paris?', tools: [weatherTool] })
    const call = first.output.find((item) => item.type === 'function_call')!
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', call_id: expect.stringMatching(/^call_/) })
    expect(call.id).toMatch(new RegExp(`^fc_${first.id.slice(5)}`))
    const from = fake.requests.length
    const second = await client.responses.create({
      model: 'openai/gpt-test',
      previous_response_id: first.id,
      tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 °C' }],
    })
    expect(second.output_text).toBe('The tool said: Sunny, 24 °C')
    expect(second.previous_response_id).toBe(first.id)
    const [upstream] = since(from, '/v1/responses')
    expect(upstream.body.previous_response_id).toBeUndefined()
    expect(upstream.body.store).toBe(false)
    expect(upstream.body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
      { type: 'function_call', call_id: call.call_id, name: 'get_weather', arguments: (call as any).arguments, status: 'completed' },
      { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 °C' },
    ])
  })

  it('structured output: text.format reaches OpenAI as it was sent, and the answer parses', async () => {
    const { client } = await customerWithClient()
    const from = fake.requests.length
    const format = {
      type: 'json_schema' as const,
      name: 'city',
      strict: true,
      schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
    }
    const response = await client.responses.create({ model: 'openai/gpt-test', input: 'A city', text: { format } })
    expect(since(from, '/v1/responses')[0].body.text).toEqual({ format })
    expect(Object.keys(JSON.parse(response.output_text))).toEqual(['name'])
  })

  it('a stream that fails after it began ends with response.failed in OpenAI’s shape, billed for what was streamed', async () => {
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const res = await t.request('/api/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${customer.key}` },
      body: JSON.stringify({ model: 'openai/midstream', input: 'one two three four', stream: true }),
    })
    const got = parseEvents(await res.text())
    expect(got.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.failed',
    ])
    expect(got.at(-1).sequence_number).toBe(6)
    expect(got.at(-1).response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: expect.stringContaining('OpenAI') } })
    const generation = await (
      await t.request(`/api/v1/generation?id=${res.headers.get('x-generation-id')}`, { headers: { authorization: `Bearer ${customer.key}` } })
    ).json()
    // Billed for the two words streamed (estimated: the provider reported no usage before it failed).
    expect(generation.data).toMatchObject({ finish_reason: 'error', model: 'openai/midstream', provider_name: 'OpenAI' })
    const streamed = got.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)
    expect(generation.data.native_tokens_completion).toBe(Math.ceil(streamed.join('').length / 4))
    expect(Number(generation.data.total_cost)).toBeGreaterThan(0)
  })

  it('a client that leaves a native stream: the provider is stopped, the hold released, what was streamed billed once', async () => {
    fake.slowMs = 150
    const customer = await createCustomer(t.gateway, { credits: '5' })
    const abort = new AbortController()
    const res = await t.request('/api/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${customer.key}` },
      body: JSON.stringify({ model: 'openai/slow', input: 'one two three four five six', stream: true }),
      signal: abort.signal,
    })
    const reader = res.body!.getReader()
    let seen = ''
    while (!seen.includes('response.output_text.delta')) seen += new TextDecoder().decode((await reader.read()).value)
    abort.abort()
    await reader.cancel().catch(() => undefined)
    const id = res.headers.get('x-generation-id')
    let generation: any
    for (let i = 0; i < 50 && !generation?.data; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      generation = await (await t.request(`/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${customer.key}` } })).json()
    }
    expect(generation.data).toMatchObject({ cancelled: true, model: 'openai/slow' })
    const credits = await t.gateway.admin.getCredits(customer.user.org_id)
    expect(credits.total_usage).toBe(String(generation.data.total_cost_eur ?? credits.total_usage))
    expect(Number(credits.total_usage)).toBeGreaterThan(0)
    expect(Number(credits.total_usage)).toBeLessThan(0.001)
    fake.slowMs = 0
  })

  it('BYOK: the customer’s own OpenAI key calls OpenAI’s /responses; the usage record says so', async () => {
    const { client, auth } = await customerWithClient()
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'openai', key: CUSTOMER_OPENAI_KEY, always_use: true }),
    })
    expect(created.status).toBe(201)
    const from = fake.requests.length
    const { data: response, response: raw } = await client.responses.create({ model: 'openai/gpt-test', input: 'Mine' }).withResponse()
    const [upstream] = since(from, '/v1/responses')
    expect(upstream.headers.authorization).toBe(`Bearer ${CUSTOMER_OPENAI_KEY}`)
    expect(response.usage).toMatchObject({ is_byok: true })
    const generation = await (await t.request(`/api/v1/generation?id=${raw.headers.get('x-generation-id')}`, { headers: auth })).json()
    expect(generation.data).toMatchObject({ is_byok: true, model: 'openai/gpt-test', provider_name: 'OpenAI' })
  })

  it('a fallback to a provider without the Responses API serves the whole request through the chat translation', async () => {
    const { client } = await customerWithClient()
    const from = fake.requests.length
    const response = await client.responses.create({ model: 'openai/broken', models: ['openai/broken', 'compat/gpt-test'], input: 'Hello' } as any)
    expect(response.model).toBe('compat/gpt-test')
    expect(response.output_text).toBe('Hello from gpt-test: Hello')
    expect(since(from, '/v1/responses')).toEqual([])
    expect(since(from, '/v1/chat/completions').map((r) => r.body.model)).toEqual(['fail-500', 'gpt-test'])
  })
})
