import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

const json = { 'content-type': 'application/json' }
const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
const call = (id: string, city = 'Paris') => ({ id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } })
const user = { role: 'user', content: 'What is the weather in Paris and Lyon?' }

describe('tool messages must answer a tool call of an earlier assistant message', () => {
  let fake: FakeOpenAI
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: 'sk-tools' })
    t = await startGateway({
      providers: [
        openaiCompatible({
          slug: 'fake',
          name: 'Fake',
          baseURL: fake.url,
          apiKey: 'sk-tools',
          models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }],
        }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '10' })
  })
  afterAll(async () => {
    await t.close()
    await fake.close()
  })

  const post = (messages: unknown[], extra: Record<string, unknown> = {}) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'fake/gpt-test', messages, tools, ...extra }),
    })
  const credits = () => t.gateway.admin.getCredits(customer.user.org_id)

  /** Sends the messages and expects a 400 naming messages.<index>.tool_call_id, with no upstream call and no charge. */
  async function expectRefused(messages: unknown[], index: number, extra: Record<string, unknown> = {}) {
    const before = await credits()
    const sent = fake.requests.length
    const res = await post(messages, extra)
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body).toMatchObject({ error: { code: 400, type: 'invalid_request', param: `messages.${index}.tool_call_id` } })
    expect(fake.requests.length).toBe(sent)
    expect(await credits()).toEqual(before)
    return body.error.message as string
  }

  it('refuses a tool message whose id no assistant message declared, before any upstream call', async () => {
    const message = await expectRefused(
      [
        user,
        { role: 'assistant', content: null, tool_calls: [call('call_a')] },
        { role: 'tool', tool_call_id: 'call_a', content: '18 °C' },
        { role: 'tool', tool_call_id: 'call_x', content: '21 °C' },
      ],
      3,
    )
    expect(message).toContain('messages.3')
    expect(message).toContain('call_x')
  })

  it('refuses a tool message that comes before the assistant message declaring its id', async () => {
    await expectRefused(
      [
        user,
        { role: 'tool', tool_call_id: 'call_late', content: '18 °C' },
        { role: 'assistant', content: null, tool_calls: [call('call_late')] },
        { role: 'user', content: 'and now?' },
      ],
      1,
    )
  })

  it('refuses a tool message with no assistant message at all, also when streamed', async () => {
    await expectRefused([user, { role: 'tool', tool_call_id: 'call_none', content: '18 °C' }], 1, { stream: true })
  })

  it('refuses a tool message with an empty tool_call_id', async () => {
    await expectRefused([user, { role: 'assistant', content: null, tool_calls: [call('call_a')] }, { role: 'tool', tool_call_id: '', content: '18 °C' }], 2)
  })

  it('refuses a tool message without tool_call_id (the request schema)', async () => {
    const before = await credits()
    const sent = fake.requests.length
    const res = await post([user, { role: 'assistant', content: null, tool_calls: [call('call_a')] }, { role: 'tool', content: '18 °C' }])
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: 400, type: 'invalid_request' } })
    expect(fake.requests.length).toBe(sent)
    expect(await credits()).toEqual(before)
  })

  it('serves a correct tool round trip, whole and streamed', async () => {
    const messages = [
      user,
      { role: 'assistant', content: null, tool_calls: [call('call_1')] },
      { role: 'tool', tool_call_id: 'call_1', content: '18 °C and sunny' },
    ]
    const sent = fake.requests.length
    const whole = await post(messages)
    expect(whole.status).toBe(200)
    expect((await whole.json()).choices[0].message.content).toBe('The tool said: 18 °C and sunny')

    const streamed = await post(messages, { stream: true })
    expect(streamed.status).toBe(200)
    const { events } = await readSse(streamed)
    const text = events.map((e: any) => e.choices?.[0]?.delta?.content ?? '').join('')
    expect(text).toBe('The tool said: 18 °C and sunny')
    expect(fake.requests.length).toBe(sent + 2)
    expect(fake.requests.at(-1)!.body.messages).toHaveLength(3)
  })

  it('serves several tool calls answered in one go, after earlier rounds', async () => {
    const res = await post([
      user,
      { role: 'assistant', content: null, tool_calls: [call('call_p', 'Paris'), call('call_l', 'Lyon')] },
      { role: 'tool', tool_call_id: 'call_l', content: '21 °C' },
      { role: 'tool', tool_call_id: 'call_p', content: '18 °C' },
      { role: 'assistant', content: 'Paris 18 °C, Lyon 21 °C. Anything else?' },
      { role: 'user', content: 'And Nice?' },
      { role: 'assistant', content: null, tool_calls: [call('call_n', 'Nice')] },
      { role: 'tool', tool_call_id: 'call_n', content: '24 °C' },
    ])
    expect(res.status).toBe(200)
    expect((await res.json()).choices[0].message.content).toBe('The tool said: 24 °C')
  })
})
