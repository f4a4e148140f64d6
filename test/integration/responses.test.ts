/**
 * POST /responses over raw HTTP (docs/responses.md): the exact event stream (event names, data, sequence numbers),
 * failures mid-stream, max_output_tokens, the client's abort, stored responses (GET, DELETE, store: false, their size
 * bound and their retention; the input items of records stored before items had ids), and validation errors in
 * OpenAI's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const DAY_MS = 86_400_000

let fake: FakeOpenAI
let t: TestGateway
let now = Date.UTC(2026, 10, 26, 9, 0, 0)

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream', slowMs: 100 })
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    clock: () => now,
    retention: { sweepIntervalSeconds: 0, responsesDays: 30 },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: fake.url,
        apiKey: 'sk-upstream',
        models: ['gpt-test', 'fail-midstream', 'slow'].map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing: PRICING, maxCompletionTokens: 1000 })),
      }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const customer = (credits = '5') => createCustomer(t.gateway, { credits })
const post = (auth: Record<string, string>, body: unknown, init: RequestInit = {}) =>
  t.request('/api/v1/responses', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body), ...init })

/** The events of a Responses stream: each block's `event:` name and its parsed `data:`. */
async function readEvents(res: Response): Promise<{ event: string; data: any }[]> {
  const text = await res.text()
  return text
    .split('\n\n')
    .filter((block) => block.trim() && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n')
      return { event: lines.find((l) => l.startsWith('event: '))!.slice(7), data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) }
    })
}

describe('POST /responses streamed', () => {
  it('sends OpenAI’s event sequence: event names equal each data.type, sequence numbers 0, 1, 2, …, no [DONE]', async () => {
    const { auth } = await customer()
    const res = await post(auth, { model: 'fake/gpt-test', input: 'Hi there', stream: true })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(res.headers.get('x-generation-id')).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    const events = await readEvents(res)
    for (const { event, data } of events) expect(data.type).toBe(event)
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i))

    const [created, inProgress, added, partAdded, d1, d2, d3, d4, d5, textDone, partDone, itemDone, completed] = events.map((e) => e.data)
    expect(events).toHaveLength(13)
    const id = created.response.id
    const item = added.item.id
    expect(created).toMatchObject({
      type: 'response.created',
      response: {
        id,
        object: 'response',
        status: 'in_progress',
        model: 'fake/gpt-test',
        output: [],
        usage: null,
        completed_at: null,
        frequency_penalty: null,
        presence_penalty: null,
      },
    })
    expect(inProgress).toMatchObject({ type: 'response.in_progress', response: { id, status: 'in_progress' } })
    expect(added).toEqual({
      type: 'response.output_item.added',
      output_index: 0,
      item: { id: item, type: 'message', role: 'assistant', status: 'in_progress', content: [] },
      sequence_number: 2,
    })
    expect(partAdded).toEqual({
      type: 'response.content_part.added',
      item_id: item,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
      sequence_number: 3,
    })
    expect([d1, d2, d3, d4, d5].map((d) => d.delta)).toEqual(['Hello', ' from', ' gpt-test:', ' Hi', ' there'])
    expect(d1).toEqual({
      type: 'response.output_text.delta',
      item_id: item,
      output_index: 0,
      content_index: 0,
      delta: 'Hello',
      logprobs: [],
      sequence_number: 4,
    })
    const text = 'Hello from gpt-test: Hi there'
    expect(textDone).toEqual({ type: 'response.output_text.done', item_id: item, output_index: 0, content_index: 0, text, logprobs: [], sequence_number: 9 })
    const part = { type: 'output_text', text, annotations: [] }
    expect(partDone).toEqual({ type: 'response.content_part.done', item_id: item, output_index: 0, content_index: 0, part, sequence_number: 10 })
    const message = { id: item, type: 'message', role: 'assistant', status: 'completed', content: [part] }
    expect(itemDone).toEqual({ type: 'response.output_item.done', output_index: 0, item: message, sequence_number: 11 })
    expect(completed).toMatchObject({ type: 'response.completed', sequence_number: 12, response: { id, status: 'completed', output: [message] } })
    // Completed at the gateway's clock (fixed here), in Unix seconds like created_at.
    expect(completed.response).toMatchObject({
      created_at: Math.floor(now / 1000),
      completed_at: Math.floor(now / 1000),
      frequency_penalty: null,
      presence_penalty: null,
    })
    const upstream = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!
    const input = Math.ceil(JSON.stringify(upstream.body.messages).length / 4)
    // 16 prompt tokens × 0.000001 + 5 completion tokens × 0.000002 = 0.000026 USD; × 0.86 = 0.00002236 EUR.
    expect(input).toBe(16)
    expect(completed.response.usage).toEqual({
      input_tokens: 16,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 21,
      cost: 0.000026,
      cost_currency: 'USD',
      cost_eur: 0.00002236,
      is_byok: false,
      // OpenRouter's names for the input and output costs, then chat's.
      cost_details: {
        upstream_inference_cost: 0.000026,
        upstream_inference_input_cost: 0.000016,
        upstream_inference_output_cost: 0.00001,
        upstream_inference_prompt_cost: 0.000016,
        upstream_inference_completions_cost: 0.00001,
      },
    })
    // The stored response is the completed one.
    const stored = await t.request(`/api/v1/responses/${id}`, { headers: auth })
    expect(await stored.json()).toEqual(completed.response)
  })

  it('a provider failing mid-stream ends the open message as incomplete, then response.failed with the error and the usage billed; nothing is stored', async () => {
    const { auth, user } = await customer()
    const res = await post(auth, { model: 'fake/fail-midstream', input: 'one two three four', stream: true })
    const events = await readEvents(res)
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.failed',
    ])
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[8].data.item).toMatchObject({ status: 'incomplete', content: [{ type: 'output_text', text: 'Hello from' }] })
    const failed = events.at(-1)!.data.response
    expect(failed.status).toBe('failed')
    expect(failed.error).toMatchObject({
      code: 'server_error',
      message: expect.any(String),
      metadata: { provider_name: 'Fake', error_type: 'provider_unavailable' },
    })
    expect(failed.usage.output_tokens).toBeGreaterThan(0)
    expect(Number((await t.gateway.admin.getCredits(user.org_id)).total_usage)).toBe(failed.usage.cost_eur)
    expect((await t.request(`/api/v1/responses/${failed.id}`, { headers: auth })).status).toBe(404)
  })

  it('max_output_tokens reached: the message is incomplete, and the stream ends with response.incomplete', async () => {
    const { auth } = await customer()
    const events = await readEvents(await post(auth, { model: 'fake/gpt-test', input: 'a b c d e f', max_output_tokens: 3, stream: true }))
    const last = events.at(-1)!
    expect(last.event).toBe('response.incomplete')
    expect(last.data.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 3,
      output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'Hello from gpt-test:' }] }],
    })
    expect(fake.requests.at(-1)!.body.max_tokens).toBe(3)
  })

  it('the client going away aborts the provider’s request', async () => {
    const { auth } = await customer()
    const aborted = fake.aborted
    const controller = new AbortController()
    const res = await post(auth, { model: 'fake/slow', input: 'one two three four five six', stream: true }, { signal: controller.signal })
    const reader = res.body!.getReader()
    await reader.read()
    controller.abort()
    await expect.poll(() => fake.aborted, { timeout: 3000 }).toBe(aborted + 1)
  })
})

describe('POST /responses whole', () => {
  it('max_output_tokens reached: status incomplete with its reason', async () => {
    const { auth } = await customer()
    const body = (await (await post(auth, { model: 'fake/gpt-test', input: 'a b c d e f', max_output_tokens: 2 })).json()) as any
    expect(body).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'Hello from' }] }],
      usage: { output_tokens: 2 },
    })
  })

  it('refuses what it cannot translate in OpenAI’s shape, before any provider is called', async () => {
    const { auth } = await customer()
    const sent = fake.requests.length
    const cases: [unknown, number, Record<string, unknown>][] = [
      [{ model: 'fake/gpt-test' }, 400, { param: 'input', type: 'invalid_request_error', code: 'invalid_request' }],
      [{ model: 'fake/gpt-test', input: 'x', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, 400, { param: 'tools.0.type' }],
      [
        { model: 'fake/gpt-test', input: 'x', tool_choice: { type: 'file_search' }, tools: [{ type: 'function', name: 'f' }] },
        400,
        { param: 'tool_choice.type' },
      ],
      [
        { model: 'fake/gpt-test', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] },
        400,
        { param: 'input.0.content.0.file_id' },
      ],
      [{ model: 'fake/gpt-test', input: 'x', background: true }, 400, { param: 'background' }],
      [{ model: 'fake/gpt-test', input: 'x', previous_response_id: 'nope' }, 400, { param: 'previous_response_id' }],
      [{ model: 'fake/nope', input: 'x' }, 404, { type: 'invalid_request_error', code: 'not_found' }],
    ]
    for (const [body, status, error] of cases) {
      const res = await post(auth, body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect(((await res.json()) as any).error, JSON.stringify(body)).toMatchObject({ message: expect.any(String), ...error })
    }
    expect(fake.requests.length).toBe(sent)
  })

  it('a message of another role, function calls and their outputs map to chat messages in order', async () => {
    const { auth } = await customer()
    const res = await post(auth, {
      model: 'fake/gpt-test',
      instructions: 'Be kind.',
      input: [
        { type: 'message', role: 'developer', content: 'Use metric units.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather?' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
          ],
        },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '9:00' }] },
      ],
    })
    expect(res.status).toBe(200)
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'developer', content: 'Use metric units.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '9:00' }] },
    ])
  })
})

describe('stored responses', () => {
  it('GET reads a stored response, DELETE deletes it (then both are 404), store: false stores nothing', async () => {
    const { auth } = await customer()
    const created = (await (await post(auth, { model: 'fake/gpt-test', input: 'Keep me' })).json()) as any
    const read = await t.request(`/api/v1/responses/${created.id}`, { headers: auth })
    expect(read.status).toBe(200)
    expect(await read.json()).toEqual(created)
    const removed = await t.request(`/api/v1/responses/${created.id}`, { method: 'DELETE', headers: auth })
    expect(await removed.json()).toEqual({ id: created.id, object: 'response.deleted', deleted: true })
    expect((await t.request(`/api/v1/responses/${created.id}`, { headers: auth })).status).toBe(404)
    const again = await t.request(`/api/v1/responses/${created.id}`, { method: 'DELETE', headers: auth })
    expect(again.status).toBe(404)
    expect(((await again.json()) as any).error).toEqual({
      message: `Response with id '${created.id}' not found.`,
      type: 'invalid_request_error',
      param: null,
      code: 'not_found',
    })

    const unstored = (await (await post(auth, { model: 'fake/gpt-test', input: 'Forget me', store: false })).json()) as any
    expect(unstored.store).toBe(false)
    expect((await t.request(`/api/v1/responses/${unstored.id}`, { headers: auth })).status).toBe(404)
    expect((await post(auth, { model: 'fake/gpt-test', input: 'x', previous_response_id: unstored.id })).status).toBe(404)
  })

  it('are kept retention.responsesDays: after 30 days they are gone, and the sweep removes them', async () => {
    const { auth } = await customer()
    const created = (await (await post(auth, { model: 'fake/gpt-test', input: 'Old news' })).json()) as any
    now += 30 * DAY_MS - 1000
    expect((await t.request(`/api/v1/responses/${created.id}`, { headers: auth })).status).toBe(200)
    expect((await t.gateway.admin.sweep()).stored_responses).toBe(0)
    now += 2000
    expect((await t.request(`/api/v1/responses/${created.id}`, { headers: auth })).status).toBe(404)
    const swept = await t.gateway.admin.sweep()
    expect(swept.stored_responses).toBeGreaterThanOrEqual(1)
    const keys = await t.gateway.internals.storage.getKeys('gateway:responses')
    expect(keys.some((key) => key.endsWith(created.id))).toBe(false)
  })

  it('a conversation over the stored size bound (4 MiB) is refused when it would be stored, and served with store: false', async () => {
    const { auth } = await customer('50')
    const sent = fake.requests.length
    const big = 'word '.repeat(900_000)
    const refused = await post(auth, { model: 'fake/gpt-test', input: big })
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as any).error).toMatchObject({ param: 'input', type: 'invalid_request_error' })
    expect(fake.requests.length).toBe(sent)
    const served = await post(auth, { model: 'fake/gpt-test', input: big, store: false, max_output_tokens: 5 })
    expect(served.status).toBe(200)
  })

  it('a record stored before input items had ids: they get the ids they would have had, stable, usable as references', async () => {
    const { auth } = await customer()
    const created = (await (await post(auth, { model: 'fake/gpt-test', input: [{ role: 'user', content: 'Old times' }] })).json()) as any
    // Rewrite the record as an older gateway stored it: input items without ids, an output id of the old form.
    const { storage } = t.gateway.internals
    const key = (await storage.getKeys('gateway:responses')).find((k) => k.endsWith(created.id))!
    const record = (await storage.getItem(key)) as any
    const oldOutputId = 'msg_0123456789abcdef0123456789abcdef'
    record.input = record.input.map(({ id: _id, ...item }: any) => item)
    record.output[0].id = oldOutputId
    await storage.setItem(key, record)

    const list = async (query = '') => (await t.request(`/api/v1/responses/${created.id}/input_items${query}`, { headers: auth })).json() as Promise<any>
    const expected = { id: `msg_${created.id.slice(5)}000000`, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Old times' }] }
    expect(await list()).toEqual({ object: 'list', data: [expected], first_id: expected.id, last_id: expected.id, has_more: false })
    expect((await list()).data[0].id).toBe(expected.id)

    // previous_response_id carries them with those ids, and a reference may name the old output item through it.
    const next = (await (
      await post(auth, {
        model: 'fake/gpt-test',
        previous_response_id: created.id,
        input: [
          { role: 'user', content: 'Again' },
          { type: 'item_reference', id: oldOutputId },
        ],
      })
    ).json()) as any
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'Old times' },
      { role: 'assistant', content: 'Hello from gpt-test: Old times' },
      { role: 'user', content: 'Again' },
      { role: 'assistant', content: 'Hello from gpt-test: Old times' },
    ])
    const listed = (await (await t.request(`/api/v1/responses/${next.id}/input_items?order=asc`, { headers: auth })).json()) as any
    expect(listed.data.map((item: any) => item.id)).toEqual([expected.id, oldOutputId, `msg_${next.id.slice(5)}000002`, oldOutputId])
    // Without previous_response_id, the derived id names its response.
    const referenced = await post(auth, { model: 'fake/gpt-test', input: [{ type: 'item_reference', id: expected.id }] })
    expect(referenced.status).toBe(200)
    expect(fake.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'Old times' }])
  })

  it('input_items shows a reasoning item’s encrypted_content only with include (include[] as the SDK sends it)', async () => {
    const { auth } = await customer()
    const reasoning = { type: 'reasoning', id: 'rs_mine', summary: [], encrypted_content: 'opaque-from-elsewhere' }
    const created = (await (await post(auth, { model: 'fake/gpt-test', input: [reasoning, { role: 'user', content: 'Go' }] })).json()) as any
    const url = `/api/v1/responses/${created.id}/input_items?order=asc`
    const { encrypted_content: _hidden, ...shown } = reasoning
    expect(((await (await t.request(url, { headers: auth })).json()) as any).data[0]).toEqual(shown)
    for (const query of ['&include[]=reasoning.encrypted_content', '&include=reasoning.encrypted_content']) {
      expect(((await (await t.request(url + query, { headers: auth })).json()) as any).data[0], query).toEqual(reasoning)
    }
  })
})
