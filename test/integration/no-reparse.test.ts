/**
 * `/messages`, `/responses` and `/completions` over a provider that does not speak them natively are served as chat, and chat's typed
 * result is written in their shape at the edge (docs/capabilities.md#one-pipeline): the gateway never serialises its own
 * answer and parses it back. A spy on `JSON.parse` (which every JSON and SSE parse goes through) records every text
 * parsed while the gateway serves, in this process; none may hold the generation id the gateway gave the answer (its
 * own output), whole or streamed. The gateway in front of the fake OpenAI's chat completions through an
 * `openaiCompatible` provider (never native), over real HTTP.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const parse = JSON.parse.bind(JSON)

let fake: FakeOpenAI
let t: TestGateway
let key: string
/** Every text given to JSON.parse since the test began (the gateway's, the fake's and this file's own). */
let parsed: string[]

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  t = await startGateway({
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: fake.url,
        apiKey: 'sk-upstream',
        models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: PRICING, maxCompletionTokens: 1000 }],
      }),
    ],
  })
  key = (await createCustomer(t.gateway, { credits: '5' })).key
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

beforeEach(() => {
  parsed = []
  vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    parsed.push(String(text))
    return parse(text, reviver)
  })
})

afterEach(() => {
  vi.restoreAllMocks()
})

/** POSTs a body to the gateway with the customer's key; the answer's text, read without the spied parse. */
async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; generationId: string; text: string }> {
  const response = await t.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })
  return { status: response.status, generationId: response.headers.get('x-generation-id') ?? '', text: await response.text() }
}

/** The data of each event of an SSE text, parsed without the spy. */
const eventsOf = (text: string): Record<string, any>[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => parse(line.slice(6)))

/** The texts parsed while serving that hold the answer's generation id: the gateway reading its own output. */
const reparsed = (generationId: string) => parsed.filter((text) => text.includes(generationId))

describe('no re-parse of the gateway’s own output (a non-native provider)', () => {
  it('the spy sees a parse of a text holding the generation id (what it looks for is there to see)', async () => {
    const answer = await post('/api/v1/chat/completions', { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'spy check' }] })
    expect(answer.status).toBe(200)
    expect(answer.generationId).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(reparsed(answer.generationId)).toEqual([])
    JSON.parse(answer.text) // as a gateway translating chat's serialised answer did
    expect(reparsed(answer.generationId)).toHaveLength(1)
  })

  it('/messages, whole: Anthropic’s message written from chat’s result', async () => {
    const answer = await post('/api/v1/messages', { model: 'fake/gpt-test', max_tokens: 100, messages: [{ role: 'user', content: 'whole message' }] })
    expect(answer.status).toBe(200)
    const message = parse(answer.text)
    expect(message.id).toBe(answer.generationId)
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from gpt-test: whole message' }])
    expect(message.stop_reason).toBe('end_turn')
    expect(message.usage.output_tokens).toBe(5)
    expect(message.usage.cost).toBeGreaterThan(0)
    expect(reparsed(answer.generationId)).toEqual([])
  })

  it('/messages, streamed: Anthropic’s events written from chat’s parts', async () => {
    const answer = await post('/api/v1/messages', {
      model: 'fake/gpt-test',
      max_tokens: 100,
      stream: true,
      messages: [{ role: 'user', content: 'streamed message' }],
    })
    expect(answer.status).toBe(200)
    const events = eventsOf(answer.text)
    expect(events[0].type).toBe('message_start')
    expect(events[0].message.id).toBe(answer.generationId)
    const text = events
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('')
    expect(text).toBe('Hello from gpt-test: streamed message')
    const delta = events.find((e) => e.type === 'message_delta')
    expect(delta?.usage.output_tokens).toBe(5)
    expect(delta?.usage.cost).toBeGreaterThan(0)
    expect(events.at(-1)?.type).toBe('message_stop')
    expect(reparsed(answer.generationId)).toEqual([])
  })

  it('/responses, whole: the Response object written from chat’s result', async () => {
    const answer = await post('/api/v1/responses', { model: 'fake/gpt-test', input: 'whole response', store: false })
    expect(answer.status).toBe(200)
    const response = parse(answer.text)
    expect(response.status).toBe('completed')
    expect(response.output.at(-1).content[0].text).toBe('Hello from gpt-test: whole response')
    expect(response.usage.output_tokens).toBe(5)
    expect(response.usage.cost).toBeGreaterThan(0)
    expect(reparsed(answer.generationId)).toEqual([])
  })

  it('/responses, streamed: the Responses events written from chat’s parts', async () => {
    const answer = await post('/api/v1/responses', { model: 'fake/gpt-test', input: 'streamed response', stream: true, store: false })
    expect(answer.status).toBe(200)
    const events = eventsOf(answer.text)
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['response.created', 'response.in_progress'])
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('')
    expect(text).toBe('Hello from gpt-test: streamed response')
    const completed = events.at(-1)
    expect(completed?.type).toBe('response.completed')
    expect(completed?.response.usage.output_tokens).toBe(5)
    expect(completed?.response.usage.cost).toBeGreaterThan(0)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(reparsed(answer.generationId)).toEqual([])
  })
  it('/completions, whole: the text completion written from chat’s result', async () => {
    const answer = await post('/api/v1/completions', { model: 'fake/gpt-test', prompt: 'whole completion' })
    expect(answer.status).toBe(200)
    const completion = parse(answer.text)
    expect(completion.id).toBe(answer.generationId)
    expect(completion.choices).toEqual([{ text: 'Hello from gpt-test: whole completion', index: 0, finish_reason: 'stop', logprobs: null }])
    expect(completion.usage.cost).toBeGreaterThan(0)
    expect(reparsed(answer.generationId)).toEqual([])
  })

  it('/completions, streamed: the text completion chunks written from chat’s parts', async () => {
    const answer = await post('/api/v1/completions', { model: 'fake/gpt-test', prompt: 'streamed completion', stream: true })
    expect(answer.status).toBe(200)
    const events = eventsOf(answer.text)
    expect(events[0].id).toBe(answer.generationId)
    expect(events.map((e) => e.choices[0]?.text ?? '').join('')).toBe('Hello from gpt-test: streamed completion')
    expect(events.at(-1)?.usage.cost).toBeGreaterThan(0)
    expect(reparsed(answer.generationId)).toEqual([])
  })
})
