/**
 * POST /api/v1/messages over raw HTTP (docs/messages.md): the exact event sequence of Anthropic's streaming format,
 * event by event, a failure mid-stream as an `error` event, and the errors in Anthropic's shape. Behind the gateway,
 * the fake Anthropic API of test/fakes/anthropic.ts: natively (docs/native.md: Anthropic's own events passed on,
 * compared with what the fake answers when called directly), and through the chat translation (the same provider
 * without its native API).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { anthropic } from '../../src/providers/anthropic'
import type { ProviderModel } from '../../src/contracts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { withoutNative } from '../helpers/providers'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const KEY = 'sk-ant-api03-test-key-0123456789'
const HAIKU = anthropicModels.find((m) => m.id === 'anthropic/claude-haiku-4.5')!
const SONNET = anthropicModels.find((m) => m.id === 'anthropic/claude-sonnet-5.5')!
const MIDSTREAM: ProviderModel = { ...HAIKU, id: 'anthropic/claude-midstream-error', upstreamId: 'claude-midstream-error', reasoning: undefined }
const weather = { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }

let fake: FakeAnthropic
/** The gateway whose Anthropic provider has no native API: /messages is served through the chat translation. */
let t: TestGateway
/** The gateway with the Anthropic provider as it is: /messages passed on natively. */
let native: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>
let nativeCustomer: Awaited<ReturnType<typeof createCustomer>>

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: KEY })
  const provider = () => anthropic({ apiKey: KEY, baseURL: fake.url, models: [HAIKU, SONNET, MIDSTREAM] })
  t = await startGateway({ providers: [withoutNative(provider())], retry: { maxRetries: 0 } })
  native = await startGateway({ providers: [provider()], retry: { maxRetries: 0 } })
  customer = await createCustomer(t.gateway, { credits: '5' })
  nativeCustomer = await createCustomer(native.gateway, { credits: '5' })
})

afterAll(async () => {
  await t?.close()
  await native?.close()
  await fake?.close()
})

const post = (body: unknown, headers: Record<string, string> = { 'x-api-key': customer.key }, path = '/api/v1/messages', on = t) =>
  on.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14', ...headers },
    body: JSON.stringify(body),
  })

/** The events of an Anthropic event stream, each checked to name its own type in its `event:` line. */
async function events(res: Response): Promise<any[]> {
  const out: any[] = []
  for (const block of (await res.text()).split('\n\n').filter(Boolean)) {
    const [eventLine, dataLine] = block.split('\n')
    const data = JSON.parse(dataLine.slice('data: '.length))
    expect(eventLine).toBe(`event: ${data.type}`)
    out.push(data)
  }
  return out
}
const typeOf = (event: any) => (event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type)

describe('POST /api/v1/messages, streamed (translated)', () => {
  it("sends Anthropic's documented sequence for a text answer, with the usage in message_delta", async () => {
    const res = await post({ model: 'anthropic/claude-haiku-4.5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi there' }] })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    const id = res.headers.get('x-generation-id')
    const list = await events(res)
    expect(list.map(typeOf)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      ...Array(5).fill('content_block_delta:text_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(list[0].message).toEqual({
      id,
      type: 'message',
      role: 'assistant',
      model: 'anthropic/claude-haiku-4.5',
      provider: 'Anthropic',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    })
    expect(list[2]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    expect(
      list
        .slice(3, 8)
        .map((e) => e.delta.text)
        .join(''),
    ).toBe('Hello from claude-haiku-4-5: Hi there')
    const upstream = fake.requests.at(-1)!.body
    const input = Math.ceil(JSON.stringify({ system: upstream.system, tools: upstream.tools, messages: upstream.messages }).length / 4)
    expect(list[9]).toMatchObject({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null, stop_details: null },
      usage: {
        input_tokens: input,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens_details: { thinking_tokens: 0 },
      },
    })
    expect(typeof list[9].usage.cost).toBe('number')
  })

  it('answers with the bare id the client sent (claude-haiku-4-5), whole and streamed', async () => {
    const body = { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }
    const whole = await post(body)
    expect(whole.status).toBe(200)
    expect((await whole.json()).model).toBe('claude-haiku-4-5')
    const list = await events(await post({ ...body, stream: true }))
    expect(list[0].message).toMatchObject({ model: 'claude-haiku-4-5', provider: 'Anthropic' })
  })

  it('sends thinking (with its signature) and a tool call as their blocks, then stop_reason tool_use', async () => {
    const res = await post({
      model: 'anthropic/claude-haiku-4.5',
      max_tokens: 3000,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [weather],
      messages: [{ role: 'user', content: 'Lima' }],
    })
    const list = await events(res)
    const thought = 'The user asked about Lima; I should answer plainly.'
    const arguments_ = '{"city":"Lima"}'.match(/.{1,6}/g)!.length
    expect(list.map(typeOf)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      ...Array(thought.split(' ').length).fill('content_block_delta:thinking_delta'),
      'content_block_delta:signature_delta',
      'content_block_stop',
      'content_block_start',
      ...Array(arguments_).fill('content_block_delta:input_json_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    const starts = list.filter((e) => e.type === 'content_block_start')
    expect(starts.map((e) => [e.index, e.content_block.type])).toEqual([
      [0, 'thinking'],
      [1, 'tool_use'],
    ])
    const deltas = list.filter((e) => e.type === 'content_block_delta')
    expect(
      deltas
        .filter((e) => e.delta.type === 'thinking_delta')
        .map((e) => e.delta.thinking)
        .join(''),
    ).toBe(thought)
    expect(deltas.find((e) => e.delta.type === 'signature_delta').delta.signature).toMatch(/^fakesig_/)
    expect(
      deltas
        .filter((e) => e.index === 1)
        .map((e) => e.delta.partial_json)
        .join(''),
    ).toBe('{"city":"Lima"}')
    expect(list.at(-2).delta.stop_reason).toBe('tool_use')
  })

  it('ends with an error event when the provider fails after content began', async () => {
    const res = await post({ model: 'anthropic/claude-midstream-error', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'one two three' }] })
    expect(res.status).toBe(200)
    const list = await events(res)
    expect(list.map(typeOf)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'error',
    ])
    expect(list.at(-1)).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: expect.stringContaining('Anthropic'), metadata: { provider_name: 'Anthropic' } },
    })
  })

  it('names the stop sequence that ended the answer', async () => {
    const res = await post({ model: 'anthropic/claude-haiku-4.5', max_tokens: 100, stop_sequences: ['claude'], messages: [{ role: 'user', content: 'x' }] })
    const message = await res.json()
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'claude', content: [{ type: 'text', text: 'Hello from ' }] })
  })
})

describe("POST /api/v1/messages, natively (Anthropic's own events passed on)", () => {
  const nativePost = (body: unknown) => post(body, { 'x-api-key': nativeCustomer.key }, '/api/v1/messages', native)
  /** The fake's own answer to the same request, called directly: what the gateway must pass on. */
  const direct = (body: Record<string, unknown>) =>
    fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...body, model: 'claude-haiku-4-5' }),
    })
  // Ids the fake counts up (messages, tool calls) differ from one call to the next.
  const normalized = (value: unknown) =>
    JSON.parse(
      JSON.stringify(value)
        .replace(/toolu_fake\d+/g, 'toolu_X')
        .replace(/msg_[A-Za-z0-9]+/g, 'msg_X'),
    )

  for (const [name, body] of [
    ['a text answer', { max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi there' }] }],
    [
      'thinking with its signature and a tool call',
      { max_tokens: 3000, stream: true, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [weather], messages: [{ role: 'user', content: 'Lima' }] },
    ],
  ] as const) {
    it(`passes on Anthropic's events exactly for ${name}: the generation's id, model and provider in message_start, the cost in message_delta`, async () => {
      const res = await nativePost({ model: 'anthropic/claude-haiku-4.5', ...body })
      expect(res.status).toBe(200)
      const id = res.headers.get('x-generation-id')
      const got = await events(res)
      const sent = fake.requests.at(-1)!
      expect(sent.path).toBe('/v1/messages')
      expect(sent.body).toEqual({ ...body, model: 'claude-haiku-4-5' })
      const expected = await events(await direct(body))
      expect(got.map(typeOf)).toEqual(expected.map(typeOf))
      expect(got.at(-1)).toEqual({ type: 'message_stop' })
      const start = expected[0]
      expect(got[0]).toEqual({ ...start, message: { ...start.message, id, model: 'anthropic/claude-haiku-4.5', provider: 'Anthropic' } })
      // Every other event is Anthropic's as it was sent, but message_delta, whose usage gains the gateway's cost fields.
      const delta = got.findIndex((e) => e.type === 'message_delta')
      expect(normalized(got.slice(1, delta))).toEqual(normalized(expected.slice(1, delta)))
      const { cost, cost_currency, cost_eur, is_byok, cost_details, ...usage } = got[delta].usage
      expect({ ...got[delta], usage }).toEqual(expected[delta])
      expect(is_byok).toBe(false)
      expect(cost_currency).toBe('USD')
      const generation = await (await native.request(`/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${nativeCustomer.key}` } })).json()
      expect(generation.data).toMatchObject({
        tokens_prompt: expected[0].message.usage.input_tokens,
        tokens_completion: expected[delta].usage.output_tokens,
        total_cost: cost,
      })
      expect(cost_eur).toBe(generation.data.total_cost_eur ?? cost_eur)
      expect(cost_details.upstream_inference_cost).toBe(cost)
    })
  }

  it('answers a whole message as Anthropic did, with the generation id, model, provider and cost', async () => {
    const body = { max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] }
    const res = await nativePost({ model: 'anthropic/claude-haiku-4.5', ...body })
    expect(res.status).toBe(200)
    const message = await res.json()
    const expected = await (await direct(body)).json()
    const { cost, cost_currency, cost_eur, is_byok, cost_details, ...usage } = message.usage
    expect({ ...message, usage }).toEqual({
      ...expected,
      id: res.headers.get('x-generation-id'),
      model: 'anthropic/claude-haiku-4.5',
      provider: 'Anthropic',
      usage: expected.usage,
    })
    expect(typeof cost).toBe('number')
    expect(cost).toBeGreaterThan(0)
  })

  // What Claude Code sends (its anthropic-version and betas, context_management, temperature without thinking, a
  // thinking budget to a model that only thinks adaptively): it must reach Anthropic in a form Anthropic takes.
  const claudeCode = (body: Record<string, unknown>, betas = 'interleaved-thinking-2025-05-14,context-management-2025-06-27,claude-code-20250219') =>
    post(body, { 'x-api-key': nativeCustomer.key, 'anthropic-version': '2023-06-01', 'anthropic-beta': betas }, '/api/v1/messages?beta=true', native)

  it('passes on the client’s anthropic-version and anthropic-beta, so that its context_management and temperature are taken', async () => {
    const res = await claudeCode({
      model: 'claude-haiku-4-5',
      max_tokens: 300,
      temperature: 1,
      system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      metadata: { user_id: JSON.stringify({ device_id: 'd1', session_id: 's1' }) },
      messages: [{ role: 'user', content: 'Say hello' }],
    })
    expect(res.status).toBe(200)
    expect((await res.json()).content).toEqual([{ type: 'text', text: 'Hello from claude-haiku-4-5: Say hello' }])
    const sent = fake.requests.at(-1)!
    expect(sent.headers['anthropic-version']).toBe('2023-06-01')
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,context-management-2025-06-27,claude-code-20250219')
    expect(sent.body).toMatchObject({ temperature: 1, context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] } })
  })

  it('turns a thinking budget into adaptive thinking with an effort for a model that only thinks adaptively', async () => {
    const res = await claudeCode({
      model: 'claude-sonnet-5-5',
      max_tokens: 32000,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 31999 },
      messages: [{ role: 'user', content: 'Plan it' }],
    })
    expect(res.status).toBe(200)
    const list = await events(res)
    expect(list.at(-1)).toEqual({ type: 'message_stop' })
    // 31,999 tokens is a `high` effort (above 16,384), one the model lists.
    expect(fake.requests.at(-1)!.body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    expect(fake.requests.at(-1)!.body.thinking.budget_tokens).toBeUndefined()
  })

  it('drops output_config.effort and turns adaptive thinking into a budget (the effort’s share of max_tokens) for Claude Haiku 4.5', async () => {
    // What Claude Code sends a model id it does not know; Claude Haiku 4.5 refuses both (as the fake does, below).
    const asked = {
      model: 'anthropic/claude-haiku-4.5',
      max_tokens: 32000,
      thinking: { type: 'adaptive', display: 'omitted' },
      output_config: { effort: 'high' },
      messages: [{ role: 'user', content: 'Plan it' }],
    }
    const res = await claudeCode(asked)
    expect(res.status).toBe(200)
    const sent = fake.requests.at(-1)!.body
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 25_600, display: 'omitted' })
    expect(sent.output_config).toBeUndefined()
    // An effort alone (no thinking) is left out too; a format stays.
    const format = { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } }
    expect((await claudeCode({ ...asked, thinking: undefined, output_config: { effort: 'low', format } })).status).toBe(200)
    expect(fake.requests.at(-1)!.body.thinking).toBeUndefined()
    expect(fake.requests.at(-1)!.body.output_config).toEqual({ format })
    // Without the gateway's adaptation, Anthropic (and the fake) refuses them.
    const direct = (body: unknown) =>
      fetch(`${fake.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
      })
    const effort = await direct({ ...asked, model: 'claude-haiku-4-5', thinking: { type: 'enabled', budget_tokens: 1024 } })
    expect(effort.status).toBe(400)
    expect((await effort.json()).error).toEqual({ type: 'invalid_request_error', message: 'output_config.effort: effort is not supported on this model' })
    const adaptive = await direct({ ...asked, model: 'claude-haiku-4-5', output_config: undefined })
    expect(adaptive.status).toBe(400)
    expect((await adaptive.json()).error.message).toBe(
      '"thinking.type.adaptive" is not supported for this model. Use "thinking.type.enabled" with "budget_tokens".',
    )
  })

  it('answers with the bare id the client sent, whole and streamed; with the gateway id when it sent that', async () => {
    const body = { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }
    expect((await (await claudeCode(body)).json()).model).toBe('claude-haiku-4-5')
    const list = await events(await claudeCode({ ...body, stream: true }))
    expect(list[0].message.model).toBe('claude-haiku-4-5')
    expect((await (await claudeCode({ ...body, model: 'anthropic/claude-haiku-4.5' })).json()).model).toBe('anthropic/claude-haiku-4.5')
  })

  it('a thinking tool round trip, streamed then whole: the signed thinking block sent back is taken (newlines in it too)', async () => {
    const question = { role: 'user', content: 'Lima\nand its weather, please' }
    const params = { model: 'claude-haiku-4-5', max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [weather] }
    const first = await events(await claudeCode({ ...params, stream: true, messages: [question] }))
    // The message as a client assembles it from the events.
    const blocks: any[] = []
    for (const event of first) {
      if (event.type === 'content_block_start') blocks[event.index] = { ...event.content_block }
      if (event.type !== 'content_block_delta') continue
      const block = blocks[event.index]
      if (event.delta.type === 'thinking_delta') block.thinking += event.delta.thinking
      if (event.delta.type === 'signature_delta') block.signature = event.delta.signature
      if (event.delta.type === 'input_json_delta') block.json = (block.json ?? '') + event.delta.partial_json
    }
    const [thinking, call] = blocks
    expect(thinking.thinking).toContain('Lima\nand its weather')
    const { json, ...toolUse } = call
    const res = await claudeCode({
      ...params,
      messages: [
        question,
        { role: 'assistant', content: [thinking, { ...toolUse, input: JSON.parse(json) }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny' }] },
      ],
    })
    expect(res.status).toBe(200)
    expect((await res.json()).content.at(-1)).toEqual({ type: 'text', text: 'The tools said: Sunny' })
  })

  it("ends with an error event in Anthropic's shape when the provider fails after content began", async () => {
    const res = await nativePost({
      model: 'anthropic/claude-midstream-error',
      max_tokens: 100,
      stream: true,
      messages: [{ role: 'user', content: 'one two three' }],
    })
    expect(res.status).toBe(200)
    const list = await events(res)
    expect(list.map(typeOf)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'error',
    ])
    expect(list.at(-1)).toMatchObject({ type: 'error', error: { type: 'overloaded_error', metadata: { provider_name: 'Anthropic' } } })
  })
})

describe("POST /api/v1/messages: errors in Anthropic's shape", () => {
  it('401 without a key names both headers', async () => {
    const res = await post({ model: 'anthropic/claude-haiku-4.5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, {})
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'Missing API key: send "Authorization: Bearer <API_KEY>" or "x-api-key: <API_KEY>"' },
      request_id: res.headers.get('x-request-id'),
    })
  })

  it('400 when max_tokens is missing, naming it', async () => {
    const res = await post({ model: 'anthropic/claude-haiku-4.5', messages: [{ role: 'user', content: 'x' }] })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: is required', param: 'max_tokens' },
      request_id: res.headers.get('x-request-id'),
    })
    expect(res.headers.get('x-request-id')).toMatch(/^req_/)
  })

  it('400 for a server tool, naming its type, before anything is sent', async () => {
    const sent = fake.requests.length
    const res = await post({
      model: 'anthropic/claude-haiku-4.5',
      max_tokens: 10,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      messages: [{ role: 'user', content: 'x' }],
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toEqual({
      type: 'invalid_request_error',
      message: "tools.0: web_search_20250305 is one of Anthropic's server tools, which this gateway does not run; send custom tools (name, input_schema)",
      param: 'tools.0.type',
    })
    expect(fake.requests.length).toBe(sent)
  })

  it('400 for a server tool block in the conversation', async () => {
    const res = await post({
      model: 'anthropic/claude-haiku-4.5',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }] },
      ],
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toBe(
      "messages.1.content.0: server_tool_use blocks come from Anthropic's server tools, which this gateway does not run",
    )
  })

  it('404 for an unknown model', async () => {
    const res = await post({ model: 'nobody/nothing', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
    expect(res.status).toBe(404)
    expect((await res.json()).error.type).toBe('not_found_error')
  })
})

describe('POST /api/v1/messages/count_tokens', () => {
  it('needs a key, and counts without billing or calling a provider', async () => {
    const body = { model: 'anthropic/claude-haiku-4.5', tools: [weather], messages: [{ role: 'user', content: 'count me' }] }
    expect((await post(body, {}, '/api/v1/messages/count_tokens')).status).toBe(401)
    const sent = fake.requests.length
    const res = await post(body, { authorization: `Bearer ${customer.key}` }, '/api/v1/messages/count_tokens')
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: weather.input_schema } }]
    const chars = JSON.stringify([{ role: 'user', content: 'count me' }]).length + JSON.stringify(tools).length
    expect(await res.json()).toEqual({ input_tokens: Math.ceil(chars / 4) })
    expect(fake.requests.length).toBe(sent)
  })
})
