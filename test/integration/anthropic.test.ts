/**
 * The Anthropic provider end to end, over real HTTP on 127.0.0.1: the official `openai` client → the gateway →
 * `anthropic()` → the fake Messages API of test/fakes/anthropic.ts (API version 2026-10-21). Each test asserts what
 * the client got and what the fake received (the translated body and headers), and billing to the exact unit.
 */
import type OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { anthropic, ANTHROPIC_VERSION } from '../../src/providers/anthropic'
import { mergeReasoningDetails, traitsOf } from '../../src/providers/anthropic-translate'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { ProviderModel } from '../../src/contracts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, readSse, roundUnits, units } from '../helpers/sse'
import { openaiClient } from '../helpers/clients'

const KEY = 'sk-ant-api03-test-key-0123456789'
const FAILING = [
  'claude-rate-limited',
  'claude-overloaded',
  'claude-invalid',
  'claude-too-long',
  'claude-unauthorized',
  'claude-forbidden',
  'claude-api-error',
  'claude-midstream-error',
  'claude-overloaded-early',
]

const model = (id: string): ProviderModel => anthropicModels.find((m) => m.id === id)!
const SONNET = model('anthropic/claude-sonnet-5.5')
const HAIKU = model('anthropic/claude-haiku-4.5')
const _OPUS_5 = model('anthropic/claude-opus-5')
// The failing test models: priced and shaped like Claude Sonnet 5.5.
const failingModels: ProviderModel[] = FAILING.map((id) => ({ ...SONNET, id: `anthropic/${id}`, upstreamId: id, name: id }))

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}
const timeTool = {
  type: 'function' as const,
  function: {
    name: 'get_time',
    description: 'The local time in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

/** The fake's token count of a prompt (see `tokens` in test/fakes/anthropic.ts). */
const promptTokensOf = (body: any) => Math.ceil(JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages }).length / 4)
const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length

/** The exact cost of a usage object at a model's prices, in USD and in EUR (× 0.86, rounded half-up to 12 digits). */
function expectedCost(pricing: ProviderModel['pricing'], usage: any): { usd: string; eur: string } {
  const cached = BigInt(usage.prompt_tokens_details?.cached_tokens ?? 0)
  const written = BigInt(usage.prompt_tokens_details?.cache_write_tokens ?? 0)
  const uncached = BigInt(usage.prompt_tokens) - cached - written
  const usd =
    uncached * units(pricing.prompt) +
    cached * units(pricing.input_cache_read!) +
    written * units(pricing.input_cache_write!) +
    BigInt(usage.completion_tokens) * units(pricing.completion)
  return { usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) }
}

let fake: FakeAnthropic
let backup: FakeOpenAI
let t: TestGateway
let client: OpenAI
let customer: Awaited<ReturnType<typeof createCustomer>>
/** Raw JSON bodies the client received, newest last. */
const rawBodies: string[] = []

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: KEY })
  backup = await startFakeOpenAI({ apiKey: 'sk-backup' })
  const backupPricing = { prompt: '0.00001', completion: '0.00003', currency: 'USD' }
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    keepAliveMs: 2_000,
    // These tests map errors: the breaker and retries have their own (breaker.test.ts); a Retry-After of 7 s is not waited.
    health: { failureThreshold: 1_000 },
    retry: { maxDelayMs: 1_000 },
    providers: [
      anthropic({ apiKey: KEY, baseURL: fake.url, models: [...anthropicModels, ...failingModels] }),
      // A dearer second provider of two of the failing models, for fallbacks.
      openaiCompatible({
        slug: 'backup',
        name: 'Backup',
        baseURL: backup.url,
        apiKey: 'sk-backup',
        models: ['claude-overloaded', 'claude-overloaded-early'].map((id) => ({ id: `anthropic/${id}`, upstreamId: 'gpt-backup', pricing: backupPricing })),
      }),
    ],
  })
  customer = await createCustomer(t.gateway, { credits: '50' })
  client = openaiClient(t.url, customer.key, rawBodies)
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
  await backup?.close()
})

/** Chat completion with gateway-only fields (reasoning, provider, cache_control, …) the client's types do not know. */
const create = (params: Record<string, unknown>) => client.chat.completions.create(params as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
const createStream = (params: Record<string, unknown>) =>
  client.chat.completions.create({ ...params, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming)
const sentSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/messages')
const lastSent = () => fake.requests.filter((r) => r.path === '/v1/messages').at(-1)!

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
  const chunks: OpenAI.ChatCompletionChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  const deltas = chunks.flatMap((c) => c.choices.map((choice) => choice.delta as any))
  const calls: { id?: string; name?: string; arguments: string }[] = []
  for (const delta of deltas) {
    for (const call of delta.tool_calls ?? []) {
      const entry = (calls[call.index] ??= { arguments: '' })
      if (call.id) entry.id = call.id
      if (call.function?.name) entry.name = call.function.name
      entry.arguments += call.function?.arguments ?? ''
    }
  }
  const finish = chunks.flatMap((c) => c.choices).find((choice) => choice.finish_reason) as any
  return {
    chunks,
    content: deltas.map((d) => d.content ?? '').join(''),
    reasoning: deltas.map((d) => d.reasoning ?? '').join(''),
    reasoningDetails: deltas.flatMap((d) => d.reasoning_details ?? []),
    calls,
    finish: finish?.finish_reason,
    nativeFinish: finish?.native_finish_reason,
    usage: chunks.at(-1)!.usage as any,
  }
}

describe('anthropic(): catalogue and connectivity', () => {
  it('serves the current Claude models by default, with their list prices', async () => {
    const provider = anthropic({ apiKey: KEY })
    expect(provider.models).toBe(anthropicModels)
    expect(provider).toMatchObject({ slug: 'anthropic', name: 'Anthropic', byokSupported: true })
    for (const m of anthropicModels) {
      expect(m.id).toMatch(/^anthropic\/claude-[a-z]+-\d+(\.\d+)?$/)
      expect(m.upstreamId).toBe(m.id.slice('anthropic/'.length).replace('.', '-'))
      expect(m.supportedParameters).not.toContain('temperature')
      for (const field of ['prompt', 'completion', 'input_cache_read', 'input_cache_write', 'input_cache_write_1h'] as const)
        expect(m.pricing[field]).toMatch(/^0\.\d+$/)
    }
    expect(SONNET.pricing).toEqual({
      prompt: '0.000002',
      completion: '0.00001',
      input_cache_read: '0.0000001',
      input_cache_write: '0.0000025',
      input_cache_write_1h: '0.000004',
      inference_geos: { us: '1.1' },
      currency: 'USD',
    })

    const res = await t.request('/api/v1/models')
    const listed = (await res.json()).data.find((m: any) => m.id === 'anthropic/claude-sonnet-5.5')
    expect(listed).toMatchObject({ context_length: 1_000_000, pricing: { prompt: '0.000002', completion: '0.00001' } })
  })

  it('knows how each model thinks: from the catalogue, else from the version in its id', () => {
    expect(traitsOf(SONNET, 'claude-sonnet-5-5')).toEqual({
      thinking: 'adaptive',
      thinkingAlwaysOn: false,
      maxOutputTokens: 128_000,
      efforts: ['low', 'medium', 'high', 'xhigh', 'max'],
    })
    expect(traitsOf(model('anthropic/claude-opus-5.5'), 'claude-opus-5-5')).toMatchObject({ thinking: 'adaptive', thinkingAlwaysOn: true })
    expect(traitsOf(HAIKU, 'claude-haiku-4-5')).toEqual({ thinking: 'budget', thinkingAlwaysOn: false, maxOutputTokens: 64_000 })
    // Models the catalogue does not know: adaptive from Claude 4.6 on.
    expect(
      ['claude-opus-4-7', 'claude-sonnet-4-6', 'claude-mythos-5-1', 'claude-haiku-4-5-20251001', 'claude-opus-4-1', 'claude-3-7-sonnet-20250219'].map(
        (id) => traitsOf(undefined, id).thinking,
      ),
    ).toEqual(['adaptive', 'adaptive', 'adaptive', 'budget', 'budget', 'budget'])
  })

  it('checks the key with an authenticated GET /v1/models', async () => {
    const signal = new AbortController().signal
    const from = fake.requests.length
    const [ok] = await anthropic({ apiKey: KEY, baseURL: fake.url }).check!({ signal, timeoutMs: 5_000 })
    expect(ok).toMatchObject({ target: 'GET /v1/models', ok: true, message: '6 models listed' })
    expect(typeof ok.latency_ms).toBe('number')
    expect(fake.requests[from]).toMatchObject({
      method: 'GET',
      path: '/v1/models',
      headers: { authorization: `Bearer ${KEY}`, 'anthropic-version': ANTHROPIC_VERSION },
    })

    const [viaHeader] = await anthropic({ apiKey: KEY, baseURL: fake.url, authHeader: 'x-api-key' }).check!({ signal, timeoutMs: 5_000 })
    expect(viaHeader.ok).toBe(true)
    expect(fake.requests.at(-1)!.headers['x-api-key']).toBe(KEY)
    expect(fake.requests.at(-1)!.headers.authorization).toBeUndefined()

    const [rejected] = await anthropic({ apiKey: 'sk-ant-wrong', baseURL: fake.url }).check!({ signal, timeoutMs: 5_000 })
    expect(rejected).toMatchObject({ ok: false, message: 'the key was rejected' })
  })
})

describe('whole answers and streams', () => {
  it('answers a whole completion, sends Anthropic’s headers, and bills the exact cost', async () => {
    const before = await t.gateway.admin.getCredits(customer.user.org_id)
    const from = fake.requests.length
    const completion = await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-5.5',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    })

    const [sent] = sentSince(from)
    expect(sent.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'anthropic-version': '2026-10-21', 'content-type': 'application/json' })
    expect(sent.headers['x-api-key']).toBeUndefined()
    // A whole answer's default max_tokens: the model's 128K capped at the SDK's 10-minute limit for non-streamed calls.
    expect(sent.body).toEqual({
      model: 'claude-sonnet-5-5',
      max_tokens: 21_333,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
    })

    const choice = completion.choices[0] as any
    expect(choice.message.content).toBe('Hello from claude-sonnet-5-5: What is the capital of France?')
    expect(choice.finish_reason).toBe('stop')
    expect(choice.native_finish_reason).toBe('end_turn')
    // Sonnet 5.5 thinks by default, with its thinking omitted: no text, but the signed block is kept for the client.
    expect(choice.message.reasoning).toBeNull()
    expect(choice.message.reasoning_details).toEqual([
      { type: 'reasoning.text', text: '', signature: expect.stringMatching(/^fakesig_/), format: 'anthropic-claude-v1', index: 0 },
    ])

    const usage = completion.usage as any
    expect(usage.prompt_tokens).toBe(promptTokensOf(sent.body))
    expect(usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0)
    expect(usage.completion_tokens).toBe(usage.completion_tokens_details.reasoning_tokens + wordCount(choice.message.content))
    expect(usage.prompt_tokens_details).toMatchObject({ cached_tokens: 0, cache_write_tokens: 0 })
    const cost = expectedCost(SONNET.pricing, usage)
    expect(rawBodies.at(-1)).toContain(`"cost":${cost.usd},`)
    expect(rawBodies.at(-1)).toContain(`"cost_eur":${cost.eur},`)
    const after = await t.gateway.admin.getCredits(customer.user.org_id)
    expect(decimalText(units(after.total_usage) - units(before.total_usage))).toBe(cost.eur)
  })

  it('streams: the role first, text deltas, the finish reason, then usage with cost in a chunk without choices', async () => {
    const from = fake.requests.length
    const result = await collect(await createStream({ model: 'anthropic/claude-sonnet-5.5', messages: [{ role: 'user', content: 'Tell me a story' }] }))

    expect(result.chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' })
    expect(result.content).toBe('Hello from claude-sonnet-5-5: Tell me a story')
    expect(result.chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(3)
    expect([result.finish, result.nativeFinish]).toEqual(['stop', 'end_turn'])
    expect(result.chunks.at(-1)!.choices).toEqual([])
    expect(result.chunks.filter((c) => c.usage)).toHaveLength(1)

    const [sent] = sentSince(from)
    expect(sent.body).toMatchObject({ model: 'claude-sonnet-5-5', max_tokens: 128_000, stream: true })
    expect(sent.headers.accept).toBe('text/event-stream')
    expect(result.usage.prompt_tokens).toBe(promptTokensOf(sent.body))
    expect(result.usage.completion_tokens).toBe(result.usage.completion_tokens_details.reasoning_tokens + wordCount(result.content))
    const cost = expectedCost(SONNET.pricing, result.usage)
    expect(result.usage.cost).toBe(Number(cost.usd))
    expect(result.usage.cost_eur).toBe(Number(cost.eur))
  })

  it('maps stop to stop_sequences, user to metadata.user_id, max_tokens, and drops the sampling fields 2026-10-21 rejects', async () => {
    const from = fake.requests.length
    const stopped = await create({
      model: 'anthropic/claude-sonnet-5.5',
      messages: [{ role: 'user', content: 'count one two three' }],
      stop: ['two'],
      user: 'user-1234',
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: 0.1,
      logit_bias: { '1': 2 },
      max_tokens: 100,
    })
    expect(stopped.choices[0].message.content).toBe('Hello from claude-sonnet-5-5: count one ')
    expect(stopped.choices[0].finish_reason).toBe('stop')
    expect((stopped.choices[0] as any).native_finish_reason).toBe('stop_sequence')
    const [sent] = sentSince(from)
    expect(sent.body).toEqual({
      model: 'claude-sonnet-5-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'count one two three' }] }],
      stop_sequences: ['two'],
      metadata: { user_id: 'user-1234' },
    })

    const cut = await create({ model: 'anthropic/claude-haiku-4.5', messages: [{ role: 'user', content: 'say many words please' }], max_completion_tokens: 3 })
    expect(cut.choices[0].message.content).toBe('Hello from claude-haiku-4-5:')
    expect(cut.choices[0].finish_reason).toBe('length')
    expect((cut.choices[0] as any).native_finish_reason).toBe('max_tokens')
    expect(lastSent().body.max_tokens).toBe(3)
  })

  it('puts system and developer messages in the top-level system prompt and merges same-role turns', async () => {
    await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-5.5',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hello' },
        { role: 'user', content: [{ type: 'text', text: 'Are you there?' }] },
        { role: 'assistant', content: 'Oui.' },
        { role: 'system', content: 'Be kind.' },
        { role: 'user', content: 'Merci' },
      ],
    })
    expect(lastSent().body).toMatchObject({
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Answer in French.' },
        { type: 'text', text: 'Be kind.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hello' },
            { type: 'text', text: 'Are you there?' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Oui.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Merci' }] },
      ],
    })
  })

  it('sends images (base64 and URL) and PDFs as content blocks; refuses audio without calling Anthropic', async () => {
    const completion = await client.chat.completions.create({
      model: 'anthropic/claude-opus-5',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0xLjQK', filename: 'doc.pdf' } },
          ],
        },
      ],
    })
    expect(completion.choices[0].message.content).toBe('Hello from claude-opus-5: Compare these')
    expect(lastSent().body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' }, title: 'doc.pdf' },
        ],
      },
    ])

    const from = fake.requests.length
    const refused = await client.chat.completions
      .create({
        model: 'anthropic/claude-opus-5',
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
      })
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      )
    expect(refused?.status).toBe(400)
    expect(refused?.error).toMatchObject({ type: 'invalid_request', metadata: { provider_name: 'Anthropic', error_type: 'invalid_request' } })
    expect(fake.requests.length).toBe(from)
  })

  it('bills cache reads and writes of automatic prompt caching at their prices', async () => {
    const params = {
      model: 'anthropic/claude-sonnet-5.5',
      cache_control: { type: 'ephemeral', ttl: '1h' },
      messages: [
        { role: 'system', content: 'A long, stable system prompt. '.repeat(40) },
        { role: 'user', content: 'Question one' },
      ],
    }
    const first = await create(params)
    expect(lastSent().body.cache_control).toEqual({ type: 'ephemeral' }) // written at the 5-minute price the catalogue carries
    const written = first.usage as any
    expect(written.prompt_tokens_details.cache_write_tokens).toBeGreaterThan(100)
    expect(written.prompt_tokens_details.cached_tokens).toBe(0)
    expect(written.prompt_tokens).toBe(promptTokensOf(lastSent().body))
    expect(written.cost).toBe(Number(expectedCost(SONNET.pricing, written).usd))

    const second = await create(params)
    const read = second.usage as any
    expect(read.prompt_tokens_details.cached_tokens).toBe(written.prompt_tokens_details.cache_write_tokens)
    expect(read.prompt_tokens_details.cache_write_tokens).toBe(0)
    const cost = expectedCost(SONNET.pricing, read)
    expect(rawBodies.at(-1)).toContain(`"cost":${cost.usd},`)
    expect(rawBodies.at(-1)).toContain(`"cost_eur":${cost.eur},`)
  })
})

describe('tools', () => {
  it('round trip, whole: tool_use → tool_calls, then tool_calls / tool results → tool_use / tool_result blocks', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }]
    const first = await client.chat.completions.create({ model: 'anthropic/claude-sonnet-5.5', messages, tools: [weatherTool] })
    const choice = first.choices[0]
    expect(choice.finish_reason).toBe('tool_calls')
    expect((choice as any).native_finish_reason).toBe('tool_use')
    expect(choice.message.content).toBeNull()
    expect(choice.message.tool_calls).toHaveLength(1)
    const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
    expect(call).toMatchObject({ id: expect.stringMatching(/^toolu_fake/), type: 'function', function: { name: 'get_weather' } })
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' })
    expect(lastSent().body.tools).toEqual([
      { name: 'get_weather', description: 'The current weather in a city', input_schema: weatherTool.function.parameters },
    ])
    expect(lastSent().body.tool_choice).toBeUndefined()

    // The assistant message goes back as the client got it (with its signed thinking in reasoning_details).
    const second = await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-5.5',
      tools: [weatherTool],
      messages: [...messages, choice.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 24 °C' }],
    })
    expect(second.choices[0].message.content).toBe('The tools said: Sunny, 24 °C')
    expect(second.choices[0].finish_reason).toBe('stop')
    expect(lastSent().body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Paris' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: '', signature: (choice.message as any).reasoning_details[0].signature },
          { type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 24 °C' }] },
    ])
  })

  it('round trip, streamed: tool call start then argument deltas; the last turn may leave the tools out', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Berlin' }]
    const first = await collect(await createStream({ model: 'anthropic/claude-sonnet-5.5', messages, tools: [weatherTool] }))
    expect(first.calls).toHaveLength(1)
    expect(first.calls[0]).toMatchObject({ id: expect.stringMatching(/^toolu_fake/), name: 'get_weather' })
    expect(JSON.parse(first.calls[0].arguments)).toEqual({ city: 'Berlin' })
    const toolDeltas = first.chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? [])
    expect(toolDeltas[0]).toEqual({ index: 0, id: first.calls[0].id, type: 'function', function: { name: 'get_weather', arguments: '' } })
    expect(toolDeltas.filter((d) => d.function?.arguments).length).toBeGreaterThan(1)
    expect([first.finish, first.nativeFinish]).toEqual(['tool_calls', 'tool_use'])
    expect(first.usage.completion_tokens).toBeGreaterThan(0)

    const assistant = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: first.calls[0].id!, type: 'function', function: { name: 'get_weather', arguments: first.calls[0].arguments } }],
      reasoning_details: first.reasoningDetails,
    }
    const second = await collect(
      await createStream({
        model: 'anthropic/claude-sonnet-5.5',
        messages: [...messages, assistant, { role: 'tool', tool_call_id: first.calls[0].id, content: 'Cloudy' }],
      }),
    )
    expect(second.content).toBe('The tools said: Cloudy')
    expect([second.finish, second.nativeFinish]).toEqual(['stop', 'end_turn'])
    // Anthropic needs the tools of the conversation defined: declared unavailable, with tool_choice none.
    expect(lastSent().body).toMatchObject({ tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }], tool_choice: { type: 'none' } })
  })

  it('parallel calls and their results: one tool_result turn; parallel_tool_calls false → disable_parallel_tool_use', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Tokyo' }]
    const first = await client.chat.completions.create({ model: 'anthropic/claude-sonnet-5.5', messages, tools: [weatherTool, timeTool] })
    const calls = first.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]
    expect(calls.map((c) => c.function.name)).toEqual(['get_weather', 'get_time'])
    expect(calls.map((c) => (c as any).index)).toEqual([0, 1])

    const second = await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-5.5',
      tools: [weatherTool, timeTool],
      messages: [
        ...messages,
        first.choices[0].message,
        { role: 'tool', tool_call_id: calls[0].id, content: 'Rain' },
        { role: 'tool', tool_call_id: calls[1].id, content: '09:00' },
      ],
    })
    expect(second.choices[0].message.content).toBe('The tools said: Rain | 09:00')
    const sent = lastSent().body.messages
    expect(sent).toHaveLength(3)
    expect(sent[1].content.filter((b: any) => b.type === 'tool_use').map((b: any) => b.id)).toEqual(calls.map((c) => c.id))
    expect(sent[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: calls[0].id, content: 'Rain' },
        { type: 'tool_result', tool_use_id: calls[1].id, content: '09:00' },
      ],
    })

    const streamed = await collect(await createStream({ model: 'anthropic/claude-sonnet-5.5', messages, tools: [weatherTool, timeTool] }))
    expect(streamed.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['get_weather', { city: 'Tokyo' }],
      ['get_time', { city: 'Tokyo' }],
    ])

    const single = await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-5.5',
      messages,
      tools: [weatherTool, timeTool],
      parallel_tool_calls: false,
    })
    expect(single.choices[0].message.tool_calls).toHaveLength(1)
    expect(lastSent().body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
  })

  it('maps tool_choice required / named / none; models that reject forced tool use answer 400', async () => {
    await client.chat.completions.create({
      model: 'anthropic/claude-opus-5',
      messages: [{ role: 'user', content: 'Oslo' }],
      tools: [weatherTool, timeTool],
      tool_choice: 'required',
    })
    expect(lastSent().body.tool_choice).toEqual({ type: 'any' })
    const named = await client.chat.completions.create({
      model: 'anthropic/claude-opus-5',
      messages: [{ role: 'user', content: 'Oslo' }],
      tools: [weatherTool, timeTool],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    })
    expect(lastSent().body.tool_choice).toEqual({ type: 'tool', name: 'get_time' })
    expect((named.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]).map((c) => c.function.name)).toEqual(['get_time'])
    const none = await client.chat.completions.create({
      model: 'anthropic/claude-opus-5',
      messages: [{ role: 'user', content: 'Oslo' }],
      tools: [weatherTool],
      tool_choice: 'none',
    })
    expect(lastSent().body.tool_choice).toEqual({ type: 'none' })
    expect(none.choices[0].message.content).toBe('Hello from claude-opus-5: Oslo')

    const forced = await client.chat.completions
      .create({ model: 'anthropic/claude-sonnet-5.5', messages: [{ role: 'user', content: 'Oslo' }], tools: [weatherTool], tool_choice: 'required' })
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      )
    expect(forced?.status).toBe(400)
    expect(forced?.error).toMatchObject({ metadata: { error_type: 'invalid_request', raw: expect.stringContaining('Forced tool use') } })
  })
})

describe('structured output and reasoning', () => {
  it('json_schema → output_config.format with closed objects; json_object → a system instruction, no prefill', async () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' }, address: { type: 'object', properties: { city: { type: 'string' } } } },
      required: ['name', 'age'],
    }
    const completion = await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-5.5',
      messages: [{ role: 'user', content: 'Ada' }],
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
    })
    expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ name: 'Ada', age: 42, address: { city: 'Ada' } })
    expect(lastSent().body.output_config).toEqual({
      format: {
        type: 'json_schema',
        schema: {
          ...schema,
          additionalProperties: false,
          properties: { ...schema.properties, address: { ...schema.properties.address, additionalProperties: false } },
        },
      },
    })

    const object = await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-5.5',
      messages: [{ role: 'user', content: 'List a fruit' }],
      response_format: { type: 'json_object' },
    })
    expect(object.choices[0].message.content).toBe('Hello from claude-sonnet-5-5: List a fruit')
    const sent = lastSent().body
    expect(sent.system).toEqual([{ type: 'text', text: expect.stringContaining('single valid JSON object') }])
    expect(sent.output_config).toBeUndefined()
    expect(sent.messages.at(-1).role).toBe('user')
  })

  it('reasoning on an adaptive model: thinking adaptive + output_config.effort, the thinking text as message.reasoning', async () => {
    const completion = await create({
      model: 'anthropic/claude-sonnet-5.5',
      messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      reasoning: { effort: 'high' },
    })
    expect(lastSent().body).toMatchObject({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'high' } })
    const message = completion.choices[0].message as any
    expect(message.reasoning).toBe('The user asked about Why is the sky blue?; I should answer plainly.')
    expect(message.content).toBe('Hello from claude-sonnet-5-5: Why is the sky blue?')
    expect((completion.usage as any).completion_tokens_details.reasoning_tokens).toBe(wordCount(message.reasoning))

    const streamed = await collect(
      await createStream({ model: 'anthropic/claude-sonnet-5.5', messages: [{ role: 'user', content: 'Why is grass green?' }], reasoning_effort: 'minimal' }),
    )
    expect(lastSent().body).toMatchObject({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'low' } })
    expect(streamed.reasoning).toBe('The user asked about Why is grass green?; I should answer plainly.')
    expect(streamed.content).toBe('Hello from claude-sonnet-5-5: Why is grass green?')
    // Streamed in pieces of one block (its text, then its signature), which give the block back merged by index.
    expect(mergeReasoningDetails(streamed.reasoningDetails)).toEqual([
      expect.objectContaining({ type: 'reasoning.text', text: streamed.reasoning, signature: expect.stringMatching(/^fakesig_/) }),
    ])

    await create({ model: 'anthropic/claude-sonnet-5.5', messages: [{ role: 'user', content: 'Budgeted' }], reasoning: { max_tokens: 10_000 } })
    expect(lastSent().body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } })

    const hidden = await create({
      model: 'anthropic/claude-sonnet-5.5',
      messages: [{ role: 'user', content: 'Hidden' }],
      reasoning: { effort: 'low', exclude: true },
    })
    expect(lastSent().body.thinking).toEqual({ type: 'adaptive', display: 'omitted' })
    expect((hidden.choices[0].message as any).reasoning).toBeNull()

    await create({ model: 'anthropic/claude-sonnet-5.5', messages: [{ role: 'user', content: 'No thinking' }], reasoning: { enabled: false } })
    expect(lastSent().body.thinking).toEqual({ type: 'disabled' })
    // Always-on thinking cannot be disabled: the field is left out rather than sent and refused.
    await create({ model: 'anthropic/claude-opus-5.5', messages: [{ role: 'user', content: 'No thinking' }], reasoning: { enabled: false } })
    expect(lastSent().body.thinking).toBeUndefined()
  })

  it('reasoning on a budget model: thinking enabled with budget_tokens, kept through a tool round trip', async () => {
    const completion = await create({
      model: 'anthropic/claude-haiku-4.5',
      messages: [{ role: 'user', content: 'Lima' }],
      max_tokens: 1000,
      reasoning: { max_tokens: 2048 },
      tools: [weatherTool],
    })
    // The budget must stay under max_tokens: max_tokens grows by the budget so the answer keeps its 1,000 tokens.
    expect(lastSent().body).toMatchObject({ max_tokens: 3048, thinking: { type: 'enabled', budget_tokens: 2048 } })
    expect(lastSent().body.output_config).toBeUndefined()
    const message = completion.choices[0].message as any
    expect(message.reasoning).toBe('The user asked about Lima; I should answer plainly.')
    const call = message.tool_calls[0]

    await create({ model: 'anthropic/claude-haiku-4.5', messages: [{ role: 'user', content: 'Quito' }], reasoning: { effort: 'high' } })
    expect(lastSent().body).toMatchObject({ max_tokens: 21_333, thinking: { type: 'enabled', budget_tokens: Math.floor(21_333 * 0.8) } })

    const toolTurn = [{ role: 'user', content: 'Lima' }, message, { role: 'tool', tool_call_id: call.id, content: 'Foggy' }]
    const second = await create({ model: 'anthropic/claude-haiku-4.5', messages: toolTurn, reasoning: { max_tokens: 2048 }, tools: [weatherTool] })
    expect(second.choices[0].message.content).toBe('The tools said: Foggy')
    expect(lastSent().body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: message.reasoning, signature: message.reasoning_details[0].signature })

    // Without its thinking block the tool turn is refused, as Anthropic refuses it.
    const { reasoning_details: _dropped, ...bare } = message
    const refused = await create({
      model: 'anthropic/claude-haiku-4.5',
      messages: [toolTurn[0], bare, toolTurn[2]],
      reasoning: { max_tokens: 2048 },
      tools: [weatherTool],
    }).then(
      () => undefined,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    )
    expect(refused?.status).toBe(400)
    expect((refused?.error as any)?.metadata?.raw).toContain('must start with a thinking block')
  })
})

describe('errors and fallbacks', () => {
  it('maps Anthropic’s errors to the envelope with status and error_type, without secrets, charging nothing', async () => {
    const cases: [string, number, string, string][] = [
      ['claude-rate-limited', 429, 'rate_limited', 'rate_limit_exceeded'],
      ['claude-overloaded', 502, 'upstream_error', 'provider_overloaded'],
      ['claude-invalid', 400, 'invalid_request', 'invalid_request'],
      ['claude-too-long', 400, 'invalid_request', 'context_length_exceeded'],
      ['claude-unauthorized', 502, 'upstream_error', 'authentication'],
      ['claude-forbidden', 502, 'upstream_error', 'authentication'],
      ['claude-api-error', 502, 'upstream_error', 'provider_unavailable'],
    ]
    const before = await t.gateway.admin.getCredits(customer.user.org_id)
    for (const [id, status, type, errorType] of cases) {
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...customer.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: `anthropic/${id}`, messages: [{ role: 'user', content: 'hi' }], provider: { only: ['anthropic'] } }),
      })
      expect(res.status, id).toBe(status)
      const body = await res.json()
      expect(body.error, id).toMatchObject({ code: status, type, metadata: { provider_name: 'Anthropic', error_type: errorType } })
      expect(body.error.metadata.raw, id).toMatch(/\w{3,}/)
      expect(JSON.stringify(body), id).not.toContain(KEY)
      if (id === 'claude-rate-limited') expect(res.headers.get('retry-after')).toBe('7')
      if (id === 'claude-too-long') expect(body.error.metadata.raw).toBe('prompt is too long: 1048577 tokens > 1000000 maximum')
    }
    expect(await t.gateway.admin.getCredits(customer.user.org_id)).toEqual(before)
  })

  it('an error event mid-stream ends the stream with an error chunk after the text already sent', async () => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-midstream-error', stream: true, messages: [{ role: 'user', content: 'one two three four' }] }),
    })
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    expect(events.at(-1)).toBe('[DONE]')
    const text = events
      .slice(0, -1)
      .flatMap((e: any) => e.choices.map((c: any) => c.delta?.content ?? ''))
      .join('')
    expect(text).toBe('Hello from')
    const failure = events.find((e: any) => e.error)
    expect(failure.error).toMatchObject({ metadata: { provider_name: 'Anthropic', error_type: 'provider_overloaded', raw: 'Overloaded' } })
    expect(failure.choices[0]).toMatchObject({ finish_reason: 'error' })
  })

  it('overloaded (529, or an error event before any content) is retried on another provider', async () => {
    const from = backup.requests.length
    const whole = await create({
      model: 'anthropic/claude-overloaded',
      messages: [{ role: 'user', content: 'fall back' }],
      provider: { order: ['anthropic', 'backup'] },
    })
    expect((whole as any).provider).toBe('Backup')
    expect(whole.choices[0].message.content).toBe('Hello from gpt-backup: fall back')
    expect(lastSent().body.model).toBe('claude-overloaded') // Anthropic was tried first

    const streamed = await collect(
      await createStream({
        model: 'anthropic/claude-overloaded-early',
        messages: [{ role: 'user', content: 'fall back streamed' }],
        provider: { order: ['anthropic', 'backup'] },
      }),
    )
    expect(lastSent().body).toMatchObject({ model: 'claude-overloaded-early', stream: true })
    expect((streamed.chunks[0] as any).provider).toBe('Backup')
    expect(streamed.content).toBe('Hello from gpt-backup: fall back streamed')
    expect(backup.requests.length).toBe(from + 2)
  })
})
