/**
 * Reasoning over real HTTP on 127.0.0.1, against the fake upstreams of test/fakes/*.ts: how `reasoning.effort` (and
 * `reasoning.max_tokens`, `reasoning.exclude`) reach each provider (docs/reasoning.md), and how a streamed Anthropic
 * reasoning answer is sent (once, as `delta.reasoning` and as matching `delta.reasoning_details` pieces).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/catalogue/anthropic-models'
import { anthropic } from '../../src/providers/anthropic'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

const KEY = 'sk-ant-api03-test-key-0123456789'
const json = { 'content-type': 'application/json' }

/**
 * What `@openrouter/ai-sdk-provider` (2.x, `doStream`) shows as reasoning: before the text starts, the text of a
 * chunk's `reasoning.text` details when it has any details, else its `delta.reasoning`. Its reasoning_details
 * accumulate by appending each text entry to the previous one (signature kept from the first that has one).
 */
function readAsAiSdkProvider(chunks: any[]) {
  let shown = ''
  let textStarted = false
  const accumulated: any[] = []
  for (const chunk of chunks) {
    const delta = chunk.choices?.[0]?.delta
    if (!delta) continue
    if (delta.reasoning_details?.length) {
      for (const detail of delta.reasoning_details) {
        const last = accumulated.at(-1)
        if (detail.type === 'reasoning.text' && last?.type === 'reasoning.text') {
          last.text = (last.text || '') + (detail.text || '')
          last.signature = last.signature || detail.signature
        } else accumulated.push({ ...detail })
      }
      if (!textStarted) for (const detail of delta.reasoning_details) if (detail.type === 'reasoning.text') shown += detail.text || ''
    } else if (delta.reasoning && !textStarted) shown += delta.reasoning
    if (delta.content) textStarted = true
  }
  return { shown, accumulated }
}

describe('a streamed Anthropic reasoning answer', () => {
  let fake: FakeAnthropic
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>
  const post = (body: unknown) => t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...customer.auth, ...json }, body: JSON.stringify(body) })
  const lastSent = () => fake.requests.filter((r) => r.path === '/v1/messages').at(-1)!

  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: KEY })
    t = await startGateway({ providers: [anthropic({ apiKey: KEY, baseURL: fake.url, models: anthropicModels })] })
    customer = await createCustomer(t.gateway, { credits: '50' })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })

  it('sends each thinking piece once, as delta.reasoning and the same text in reasoning_details, then the signature once', async () => {
    const res = await post({ model: 'anthropic/claude-sonnet-5.5', stream: true, messages: [{ role: 'user', content: 'Why is grass green?' }], reasoning: { effort: 'high' } })
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    const chunks = events.filter((e) => e !== '[DONE]')
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta)
    const thought = 'The user asked about Why is grass green?; I should answer plainly.'
    const words = thought.split(' ').map((w, i) => (i ? ` ${w}` : w))
    const signature = expect.stringMatching(/^fakesig_/)
    // The exact chunks, in order: the role, one per thinking delta (both fields, same text), the signature, the text.
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' })
    expect(deltas.slice(1, 1 + words.length)).toEqual(words.map((text) => ({
      reasoning: text,
      reasoning_details: [{ type: 'reasoning.text', text, format: 'anthropic-claude-v1', index: 0 }],
    })))
    expect(deltas[1 + words.length]).toEqual({ reasoning_details: [{ type: 'reasoning.text', text: '', signature, format: 'anthropic-claude-v1', index: 0 }] })
    expect(deltas.slice(2 + words.length).map((d) => d.content ?? '').join('')).toBe('Hello from claude-sonnet-5-5: Why is grass green?')
    expect(deltas.slice(2 + words.length).some((d) => d.reasoning !== undefined || d.reasoning_details !== undefined)).toBe(false)

    // A client reading delta.reasoning alone, or reading both the way @openrouter/ai-sdk-provider does, shows it once.
    expect(deltas.map((d) => d.reasoning ?? '').join('')).toBe(thought)
    const { shown, accumulated } = readAsAiSdkProvider(chunks)
    expect(shown).toBe(thought)
    expect(accumulated).toEqual([{ type: 'reasoning.text', text: thought, signature, format: 'anthropic-claude-v1', index: 0 }])
  })

  it('takes the pieces back as they were streamed: the thinking block reaches Anthropic whole, with its signature', async () => {
    const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }
    const messages: any[] = [{ role: 'user', content: 'Paris' }]
    const first = await post({ model: 'anthropic/claude-haiku-4.5', stream: true, messages, tools: [weather], reasoning: { max_tokens: 2048 } })
    const chunks = (await readSse(first)).events.filter((e) => e !== '[DONE]')
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta)
    const call = deltas.flatMap((d) => d.tool_calls ?? [])
    const details = deltas.flatMap((d) => d.reasoning_details ?? [])
    expect(details.length).toBeGreaterThan(2)
    const reasoning = deltas.map((d) => d.reasoning ?? '').join('')
    const assistant = {
      role: 'assistant', content: null, reasoning, reasoning_details: details,
      tool_calls: [{ id: call[0].id, type: 'function', function: { name: 'get_weather', arguments: call.map((c: any) => c.function?.arguments ?? '').join('') } }],
    }
    const second = await post({ model: 'anthropic/claude-haiku-4.5', messages: [...messages, assistant, { role: 'tool', tool_call_id: call[0].id, content: 'Sunny' }], tools: [weather], reasoning: { max_tokens: 2048 } })
    expect(second.status).toBe(200)
    expect(lastSent().body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: reasoning, signature: expect.stringMatching(/^fakesig_/) })
  })

  it('with the reasoning excluded, streams no thinking and one signed entry per block', async () => {
    const res = await post({ model: 'anthropic/claude-sonnet-5.5', stream: true, messages: [{ role: 'user', content: 'Quiet' }], reasoning: { effort: 'low', exclude: true } })
    const deltas = (await readSse(res)).events.filter((e) => e !== '[DONE]' && e.choices.length).map((e: any) => e.choices[0].delta)
    expect(deltas.some((d) => d.reasoning)).toBe(false)
    expect(deltas.flatMap((d) => d.reasoning_details ?? [])).toEqual([{ type: 'reasoning.text', text: '', signature: expect.stringMatching(/^fakesig_/), format: 'anthropic-claude-v1', index: 0 }])
  })
})
