/**
 * OpenRouter's request fields over real HTTP on 127.0.0.1, against the fake upstreams of test/fakes/*.ts, checking what
 * reached each upstream: the fields the gateway consumes never do
 * (docs/limits.md#openrouters-fields-the-gateway-consumes), part-level cache_control reaches Anthropic only, and `n`
 * reaches the providers that can answer several choices, billed for all of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { geminiModels } from '../../src/providers/models/gemini-models'
import { anthropic } from '../../src/providers/anthropic'
import { gemini } from '../../src/providers/gemini'
import { openai } from '../../src/providers/openai'
import type { Provider, ProviderModel, UpstreamChunk } from '../../src/contracts'
import { readSse } from '../helpers/sse'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const ANTHROPIC_KEY = 'sk-ant-api03-test-key-0123456789'
const GEMINI_KEY = 'AIzaSy-test-key-0123456789'
const OPENAI_KEY = 'sk-openai-test'
const json = { 'content-type': 'application/json' }
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const gpt = (id: string, extra: Partial<ProviderModel> = {}): ProviderModel => ({ id: `openai/${id}`, upstreamId: id, pricing, ...extra })

/** Every field OpenRouter's clients may send that the gateway consumes (docs/limits.md#openrouters-fields-the-gateway-consumes). */
const CONSUMED = {
  plugins: [{ id: 'web', enabled: false }],
  session_id: 'conversation-42',
  trace: { trace_id: 'trace-1', span_name: 'answer', custom: { depth: 2 } },
  metadata: { team: 'search', run: '7' },
  debug: { echo_upstream_body: false },
  top_a: 0.2,
  image_config: { aspect_ratio: '16:9' },
  usage: { include: true },
  transforms: ['middle-out'],
  route: 'fallback',
}

let openaiFake: FakeOpenAI
let anthropicFake: FakeAnthropic
let geminiFake: FakeGemini
let t: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>

/** A provider that answers every one of `n` choices (`choice number i`) and reports no usage: billed by estimate. */
const multi: Provider = {
  slug: 'multi',
  name: 'Multi',
  maxChoices: 4,
  models: [{ id: 'multi/choices', upstreamId: 'choices', pricing }],
  async chat(request) {
    const n = (request.n as number | undefined) ?? 1
    return {
      id: 'multi-1',
      choices: Array.from({ length: n }, (_, i) => ({
        index: i,
        message: { role: 'assistant' as const, content: `choice number ${i}` },
        finish_reason: 'stop',
      })),
    }
  },
  async chatStream(request) {
    const n = (request.n as number | undefined) ?? 1
    return (async function* (): AsyncIterable<UpstreamChunk> {
      for (let i = 0; i < n; i++)
        yield { id: 'multi-1', choices: [{ index: i, delta: { role: 'assistant', content: `choice number ${i}` }, finish_reason: null }] }
      for (let i = 0; i < n; i++) yield { id: 'multi-1', choices: [{ index: i, delta: {}, finish_reason: 'stop' }] }
    })()
  },
}

const post = (body: Record<string, unknown>) =>
  t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...customer.auth, ...json }, body: JSON.stringify(body) })
const ask = (model: string, extra: Record<string, unknown> = {}) => post({ model, messages: [{ role: 'user', content: 'hello fields' }], ...extra })
const lastOpenAI = () => openaiFake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body
const lastAnthropic = () => anthropicFake.requests.filter((r) => r.path === '/v1/messages').at(-1)!.body
const lastGemini = () => geminiFake.requests.filter((r) => r.path.includes(':generateContent') || r.path.includes(':streamGenerateContent')).at(-1)!.body

beforeAll(async () => {
  openaiFake = await startFakeOpenAI({ apiKey: OPENAI_KEY })
  anthropicFake = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY })
  geminiFake = await startFakeGemini({ apiKey: GEMINI_KEY })
  t = await startGateway({
    providers: [
      openai({ apiKey: OPENAI_KEY, baseURL: openaiFake.url, models: [gpt('gpt-test'), gpt('gpt-top-a', { supportedParameters: ['top_a', 'temperature'] })] }),
      anthropic({ apiKey: ANTHROPIC_KEY, baseURL: anthropicFake.url, models: anthropicModels }),
      gemini({ apiKey: GEMINI_KEY, baseURL: geminiFake.url, models: geminiModels }),
      multi,
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

describe('fields the gateway consumes', () => {
  it('never reach an OpenAI-compatible upstream, whole or streamed', async () => {
    for (const stream of [false, true]) {
      const res = await ask('openai/gpt-test', { ...CONSUMED, stream })
      expect(res.status).toBe(200)
      await res.text()
      const sent = lastOpenAI()
      for (const field of Object.keys(CONSUMED)) expect(sent, `${field} (stream: ${stream})`).not.toHaveProperty(field)
      expect(sent).toMatchObject({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello fields' }] })
    }
  })

  it('never reach Anthropic or Gemini (whose fakes refuse unknown fields as the real APIs do)', async () => {
    const claude = await ask('anthropic/claude-sonnet-5.5', CONSUMED)
    expect(claude.status).toBe(200)
    for (const field of Object.keys(CONSUMED)) expect(lastAnthropic()).not.toHaveProperty(field)
    const flash = await ask('google/gemini-2.5-flash', CONSUMED)
    expect(flash.status).toBe(200)
    expect(JSON.stringify(lastGemini())).not.toMatch(/top_a|topA|session|trace|middle-out|aspect/)
  })

  it('top_a reaches only a model whose catalogue entry lists it', async () => {
    await (await ask('openai/gpt-top-a', { top_a: 0.3 })).text()
    expect(lastOpenAI().top_a).toBe(0.3)
    await (await ask('openai/gpt-test', { top_a: 0.3 })).text()
    expect(lastOpenAI()).not.toHaveProperty('top_a')
  })

  it('refuses a plugin the gateway does not run, naming it, before any upstream call', async () => {
    const before = openaiFake.requests.length
    for (const plugins of [
      [{ id: 'web' }],
      [
        { id: 'file-parser', enabled: false },
        { id: 'response-healing', enabled: true },
      ],
    ]) {
      const res = await ask('openai/gpt-test', { plugins })
      expect(res.status).toBe(400)
      const { error } = await res.json()
      const at = plugins.length - 1
      expect(error).toMatchObject({ type: 'invalid_request', param: `plugins.${at}` })
      expect(error.message).toContain(`the "${plugins[at].id}" plugin is not run by this gateway`)
    }
    expect(openaiFake.requests.length).toBe(before)
  })

  it('bounds their sizes (docs/limits.md)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ session_id: 's'.repeat(129) }, 'session_id'],
      [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      [{ metadata: { key: 'v'.repeat(513) } }, 'metadata.key'],
      [{ trace: { big: 'x'.repeat(17 * 1024) } }, 'trace'],
      [{ plugins: Array.from({ length: 17 }, () => ({ id: 'web', enabled: false })) }, 'plugins'],
      [{ transforms: Array.from({ length: 9 }, () => 'middle-out') }, 'transforms'],
      [{ top_a: 1.5 }, 'top_a'],
      [{ image_config: { size: 'x'.repeat(65) } }, 'image_config.size'],
    ]
    for (const [extra, param] of cases) {
      const res = await ask('openai/gpt-test', extra)
      expect(res.status, param).toBe(400)
      expect((await res.json()).error.param, param).toBe(param)
    }
  })
})

describe('cache_control on content parts, messages and tools', () => {
  const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
  const ephemeral = { type: 'ephemeral' }
  const tool = {
    type: 'function',
    function: { name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } },
    cache_control: ephemeral,
  }
  const messages = [
    { role: 'system', content: [{ type: 'text', text: 'A long, stable system prompt.', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Look at this' },
        { type: 'image_url', image_url: { url: PNG }, cache_control: ephemeral },
        { type: 'text', text: 'and answer', cache_control: { type: 'ephemeral', ttl: '5m' } },
      ],
    },
    { role: 'assistant', content: 'Noted.', cache_control: ephemeral },
    { role: 'user', content: 'The answer, please.', cache_control: ephemeral },
  ]

  it('reach Anthropic as breakpoints on the blocks they mark (ttl left out: writes are priced at the 5-minute rate)', async () => {
    const res = await post({ model: 'anthropic/claude-sonnet-5.5', messages, tools: [tool], tool_choice: 'none' })
    expect(res.status, await res.clone().text()).toBe(200)
    const sent = lastAnthropic()
    expect(sent.system).toEqual([{ type: 'text', text: 'A long, stable system prompt.', cache_control: ephemeral }])
    expect(sent.messages[0].content).toEqual([
      { type: 'text', text: 'Look at this' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.split(',')[1] }, cache_control: ephemeral },
      { type: 'text', text: 'and answer', cache_control: ephemeral },
    ])
    expect(sent.messages[1].content).toEqual([{ type: 'text', text: 'Noted.', cache_control: ephemeral }])
    expect(sent.messages[2].content).toEqual([{ type: 'text', text: 'The answer, please.', cache_control: ephemeral }])
    expect(sent.tools[0]).toMatchObject({ name: 'lookup', cache_control: ephemeral })
  })

  it('a tool result keeps its message-level breakpoint', async () => {
    const round = [
      { role: 'user', content: 'Define cache' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"word":"cache"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'a store of things', cache_control: ephemeral },
    ]
    const res = await post({ model: 'anthropic/claude-sonnet-5.5', messages: round, tools: [tool] })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(lastAnthropic().messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a store of things', cache_control: ephemeral },
    ])
  })

  it('are left out for OpenAI-compatible providers and Gemini, whole and streamed', async () => {
    for (const stream of [false, true]) {
      const res = await post({ model: 'openai/gpt-test', messages, tools: [tool], tool_choice: 'none', cache_control: ephemeral, stream })
      expect(res.status).toBe(200)
      await res.text()
      const sent = lastOpenAI()
      expect(JSON.stringify(sent)).not.toContain('cache_control')
      expect(sent.messages[1].content[1]).toEqual({ type: 'image_url', image_url: { url: PNG } })
      expect(sent.tools[0]).toEqual({ type: 'function', function: tool.function })
    }
    const flash = await post({ model: 'google/gemini-2.5-flash', messages, tools: [tool], tool_choice: 'none', cache_control: ephemeral })
    expect(flash.status, await flash.clone().text()).toBe(200)
    expect(JSON.stringify(lastGemini())).not.toMatch(/cache_?control|ephemeral/i)
  })

  it('must be { type: "ephemeral", ttl?: "5m" | "1h" }', async () => {
    for (const [body, param] of [
      // content is a string or a list of parts: a bad part is reported at the field of the part that failed.
      [
        { messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'persistent' } }] }] },
        'messages.0.content.0.cache_control.type',
      ],
      [{ messages: [{ role: 'user', content: 'x', cache_control: { type: 'ephemeral', ttl: '2h' } }] }, 'messages.0.cache_control.ttl'],
      [{ messages: [{ role: 'user', content: 'x' }], tools: [{ ...tool, cache_control: 'yes' }] }, 'tools.0.cache_control'],
    ] as const) {
      const res = await post({ model: 'anthropic/claude-sonnet-5.5', ...body })
      expect(res.status).toBe(400)
      expect((await res.json()).error.param).toBe(param)
    }
  })
})

describe('n > 1', () => {
  it('reaches a provider that takes it (OpenAI), whole and streamed', async () => {
    for (const stream of [false, true]) {
      const res = await ask('openai/gpt-test', { n: 3, stream })
      expect(res.status).toBe(200)
      await res.text()
      expect(lastOpenAI().n).toBe(3)
    }
  })

  it('is refused with 400 naming n where no provider takes it (Anthropic, Gemini), before any upstream call', async () => {
    const before = anthropicFake.requests.length + geminiFake.requests.length
    for (const model of ['anthropic/claude-sonnet-5.5', 'google/gemini-2.5-flash']) {
      const res = await ask(model, { n: 2 })
      expect(res.status).toBe(400)
      const { error } = await res.json()
      expect(error).toMatchObject({ type: 'invalid_request', param: 'n' })
      expect(error.message).toMatch(/^n: 2 choices in one request are more than any provider of this request takes/)
    }
    expect(anthropicFake.requests.length + geminiFake.requests.length).toBe(before)
    // n: 1 is fine everywhere; more than 128 is out of range.
    expect((await ask('anthropic/claude-sonnet-5.5', { n: 1 })).status).toBe(200)
    expect((await (await ask('openai/gpt-test', { n: 129 })).json()).error.param).toBe('n')
  })

  it('routes to the models of the request that can answer it', async () => {
    const res = await post({ models: ['anthropic/claude-sonnet-5.5', 'openai/gpt-test'], messages: [{ role: 'user', content: 'two please' }], n: 2 })
    expect(res.status).toBe(200)
    expect((await res.json()).model).toBe('openai/gpt-test')
  })

  it('bills every choice: an estimate counts the text of them all, whole and streamed', async () => {
    const whole = await ask('multi/choices', { n: 3 })
    const body = await whole.json()
    expect(body.choices.map((c: any) => c.message.content)).toEqual(['choice number 0', 'choice number 1', 'choice number 2'])
    // 15 characters of text per choice (and 2 of an empty tool_calls list), 4 characters a token.
    expect(body.usage).toMatchObject({ estimated: true, completion_tokens: Math.ceil((3 * 17) / 4) })
    const single = await (await ask('multi/choices', { n: 1 })).json()
    expect(single.usage.completion_tokens).toBe(Math.ceil(17 / 4))

    const streamed = await readSse(await ask('multi/choices', { n: 3, stream: true }))
    const chunks = streamed.events.filter((e) => e !== '[DONE]')
    expect(chunks.flatMap((c: any) => c.choices.map((choice: any) => choice.index))).toEqual([0, 1, 2, 0, 1, 2])
    expect(chunks.at(-1).usage).toMatchObject({ estimated: true, completion_tokens: Math.ceil((3 * 15) / 4) })
  })

  it('holds the cost of n completions: 402 when the credits cover one but not n, naming max_tokens per choice', async () => {
    const poor = await createCustomer(t.gateway, { credits: '0.01' })
    const send = (n: number) =>
      t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...poor.auth, ...json },
        body: JSON.stringify({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2_000, n }),
      })
    // 2,000 completion tokens at 0.000002 USD (0.00000172 EUR) each: 0.00344 EUR for one choice, 0.01376 for four.
    expect((await send(1)).status).toBe(200)
    const refused = await send(4)
    expect(refused.status).toBe(402)
    const { error } = await refused.json()
    expect(error.metadata.requested_tokens).toBe(2_000)
    expect(error.metadata.affordable_tokens).toBeGreaterThan(1_000)
    expect(error.metadata.affordable_tokens).toBeLessThan(2_000)
    expect(error.message).toContain('You asked for up to 2000 completion tokens')
  })
})
