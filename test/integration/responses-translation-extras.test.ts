/**
 * What the translation of POST /responses through chat carries beyond text, tool calls and reasoning
 * (docs/responses.md#refusals-and-logprobs): a model's refusal, whole and streamed as OpenAI's refusal events, and the
 * output text's logprobs asked for with `include: ["message.output_text.logprobs"]` and `top_logprobs`. The official
 * `openai` client against the gateway in front of the fake OpenAI's chat completions (test/fakes/openai.ts), through
 * an `openaiCompatible` provider (so translated, never passed on natively).
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { choiceLogprobs, outputOfMessage } from '../../src/responses/whole'
import type { ResponsesRequest } from '../../src/schemas/responses'
import { logprobsFor, REFUSAL, startFakeOpenAI, TEXT_BEFORE_REFUSAL, type FakeOpenAI } from '../fakes/openai'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const words = (text: string) => text.split(/\s+/).filter(Boolean)
const LOGPROBS = 'message.output_text.logprobs' as const

let fake: FakeOpenAI
let t: TestGateway
let client: OpenAI
let key: string

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
          { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: PRICING, maxCompletionTokens: 1000 },
          { id: 'fake/refuse', upstreamId: 'refuse', pricing: PRICING, maxCompletionTokens: 1000 },
          { id: 'fake/refuse-late', upstreamId: 'refuse-after-text', pricing: PRICING, maxCompletionTokens: 1000 },
        ],
      }),
    ],
  })
  const customer = await createCustomer(t.gateway, { credits: '5' })
  key = customer.key
  client = openaiClient(t.url, key)
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const chatsSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')

/** Every event of a streamed create, in order. */
async function streamed(body: Omit<OpenAI.Responses.ResponseCreateParamsStreaming, 'stream'>): Promise<OpenAI.Responses.ResponseStreamEvent[]> {
  const stream = await client.responses.create({ ...body, stream: true })
  const events: OpenAI.Responses.ResponseStreamEvent[] = []
  for await (const event of stream) events.push(event)
  return events
}
const ofType = <T extends OpenAI.Responses.ResponseStreamEvent['type']>(events: OpenAI.Responses.ResponseStreamEvent[], type: T) =>
  events.filter((e): e is Extract<OpenAI.Responses.ResponseStreamEvent, { type: T }> => e.type === type)

/** The fake's logprobs (chat's shape) as OpenAI's events carry them: token, logprob, top_logprobs of token and logprob. */
const asEventLogprobs = (entries: ReturnType<typeof logprobsFor>) =>
  entries.map(({ token, logprob, top_logprobs }) => ({ token, logprob, top_logprobs: top_logprobs.map((top) => ({ token: top.token, logprob: top.logprob })) }))

describe('refusals', () => {
  it('a streamed refusal is a refusal part: content_part.added, refusal.delta per piece, refusal.done, content_part.done', async () => {
    const events = await streamed({ model: 'fake/refuse', input: 'Help me with something bad' })
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      // One delta a word, as the fake streams the refusal.
      ...Array(words(REFUSAL).length).fill('response.refusal.delta'),
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    const [added] = ofType(events, 'response.output_item.added')
    const itemId = added.item.id!
    const at = { item_id: itemId, output_index: 0, content_index: 0 }
    expect(added.item).toEqual({ id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] })
    expect(ofType(events, 'response.content_part.added')[0]).toMatchObject({ ...at, part: { type: 'refusal', refusal: '' } })
    const deltas = ofType(events, 'response.refusal.delta')
    for (const delta of deltas) expect(delta).toMatchObject(at)
    expect(deltas.map((d) => d.delta).join('')).toBe(REFUSAL)
    expect(ofType(events, 'response.refusal.done')[0]).toMatchObject({ ...at, refusal: REFUSAL })
    const part = { type: 'refusal', refusal: REFUSAL }
    expect(ofType(events, 'response.content_part.done')[0]).toMatchObject({ ...at, part })
    const message = { id: itemId, type: 'message', role: 'assistant', status: 'completed', content: [part] }
    expect(ofType(events, 'response.output_item.done')[0]).toMatchObject({ output_index: 0, item: message })
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect(completed.response.status).toBe('completed')
    expect(completed.response.output).toEqual([message])

    // Stored as streamed.
    const stored = await client.responses.retrieve(completed.response.id)
    expect(stored.output).toEqual([message])
  })

  it('text then a refusal: the refusal part comes after the output_text part, at content_index 1; the SDK’s accumulator agrees', async () => {
    const events = await streamed({ model: 'fake/refuse-late', input: 'Help me with something bad' })
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(words(TEXT_BEFORE_REFUSAL).length).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.content_part.added',
      ...Array(words(REFUSAL).length).fill('response.refusal.delta'),
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    const partsAdded = ofType(events, 'response.content_part.added')
    expect(partsAdded.map((e) => [e.content_index, e.part])).toEqual([
      [0, { type: 'output_text', text: '', annotations: [] }],
      [1, { type: 'refusal', refusal: '' }],
    ])
    for (const delta of ofType(events, 'response.output_text.delta')) expect(delta).toMatchObject({ content_index: 0, logprobs: [] })
    for (const delta of ofType(events, 'response.refusal.delta')) expect(delta.content_index).toBe(1)
    expect(ofType(events, 'response.output_text.done')[0]).toMatchObject({ content_index: 0, text: TEXT_BEFORE_REFUSAL, logprobs: [] })
    expect(ofType(events, 'response.refusal.done')[0]).toMatchObject({ content_index: 1, refusal: REFUSAL })
    const content = [
      { type: 'output_text', text: TEXT_BEFORE_REFUSAL, annotations: [] },
      { type: 'refusal', refusal: REFUSAL },
    ]
    expect(ofType(events, 'response.content_part.done').map((e) => [e.content_index, e.part])).toEqual(content.map((part, i) => [i, part]))
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect(completed.response.output).toEqual([{ id: expect.any(String), type: 'message', role: 'assistant', status: 'completed', content }])

    // The SDK's stream helper applies each event at its content_index (it throws on a part of the wrong type; it adds `parsed`).
    const final = await client.responses.stream({ model: 'fake/refuse-late', input: 'Again' }).finalResponse()
    expect((final.output[0] as OpenAI.Responses.ResponseOutputMessage).content).toMatchObject(content)
    expect(final.output_text).toBe(TEXT_BEFORE_REFUSAL)

    // The whole answer has the same parts, in the same order.
    const whole = await client.responses.create({ model: 'fake/refuse-late', input: 'Once more' })
    expect(whole.output).toEqual([{ id: expect.any(String), type: 'message', role: 'assistant', status: 'completed', content }])
  })

  it('a whole refusal is the message’s refusal part, as streamed', async () => {
    const response = await client.responses.create({ model: 'fake/refuse', input: 'Help me with something bad' })
    expect(response.status).toBe('completed')
    expect(response.output).toEqual([
      { id: expect.any(String), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: REFUSAL }] },
    ])
    expect(response.output_text).toBe('')
  })
})

describe('logprobs', () => {
  it('streamed: chat is asked for logprobs and top_logprobs; each output_text.delta carries its chunk’s, the done event and the part all', async () => {
    const sent = fake.requests.length
    const input = 'Count to three'
    const events = await streamed({ model: 'fake/gpt-test', input, include: [LOGPROBS], top_logprobs: 2 })
    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({ logprobs: true, top_logprobs: 2 })

    const answer = `Hello from gpt-test: ${input}`
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(words(answer).length).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(ofType(events, 'response.content_part.added')[0].part).toEqual({ type: 'output_text', text: '', annotations: [], logprobs: [] })
    // The fake sends one word a chunk, with that word's logprobs.
    const deltas = ofType(events, 'response.output_text.delta')
    expect(deltas.map((d) => d.logprobs)).toEqual(words(answer).map((word) => asEventLogprobs(logprobsFor(word))))
    expect(deltas[0].logprobs).toEqual([{ token: 'Hello', logprob: -0.25, top_logprobs: [{ token: 'Hello', logprob: -0.25 }] }])

    const all = words(answer).flatMap((word) => logprobsFor(word))
    expect(all[0]).toEqual({
      token: 'Hello',
      logprob: -0.25,
      bytes: [72, 101, 108, 108, 111],
      top_logprobs: [{ token: 'Hello', logprob: -0.25, bytes: [72, 101, 108, 108, 111] }],
    })
    expect(ofType(events, 'response.output_text.done')[0]).toMatchObject({ text: answer, logprobs: asEventLogprobs(all) })
    const part = { type: 'output_text', text: answer, annotations: [], logprobs: all }
    expect(ofType(events, 'response.content_part.done')[0].part).toEqual(part)
    expect((ofType(events, 'response.output_item.done')[0].item as OpenAI.Responses.ResponseOutputMessage).content).toEqual([part])
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect((completed.response.output[0] as OpenAI.Responses.ResponseOutputMessage).content).toEqual([part])
  })

  it('streamed with a refusal: only the output text has logprobs (chat’s logprobs.refusal are not shown)', async () => {
    const events = await streamed({ model: 'fake/refuse-late', input: 'Hmm', include: [LOGPROBS] })
    const text = words(TEXT_BEFORE_REFUSAL)
    expect(ofType(events, 'response.output_text.delta').map((d) => d.logprobs)).toEqual(text.map((word) => asEventLogprobs(logprobsFor(word))))
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect((completed.response.output[0] as OpenAI.Responses.ResponseOutputMessage).content).toEqual([
      { type: 'output_text', text: TEXT_BEFORE_REFUSAL, annotations: [], logprobs: text.flatMap((word) => logprobsFor(word)) },
      { type: 'refusal', refusal: REFUSAL },
    ])
  })

  it('without include asking for them: chat is not asked (top_logprobs alone changes nothing), deltas carry [] and parts none', async () => {
    const sent = fake.requests.length
    const events = await streamed({ model: 'fake/gpt-test', input: 'No logprobs', top_logprobs: 3 })
    const [upstream] = chatsSince(sent)
    expect(upstream.body.logprobs).toBeUndefined()
    expect(upstream.body.top_logprobs).toBeUndefined()
    for (const delta of ofType(events, 'response.output_text.delta')) expect(delta.logprobs).toEqual([])
    expect(ofType(events, 'response.output_text.done')[0].logprobs).toEqual([])
    expect(ofType(events, 'response.content_part.done')[0].part).toEqual({ type: 'output_text', text: 'Hello from gpt-test: No logprobs', annotations: [] })
  })

  it('whole: the request asks chat for them; chat’s answer’s logprobs become the output_text part’s (whole.ts on chat’s own answer)', async () => {
    const sent = fake.requests.length
    const whole = await client.responses.create({ model: 'fake/gpt-test', input: 'Two words', include: [LOGPROBS], top_logprobs: 1 })
    expect(chatsSince(sent)[0].body).toMatchObject({ logprobs: true, top_logprobs: 1 })
    expect(whole.output_text).toBe('Hello from gpt-test: Two words')

    // The chat answer serveResponses reads for a whole response, and what whole.ts makes of it.
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'Two words' }], logprobs: true, top_logprobs: 1 }),
    })
    const choice = ((await res.json()) as any).choices[0]
    const answer = 'Hello from gpt-test: Two words'
    const request = { input: 'Two words', include: [LOGPROBS] } as ResponsesRequest
    const [message] = outputOfMessage(choice.message, 'completed', whole.id, choiceLogprobs(choice, request))
    expect(message.content).toEqual([{ type: 'output_text', text: answer, annotations: [], logprobs: logprobsFor(answer) }])
    // Not asked for: the part has none, as before.
    const [plain] = outputOfMessage(choice.message, 'completed', whole.id, choiceLogprobs(choice, { input: 'Two words' } as ResponsesRequest))
    expect(plain.content).toEqual([{ type: 'output_text', text: answer, annotations: [] }])
  })

  it('whole: the Response’s output_text part carries chat’s logprobs', async () => {
    const answer = 'Hello from gpt-test: Two words'
    const whole = await client.responses.create({ model: 'fake/gpt-test', input: 'Two words', include: [LOGPROBS], top_logprobs: 1 })
    expect((whole.output[0] as OpenAI.Responses.ResponseOutputMessage).content).toEqual([
      { type: 'output_text', text: answer, annotations: [], logprobs: logprobsFor(answer) },
    ])
  })

  it('top_logprobs outside 0–20, or not an integer, is a 400 naming it, before any provider is asked', async () => {
    const sent = fake.requests.length
    for (const top_logprobs of [21, -1, 1.5]) {
      const error = (await client.responses.create({ model: 'fake/gpt-test', input: 'x', include: [LOGPROBS], top_logprobs }).catch((e) => e)) as any
      expect(error, String(top_logprobs)).toBeInstanceOf(OpenAI.BadRequestError)
      expect(error.error, String(top_logprobs)).toEqual({
        message: 'top_logprobs: must be an integer from 0 to 20',
        type: 'invalid_request_error',
        param: 'top_logprobs',
        code: 'invalid_request',
      })
    }
    expect(chatsSince(sent)).toEqual([])
    // 0 and 20 are served.
    for (const top_logprobs of [0, 20]) {
      const response = await client.responses.create({ model: 'fake/gpt-test', input: 'x', include: [LOGPROBS], top_logprobs })
      expect(response.status).toBe('completed')
    }
  })
})
