/**
 * The `redact` rule (docs/policies.md#personal-data) over real HTTP on 127.0.0.1 against the fake OpenAI and Anthropic
 * APIs: on input, personal data is replaced before the request leaves (chat, /messages passed on natively, /responses,
 * embeddings); on output, in whole answers and in streams where a phone number straddles several chunks (chat,
 * /messages, /responses, /completions); only counts are recorded with the generation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropic, openai } from '../../src/index'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

const ANTHROPIC_KEY = 'sk-ant-api03-redaction-0123456789'
const HAIKU = anthropicModels.find((m) => m.id === 'anthropic/claude-haiku-4.5')!
const PLAIN = { id: 'test/plain', upstreamId: 'plain', pricing: { prompt: '0.000001', completion: '0.000002' } }
const EMBED = { id: 'test/embed', upstreamId: 'text-embedding-3-small', endpoints: ['/embeddings'], pricing: { prompt: '0.00000002', completion: '0' } }
// A phone number of four words (the fakes stream a word a chunk: it straddles four chunks), an e-mail address and a
// card number that passes the Luhn check.
const PERSONAL = 'call +44 20 7946 0958 or mail ada@example.com, card 4111 1111 1111 1111'
const REDACTED = 'call [REDACTED_PHONE] or mail [REDACTED_EMAIL], card [REDACTED_CARD]'

let upstream: FakeOpenAI
let claude: FakeAnthropic
let t: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>
/** A key whose rule redacts what goes in; customer's own key redacts what comes out. */
let inputKey: string

beforeAll(async () => {
  upstream = await startFakeOpenAI({ apiKey: 'sk-redaction' })
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY })
  t = await startGateway({
    providers: [
      openai({ apiKey: 'sk-redaction', baseURL: upstream.url, models: [PLAIN, EMBED] }),
      anthropic({ apiKey: ANTHROPIC_KEY, baseURL: claude.url, models: [HAIKU] }),
    ],
    retry: { maxRetries: 0 },
  })
  customer = await createCustomer(t.gateway, { credits: '5' })
  await t.gateway.admin.setKeyRules(customer.key, { redact: { input: false, output: true } })
  inputKey = (await t.gateway.admin.issueKey({ userId: customer.user.id, label: 'input', rules: { redact: { input: true, output: false } } })).key
})
afterAll(async () => {
  await t?.close()
  await Promise.all([upstream?.close(), claude?.close()])
})

const post = (path: string, body: unknown, key = customer.key) =>
  t.request(`/api/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })
const policiesOf = async (id: string) =>
  (await (await t.request(`/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${customer.key}` } })).json()).data.policies
const user = (content: string) => [{ role: 'user', content }]

describe('on input', () => {
  it('chat and embeddings: the provider never sees the personal data; the counts are recorded', async () => {
    const res = await post('/chat/completions', { model: 'test/plain', messages: user(PERSONAL) }, inputKey)
    expect(res.status).toBe(200)
    expect(upstream.requests.at(-1)!.body.messages[0].content).toBe(REDACTED)
    expect(await policiesOf((await res.json()).id)).toEqual([
      { policy: 'redact', stage: 'request', action: 'rewrite', note: { text: true, card: 1, email: 1, phone: 1 } },
    ])
    const embedded = await post('/embeddings', { model: 'test/embed', input: ['ada@example.com', 'no personal data'] }, inputKey)
    expect(embedded.status).toBe(200)
    expect(upstream.requests.at(-1)!.body.input).toEqual(['[REDACTED_EMAIL]', 'no personal data'])
  })

  it('/messages passed on natively to Anthropic and /responses: redacted in the request they send', async () => {
    const before = claude.requests.length
    const res = await post(
      '/messages',
      { model: 'anthropic/claude-haiku-4.5', max_tokens: 100, system: 'IBAN DE89 3704 0044 0532 0130 00', messages: user(PERSONAL) },
      inputKey,
    )
    expect(res.status).toBe(200)
    const sent = claude.requests.slice(before).find((r) => r.path === '/v1/messages')!.body
    expect(sent.system).toBe('IBAN [REDACTED_IBAN]')
    expect(sent.messages[0].content).toBe(REDACTED)
    const responses = await post('/responses', { model: 'test/plain', instructions: 'Reach me at bob@example.org', input: PERSONAL }, inputKey)
    expect(responses.status).toBe(200)
    // OpenAI speaks the Responses API: the request is passed on natively, redacted.
    const native = upstream.requests.at(-1)!
    expect(native.path).toBe('/v1/responses')
    expect(native.body.instructions).toBe('Reach me at [REDACTED_EMAIL]')
    expect(native.body.input[0].content).toEqual([{ type: 'input_text', text: REDACTED }])
  })
})

describe('on output', () => {
  it('a chat stream: the phone number straddling four chunks is redacted, the stream stays valid, counts recorded', async () => {
    const res = await post('/chat/completions', { model: 'test/plain', stream: true, messages: user(PERSONAL) })
    expect(res.status).toBe(200)
    // The provider got the text as it was (this key redacts output only) and answered it back.
    expect(upstream.requests.at(-1)!.body.messages[0].content).toBe(PERSONAL)
    const { events, raw } = await readSse(res)
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true)
    const content = events.filter((e) => e.choices?.length).map((e) => e.choices[0].delta.content ?? '')
    expect(content.join('')).toBe(`Hello from plain: ${REDACTED}`)
    expect(content.join('')).not.toContain('7946')
    expect(await policiesOf(events[0].id)).toEqual([{ policy: 'redact', stage: 'stream', action: 'note', note: { card: 1, email: 1, phone: 1 } }])
  })

  it('a whole chat answer', async () => {
    const res = await post('/chat/completions', { model: 'test/plain', messages: user(PERSONAL) })
    const body = await res.json()
    expect(body.choices[0].message.content).toBe(`Hello from plain: ${REDACTED}`)
    expect(await policiesOf(body.id)).toEqual([{ policy: 'redact', stage: 'response', action: 'rewrite', note: { card: 1, email: 1, phone: 1 } }])
  })

  it("/messages streamed (served through the translation: Anthropic's events), /responses and /completions streamed", async () => {
    const messages = await post('/messages', { model: 'anthropic/claude-haiku-4.5', max_tokens: 100, stream: true, messages: user(PERSONAL) })
    expect(messages.status).toBe(200)
    const events = (await messages.text())
      .split('\n\n')
      .filter(Boolean)
      .map((b) => JSON.parse(b.split('\n')[1].slice(6)))
    expect(
      events
        .filter((e) => e.type === 'content_block_delta')
        .map((e) => e.delta.text)
        .join(''),
    ).toBe(`Hello from claude-haiku-4-5: ${REDACTED}`)
    expect(events.at(-1).type).toBe('message_stop')

    const responses = await post('/responses', { model: 'test/plain', input: PERSONAL, stream: true })
    const streamed = (await readSse(responses)).events
    expect(
      streamed
        .filter((e) => e.type === 'response.output_text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe(`Hello from plain: ${REDACTED}`)

    const completions = await post('/completions', { model: 'test/plain', prompt: PERSONAL, stream: true })
    const chunks = (await readSse(completions)).events.filter((e) => e.choices?.length)
    expect(chunks.map((e) => e.choices[0].text).join('')).toBe(`Hello from plain: ${REDACTED}`)
  })

  it('text without personal data passes unchanged, and nothing is recorded', async () => {
    const res = await post('/chat/completions', { model: 'test/plain', messages: user('nothing personal: 2026-11-27 12:00, order 123456789') })
    const body = await res.json()
    expect(body.choices[0].message.content).toBe('Hello from plain: nothing personal: 2026-11-27 12:00, order 123456789')
    expect(await policiesOf(body.id)).toEqual([])
  })
})
