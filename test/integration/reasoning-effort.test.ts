/**
 * Reasoning over real HTTP on 127.0.0.1, against the fake upstreams of test/fakes/*.ts: how `reasoning.effort` (and
 * `reasoning.max_tokens`, `reasoning.exclude`) reach each provider (docs/reasoning.md), and how a streamed Anthropic
 * reasoning answer is sent (once, as `delta.reasoning` and as matching `delta.reasoning_details` pieces).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { geminiModels } from '../../src/providers/models/gemini-models'
import { anthropic } from '../../src/providers/anthropic'
import { gemini } from '../../src/providers/gemini'
import { openai } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { ProviderModel } from '../../src/contracts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
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
    const res = await post({
      model: 'anthropic/claude-sonnet-5.5',
      stream: true,
      messages: [{ role: 'user', content: 'Why is grass green?' }],
      reasoning: { effort: 'high' },
    })
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    const chunks = events.filter((e) => e !== '[DONE]')
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta)
    const thought = 'The user asked about Why is grass green?; I should answer plainly.'
    const words = thought.split(' ').map((w, i) => (i ? ` ${w}` : w))
    const signature = expect.stringMatching(/^fakesig_/)
    // The exact chunks, in order: the role, one per thinking delta (both fields, same text), the signature, the text.
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' })
    expect(deltas.slice(1, 1 + words.length)).toEqual(
      words.map((text) => ({
        reasoning: text,
        reasoning_details: [{ type: 'reasoning.text', text, format: 'anthropic-claude-v1', index: 0 }],
      })),
    )
    expect(deltas[1 + words.length]).toEqual({ reasoning_details: [{ type: 'reasoning.text', text: '', signature, format: 'anthropic-claude-v1', index: 0 }] })
    expect(
      deltas
        .slice(2 + words.length)
        .map((d) => d.content ?? '')
        .join(''),
    ).toBe('Hello from claude-sonnet-5-5: Why is grass green?')
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
      role: 'assistant',
      content: null,
      reasoning,
      reasoning_details: details,
      tool_calls: [
        { id: call[0].id, type: 'function', function: { name: 'get_weather', arguments: call.map((c: any) => c.function?.arguments ?? '').join('') } },
      ],
    }
    const second = await post({
      model: 'anthropic/claude-haiku-4.5',
      messages: [...messages, assistant, { role: 'tool', tool_call_id: call[0].id, content: 'Sunny' }],
      tools: [weather],
      reasoning: { max_tokens: 2048 },
    })
    expect(second.status).toBe(200)
    expect(lastSent().body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: reasoning, signature: expect.stringMatching(/^fakesig_/) })
  })

  it('with the reasoning excluded, streams no thinking and one signed entry per block', async () => {
    const res = await post({
      model: 'anthropic/claude-sonnet-5.5',
      stream: true,
      messages: [{ role: 'user', content: 'Quiet' }],
      reasoning: { effort: 'low', exclude: true },
    })
    const deltas = (await readSse(res)).events.filter((e) => e !== '[DONE]' && e.choices.length).map((e: any) => e.choices[0].delta)
    expect(deltas.some((d) => d.reasoning)).toBe(false)
    expect(deltas.flatMap((d) => d.reasoning_details ?? [])).toEqual([
      { type: 'reasoning.text', text: '', signature: expect.stringMatching(/^fakesig_/), format: 'anthropic-claude-v1', index: 0 },
    ])
  })
})

describe('reasoning.effort, mapped per provider (docs/reasoning.md)', () => {
  const OPENAI_KEY = 'sk-openai-test'
  const GEMINI_KEY = 'AIzaSy-test-key-0123456789'
  const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
  const gpt = (id: string, reasoning?: ProviderModel['reasoning']): ProviderModel => ({
    id: `openai/${id}`,
    upstreamId: id,
    pricing,
    ...(reasoning ? { reasoning } : {}),
  })
  let openaiFake: FakeOpenAI
  let anthropicFake: FakeAnthropic
  let geminiFake: FakeGemini
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>

  const ask = async (model: string, extra: Record<string, unknown>) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Think' }], ...extra }),
    })
    const text = await res.text()
    expect(res.status, text).toBe(200)
  }
  const sentOpenAI = () => openaiFake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body
  const sentAnthropic = () => anthropicFake.requests.filter((r) => r.path === '/v1/messages').at(-1)!.body
  const sentGemini = () => geminiFake.requests.filter((r) => r.path.includes('generateContent') || r.path.includes('GenerateContent')).at(-1)!.body

  beforeAll(async () => {
    openaiFake = await startFakeOpenAI({ apiKey: OPENAI_KEY, models: ['local-thinker'] })
    anthropicFake = await startFakeAnthropic({ apiKey: KEY })
    geminiFake = await startFakeGemini({ apiKey: GEMINI_KEY })
    t = await startGateway({
      providers: [
        openai({
          apiKey: OPENAI_KEY,
          baseURL: openaiFake.url,
          models: [
            gpt('gpt-5', { efforts: ['minimal', 'low', 'medium', 'high'] }),
            gpt('o3', { efforts: ['low', 'medium', 'high'] }),
            gpt('gpt-6', { efforts: ['none', 'low', 'medium', 'high', 'xhigh', 'max'] }),
            gpt('deepseek-r1', { mandatory: true }),
            gpt('gpt-4o'),
          ],
        }),
        openaiCompatible({ slug: 'local', name: 'Local', baseURL: openaiFake.url, apiKey: OPENAI_KEY, discover: true }),
        anthropic({ apiKey: KEY, baseURL: anthropicFake.url, models: anthropicModels }),
        gemini({ apiKey: GEMINI_KEY, baseURL: geminiFake.url, models: geminiModels }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '50' })
  })
  afterAll(async () => {
    await t?.close()
    await openaiFake?.close()
    await anthropicFake?.close()
    await geminiFake?.close()
  })

  it('OpenAI-compatible: reasoning_effort, the nearest effort the model lists (a tie goes up); none for a model without efforts', async () => {
    const cases: [string, Record<string, unknown>, string | undefined][] = [
      ['openai/gpt-5', { reasoning: { effort: 'none' } }, 'minimal'],
      ['openai/gpt-5', { reasoning: { effort: 'minimal' } }, 'minimal'],
      ['openai/gpt-5', { reasoning: { effort: 'xhigh' } }, 'high'],
      ['openai/gpt-5', { reasoning: { effort: 'max' } }, 'high'],
      ['openai/gpt-5', { reasoning_effort: 'low' }, 'low'],
      ['openai/gpt-5', { reasoning: { enabled: false } }, 'minimal'],
      ['openai/gpt-5', { reasoning: { max_tokens: 20_000 } }, 'high'],
      ['openai/gpt-5', { reasoning: { max_tokens: 2_000, exclude: true } }, 'low'],
      ['openai/gpt-5', { reasoning: { effort: null, enabled: true } }, undefined],
      ['openai/o3', { reasoning: { effort: 'minimal' } }, 'low'],
      ['openai/o3', { reasoning: { effort: 'none' } }, 'low'],
      ['openai/gpt-6', { reasoning: { effort: 'none' } }, 'none'],
      ['openai/gpt-6', { reasoning: { effort: 'minimal' } }, 'low'],
      ['openai/gpt-6', { reasoning: { effort: 'xhigh' } }, 'xhigh'],
      ['openai/deepseek-r1', { reasoning: { effort: 'high' } }, undefined],
      ['openai/gpt-4o', { reasoning: { effort: 'high' }, reasoning_effort: 'high' }, undefined],
      // A model the catalogue does not know (discovered from the host): the effort as asked.
      ['local/local-thinker', { reasoning: { effort: 'xhigh' } }, 'xhigh'],
    ]
    for (const [model, extra, expected] of cases) {
      await ask(model, { ...extra, include_reasoning: true })
      const sent = sentOpenAI()
      expect(sent.reasoning_effort, `${model} ${JSON.stringify(extra)}`).toBe(expected)
      expect(sent).not.toHaveProperty('reasoning')
      if (model.startsWith('openai/')) expect(sent).not.toHaveProperty('include_reasoning')
    }
  })

  it('Anthropic, budget models: budget_tokens = max_tokens × the effort share, within 1,024 and below max_tokens; none turns thinking off', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [
        { max_tokens: 10_000, reasoning: { effort: 'minimal' } },
        { max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 1_024 } },
      ],
      [
        { max_tokens: 10_000, reasoning: { effort: 'low' } },
        { max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 2_000 } },
      ],
      [
        { max_tokens: 10_000, reasoning: { effort: 'medium' } },
        { max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 5_000 } },
      ],
      [
        { max_tokens: 10_000, reasoning: { effort: 'high' } },
        { max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 8_000 } },
      ],
      [
        { max_tokens: 10_000, reasoning: { effort: 'xhigh' } },
        { max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 9_500 } },
      ],
      [
        { max_tokens: 10_000, reasoning_effort: 'max' },
        { max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 9_500 } },
      ],
      // Too little room for the smallest budget: max_tokens grows by it, so the answer keeps its 1,000.
      [
        { max_tokens: 1_000, reasoning: { effort: 'low' } },
        { max_tokens: 2_024, thinking: { type: 'enabled', budget_tokens: 1_024 } },
      ],
      // reasoning.max_tokens is the budget; exclude omits the thinking text.
      [
        { max_tokens: 10_000, reasoning: { max_tokens: 3_000, exclude: true } },
        { max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 3_000, display: 'omitted' } },
      ],
    ]
    for (const [extra, expected] of cases) {
      await ask('anthropic/claude-haiku-4.5', extra)
      expect(sentAnthropic(), JSON.stringify(extra)).toMatchObject(expected)
    }
    for (const off of [{ reasoning: { effort: 'none' } }, { reasoning_effort: 'none' }, { reasoning: { enabled: false } }]) {
      await ask('anthropic/claude-haiku-4.5', { max_tokens: 10_000, ...off })
      expect(sentAnthropic().thinking).toEqual({ type: 'disabled' })
    }
  })

  it('Anthropic, adaptive models: output_config.effort (minimal → low, xhigh, max as they are); none → disabled, or left out where thinking is always on', async () => {
    const cases: [string, string][] = [
      ['minimal', 'low'],
      ['low', 'low'],
      ['medium', 'medium'],
      ['high', 'high'],
      ['xhigh', 'xhigh'],
      ['max', 'max'],
    ]
    for (const [effort, expected] of cases) {
      await ask('anthropic/claude-sonnet-5.5', { reasoning: { effort } })
      expect(sentAnthropic(), effort).toMatchObject({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: expected } })
    }
    await ask('anthropic/claude-sonnet-5.5', { reasoning: { effort: 'none' } })
    expect(sentAnthropic().thinking).toEqual({ type: 'disabled' })
    expect(sentAnthropic()).not.toHaveProperty('output_config')
    await ask('anthropic/claude-opus-5.5', { reasoning: { effort: 'none' } })
    expect(sentAnthropic()).not.toHaveProperty('thinking')
  })

  it('Gemini: thinkingBudget on 2.5 (0 or the least to turn it off), thinkingLevel on 3 (the nearest level the model offers)', async () => {
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['google/gemini-2.5-flash', { reasoning: { effort: 'none' } }, { thinkingBudget: 0, includeThoughts: false }],
      ['google/gemini-2.5-flash', { reasoning: { effort: 'minimal' } }, { thinkingBudget: 512, includeThoughts: true }],
      ['google/gemini-2.5-flash', { reasoning: { effort: 'medium' } }, { thinkingBudget: 8_192 }],
      ['google/gemini-2.5-flash', { reasoning: { effort: 'xhigh' } }, { thinkingBudget: 24_576 }],
      ['google/gemini-2.5-flash', { reasoning: { max_tokens: 3_000, exclude: true } }, { thinkingBudget: 3_000, includeThoughts: false }],
      ['google/gemini-2.5-pro', { reasoning: { effort: 'none' } }, { thinkingBudget: 128, includeThoughts: false }],
      ['google/gemini-2.5-pro', { reasoning: { effort: 'xhigh' } }, { thinkingBudget: 32_768 }],
      ['google/gemini-2.5-pro', { reasoning_effort: 'max' }, { thinkingBudget: 32_768 }],
      ['google/gemini-3.8-flash', { reasoning: { effort: 'minimal' } }, { thinkingLevel: 'LOW' }],
      ['google/gemini-3.8-flash', { reasoning: { effort: 'none' } }, { thinkingLevel: 'LOW', includeThoughts: false }],
      ['google/gemini-3.8-flash', { reasoning: { effort: 'xhigh' } }, { thinkingLevel: 'HIGH' }],
      ['google/gemini-3.5-flash', { reasoning: { effort: 'minimal' } }, { thinkingLevel: 'MINIMAL' }],
      ['google/gemini-3.5-flash', { reasoning: { effort: 'none' } }, { thinkingLevel: 'MINIMAL' }],
    ]
    for (const [model, extra, expected] of cases) {
      await ask(model, extra)
      const thinking = sentGemini().generationConfig.thinkingConfig
      expect(thinking, `${model} ${JSON.stringify(extra)}`).toMatchObject(expected)
      expect(thinking.thinkingLevel === undefined || thinking.thinkingBudget === undefined).toBe(true)
    }
  })

  it('refuses an effort no provider knows, naming the field', async () => {
    for (const [extra, param] of [
      [{ reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
      [{ reasoning_effort: 'turbo' }, 'reasoning_effort'],
    ] as const) {
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        body: JSON.stringify({ model: 'openai/gpt-5', messages: [{ role: 'user', content: 'x' }], ...extra }),
      })
      expect(res.status).toBe(400)
      expect((await res.json()).error.param).toBe(param)
    }
  })
})
