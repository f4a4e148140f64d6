/**
 * The fake OpenAI upstream's `POST /v1/responses` (test/fakes/openai-responses.ts) read by the official `openai` SDK
 * over HTTP on 127.0.0.1: whole answers, streams (the exact event lists, and the raw SSE framing with its sequence
 * numbers), a function call and its round trip, structured output, reasoning items, a cut answer, and failures. That
 * the SDK parses and accumulates all of it shows the fake speaks the Responses API's real wire format.
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai'

const API_KEY = 'sk-fake-responses'
let fake: FakeOpenAI
let client: OpenAI

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: API_KEY })
  client = new OpenAI({ baseURL: fake.url, apiKey: API_KEY, maxRetries: 0 })
})
afterAll(async () => {
  await fake?.close()
})

/** The types of the events of a stream, in order, and the error that ended it, if any. */
async function eventTypes(stream: AsyncIterable<{ type: string }>): Promise<{ types: string[]; error?: unknown }> {
  const types: string[] = []
  try {
    for await (const event of stream) types.push(event.type)
  } catch (error) {
    return { types, error }
  }
  return { types }
}
const times = (n: number, type: string) => Array.from({ length: n }, () => type)
/** The events of a message item of `words` words at one output index. */
const messageEvents = (words: number) => [
  'response.output_item.added',
  'response.content_part.added',
  ...times(words, 'response.output_text.delta'),
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
]

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
  strict: true,
}

describe('whole answers', () => {
  it('answers a Response object the SDK reads, with OpenAI fields and usage', async () => {
    const response = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hi to the fake', instructions: 'Be brief.' })
    expect(response.output_text).toBe('Hello from gpt-4o-mini: Say hi to the fake')
    expect(response).toMatchObject({
      id: `resp_fake${fake.requests.length}`,
      object: 'response',
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      max_output_tokens: null,
      model: 'gpt-4o-mini',
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: true,
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      user: null,
      metadata: {},
      output: [
        {
          type: 'message',
          id: `msg_${fake.requests.length}`,
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello from gpt-4o-mini: Say hi to the fake', annotations: [], logprobs: [] }],
        },
      ],
      // 1 + 5 words of input + 2 of instructions; 8 words answered.
      usage: {
        input_tokens: 8,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 8,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 16,
      },
    })
    expect(typeof response.created_at).toBe('number')
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/responses' })
  })

  it('echoes the request fields and reports cached tokens', async () => {
    const response = await client.responses.create({
      model: 'gpt-4.1-cached',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look at this picture' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
          ],
        },
      ],
      temperature: 0.5,
      top_p: 0.9,
      store: false,
      metadata: { run: 'one' },
      parallel_tool_calls: false,
    })
    expect(response.output_text).toBe('Hello from gpt-4.1-cached: Look at this picture')
    expect(response).toMatchObject({ temperature: 0.5, top_p: 0.9, store: false, metadata: { run: 'one' }, parallel_tool_calls: false })
    expect(response.usage).toEqual({
      input_tokens: 5,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 12,
    })
  })

  it('answers a reasoning item first, with its summary and encrypted content when asked', async () => {
    const response = await client.responses.create({
      model: 'o4-mini',
      input: 'Think',
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
    })
    const n = fake.requests.length
    expect(response.output).toEqual([
      { type: 'reasoning', id: `rs_${n}`, summary: [{ type: 'summary_text', text: 'Thinking it over.' }], encrypted_content: `enc_${n}` },
      expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: 'Hello from o4-mini: Think' })] }),
    ])
    expect(response.reasoning).toEqual({ effort: 'low', summary: 'auto' })
    expect(response.usage).toMatchObject({ input_tokens: 2, output_tokens: 4 + 12, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 18 })

    const plain = await client.responses.create({ model: 'fake-reasoning-model', input: 'Think' })
    expect(plain.output[0]).toEqual({ type: 'reasoning', id: `rs_${fake.requests.length}`, summary: [] })
  })

  it('answers a function call, then a reply to its output', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Paris', tools: [WEATHER] })
    const call = response.output[0]
    expect(call).toEqual({
      type: 'function_call',
      id: `fc_${fake.requests.length}`,
      call_id: `call_${fake.requests.length}`,
      name: 'get_weather',
      arguments: '{"city":"Paris","unit":"c"}',
      status: 'completed',
    })
    expect(response.tools).toEqual([WEATHER])
    expect(response.usage?.output_tokens).toBe(1)
    if (call.type !== 'function_call') throw new Error('not a call')

    const reply = await client.responses.create({
      model: 'gpt-4o',
      tools: [WEATHER],
      input: [
        { role: 'user', content: 'Paris' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: '22 degrees' },
      ],
    })
    expect(reply.output_text).toBe('The tool said: 22 degrees')
    expect(await client.responses.create({ model: 'gpt-4o', input: 'Paris', tools: [WEATHER], tool_choice: 'none' })).toMatchObject({
      output_text: 'Hello from gpt-4o: Paris',
      tool_choice: 'none',
    })
  })

  it('answers structured output the SDK parses', async () => {
    const response = await client.responses.parse({
      model: 'gpt-4o',
      input: 'Ada',
      text: {
        format: {
          type: 'json_schema',
          name: 'person',
          strict: true,
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
            required: ['name', 'age', 'tags'],
            additionalProperties: false,
          },
        },
      },
    })
    expect(response.output_parsed).toEqual({ name: 'Ada', age: 42, tags: ['Ada'] })
    expect(response.text?.format?.type).toBe('json_schema')
  })

  it('cuts an answer at max_output_tokens: status incomplete', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'one two three four', max_output_tokens: 3 })
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'Hello from gpt-4o:' })
    expect(response.output[0]).toMatchObject({ type: 'message', status: 'incomplete' })
    expect(response.usage).toMatchObject({ output_tokens: 3 })
  })
})

describe('streams', () => {
  it('streams a message: the exact events, accumulated by the SDK', async () => {
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Say hi to the fake' })
    const deltas: string[] = []
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta))
    const { types, error } = await eventTypes(stream)
    expect(error).toBeUndefined()
    expect(types).toEqual(['response.created', 'response.in_progress', ...messageEvents(8), 'response.completed'])
    expect(deltas).toEqual(['Hello', ' from', ' gpt-4o-mini:', ' Say', ' hi', ' to', ' the', ' fake'])
    const final = await stream.finalResponse()
    expect(final.output_text).toBe('Hello from gpt-4o-mini: Say hi to the fake')
    expect(final).toMatchObject({ status: 'completed', usage: { input_tokens: 6, output_tokens: 8, total_tokens: 14 } })
  })

  it('streams reasoning with a summary before the message', async () => {
    const stream = client.responses.stream({ model: 'o4-mini', input: 'Think', reasoning: { effort: 'low', summary: 'auto' } })
    const { types } = await eventTypes(stream)
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      ...messageEvents(4),
      'response.completed',
    ])
    const final = await stream.finalResponse()
    expect(final.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking it over.' }] })
    expect(final.output_text).toBe('Hello from o4-mini: Think')
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(12)
  })

  it('streams a function call in argument pieces of 5 characters', async () => {
    const stream = client.responses.stream({ model: 'gpt-4o', input: 'Paris', tools: [WEATHER] })
    const { types } = await eventTypes(stream)
    // '{"city":"Paris","unit":"c"}' is 27 characters: 6 pieces.
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      ...times(6, 'response.function_call_arguments.delta'),
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    const final = await stream.finalResponse()
    expect(final.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}', status: 'completed' })
  })

  it('ends a cut stream with response.incomplete', async () => {
    const stream = await client.responses.create({ model: 'gpt-4o', input: 'one two three four', max_output_tokens: 3, stream: true })
    const events: any[] = []
    for await (const event of stream) events.push(event)
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', ...messageEvents(3), 'response.incomplete'])
    expect(events.at(-1).response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })
  })

  it('frames every event as `event: <type>` and `data: <json>` with sequence numbers from 0', async () => {
    const res = await fetch(`${fake.url}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', input: 'Hi', stream: true }),
    })
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const blocks = (await res.text()).split('\n\n').filter(Boolean)
    const events = blocks.map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n')
      expect(rest).toEqual([])
      expect(eventLine).toMatch(/^event: /)
      expect(dataLine).toMatch(/^data: /)
      const data = JSON.parse(dataLine.slice('data: '.length))
      expect(data.type).toBe(eventLine.slice('event: '.length))
      return data
    })
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[0].response).toMatchObject({ status: 'in_progress', output: [], usage: null })
    const delta = events.find((e) => e.type === 'response.output_text.delta')
    expect(delta).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 4,
      item_id: delta.item_id,
      output_index: 0,
      content_index: 0,
      delta: 'Hello',
      logprobs: [],
    })
  })
})

describe('failures', () => {
  it('fail-429: the SDK throws a RateLimitError with OpenAI’s body and Retry-After', async () => {
    const error = await client.responses.create({ model: 'fail-429', input: 'Hi' }).catch((e) => e)
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded' })
    expect(error.headers.get('retry-after')).toBe('2')
  })

  it('refuses previous_response_id, and a request without model or input, with 400s', async () => {
    const previous = await client.responses.create({ model: 'gpt-4o', input: 'Hi', previous_response_id: 'resp_abc' }).catch((e) => e)
    expect(previous).toBeInstanceOf(OpenAI.BadRequestError)
    expect(previous).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' })
    const noInput = await client.responses.create({ model: 'gpt-4o' } as any).catch((e) => e)
    expect(noInput).toMatchObject({ status: 400, code: 'missing_required_parameter', param: 'input' })
    const noModel = await client.responses.create({ input: 'Hi' } as any).catch((e) => e)
    expect(noModel).toMatchObject({ status: 400, code: 'missing_required_parameter', param: 'model' })
  })

  it('fail-failed: a failed Response, whole and as response.failed', async () => {
    fake.modes['flaky-model'] = 'fail-failed'
    const whole = await client.responses.create({ model: 'flaky-model', input: 'Hi' })
    expect(whole).toMatchObject({ status: 'failed', error: { code: 'server_error', message: 'The model failed.' }, usage: null, output: [] })
    const stream = client.responses.stream({ model: 'flaky-model', input: 'Hi' })
    const { types } = await eventTypes(stream)
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.failed'])
    expect(await stream.finalResponse()).toMatchObject({ status: 'failed', error: { code: 'server_error' } })
  })

  it('fail-midstream: two text deltas, then the connection drops', async () => {
    const stream = await client.responses.create({ model: 'fail-midstream', input: 'Hi there', stream: true })
    const { types, error } = await eventTypes(stream)
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
    ])
    expect(error).toBeDefined()
  })

  it('hang: never answers, and counts the request the client abandons; fail-badjson: the SDK cannot parse it', async () => {
    const before = fake.aborted
    const controller = new AbortController()
    const pending = client.responses.create({ model: 'hang', input: 'Hi' }, { signal: controller.signal }).catch((e) => e)
    await new Promise((resolve) => setTimeout(resolve, 50))
    controller.abort()
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError)
    await expect.poll(() => fake.aborted).toBe(before + 1)
    await expect(client.responses.create({ model: 'fail-badjson', input: 'Hi' })).rejects.toThrow()
  })
})
