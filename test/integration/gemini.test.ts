/**
 * The Gemini provider (src/providers/gemini.ts) behind the gateway, over real HTTP on 127.0.0.1: the official `openai`
 * client talks to the gateway, the gateway to the fake Gemini API of test/fakes/gemini.ts. Each test asserts what the
 * client got (content, reasoning, tool calls, usage and its exact cost) and what Gemini received (path, headers, the
 * translated body).
 */
import type OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { geminiModels } from '../../src/providers/models/gemini-models'
import { gemini } from '../../src/providers/gemini'
import type { ModelPricing, ProviderModel } from '../../src/contracts'
import { startFakeGemini, type FakeGemini, type FakeGeminiRequest } from '../fakes/gemini'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, readSse, roundUnits, units } from '../helpers/sse'
import { openaiClient } from '../helpers/clients'

const API_KEY = 'AIzaSyFAKE-gemini-test-key-0123456789'
const FLASH = 'google/gemini-2.5-flash'
const TEST_PRICING: ModelPricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const FAILING = [
  'fail-429',
  'fail-503',
  'fail-500',
  'fail-400',
  'fail-context',
  'fail-precondition',
  'fail-401',
  'fail-403',
  'fail-midstream',
  'fail-blocked',
  'fail-recitation',
  'palm-2',
]
const json = { 'content-type': 'application/json' }

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const WAV = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00').toString('base64')
const MP3 = Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00fake mp3 frames').toString('base64')
const PDF = Buffer.from('%PDF-1.4 fake').toString('base64')

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
    parameters: { type: 'object', properties: { city: { type: 'string' }, format: { type: 'string', enum: ['24h', '12h'] } }, required: ['city'] },
  },
}

/** Exact expected cost of reported usage at a model's pricing: USD and EUR (× 0.86, rounded half-up) as decimal text. */
function expectedCost(
  pricing: ModelPricing,
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } | null },
) {
  const cached = BigInt(usage.prompt_tokens_details?.cached_tokens ?? 0)
  const uncached = BigInt(usage.prompt_tokens) - cached
  const usd =
    uncached * units(pricing.prompt) + cached * units(pricing.input_cache_read ?? pricing.prompt) + BigInt(usage.completion_tokens) * units(pricing.completion)
  return { usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) }
}
const pricingOf = (id: string) => geminiModels.find((m) => m.id === id)!.pricing

let fake: FakeGemini
let t: TestGateway
let client: OpenAI
let auth: Record<string, string>
const rawBodies: string[] = []

beforeAll(async () => {
  fake = await startFakeGemini({ apiKey: API_KEY })
  const extra: ProviderModel[] = FAILING.map((id) => ({ id: `google/${id}`, upstreamId: id, pricing: TEST_PRICING }))
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    providers: [
      gemini({ apiKey: API_KEY, baseURL: fake.url, models: [...geminiModels, ...extra] }),
      gemini({
        apiKey: 'AIzaSy-not-the-right-key',
        baseURL: fake.url,
        slug: 'google-bad-key',
        name: 'Bad key',
        models: [{ id: 'bad/gemini-2.5-flash', upstreamId: 'gemini-2.5-flash', pricing: TEST_PRICING }],
      }),
      gemini({
        baseURL: fake.url,
        slug: 'google-no-key',
        name: 'No key',
        models: [{ id: 'nokey/gemini-2.5-flash', upstreamId: 'gemini-2.5-flash', pricing: TEST_PRICING }],
      }),
    ],
  })
  const customer = await createCustomer(t.gateway, { credits: '50' })
  auth = customer.auth
  client = openaiClient(t.url, customer.key, rawBodies)
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

/** The generate requests the fake received since `from`. */
const generateSince = (from: number) => fake.requests.slice(from).filter((r) => r.method === 'POST')
const lastGenerate = (): FakeGeminiRequest => fake.requests.filter((r) => r.method === 'POST').at(-1)!
/** The usage the gateway must report for the fake's usageMetadata. */
const usageFrom = (meta: any) => ({
  prompt_tokens: meta.promptTokenCount,
  completion_tokens: meta.candidatesTokenCount + (meta.thoughtsTokenCount ?? 0),
  total_tokens: meta.promptTokenCount + meta.candidatesTokenCount + (meta.thoughtsTokenCount ?? 0),
})
const post = (body: unknown) => t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify(body) })

describe('gemini() provider', () => {
  it('serves the catalogue models by default and takes `models` to replace them', () => {
    const provider = gemini({ apiKey: 'k' })
    expect(provider.models).toBe(geminiModels)
    expect(provider.slug).toBe('google-ai-studio')
    expect(provider.name).toBe('Google AI Studio')
    const mine: ProviderModel[] = [{ id: 'google/x', upstreamId: 'x', pricing: TEST_PRICING }]
    expect(gemini({ models: mine }).models).toBe(mine)
    // The image models (docs/images.md#images-in-chat) are priced per image output token, without cache reads.
    const imageModels = geminiModels.filter((m) => m.outputModalities?.includes('image'))
    expect(imageModels.map((m) => m.id)).toEqual(['google/gemini-3-pro-image-preview', 'google/gemini-2.5-flash-image'])
    for (const model of imageModels) expect(model.pricing.image_output).toMatch(/^0\.\d+$/)
    for (const model of geminiModels.filter((m) => !m.endpoints && !imageModels.includes(m))) {
      expect(model.id).toBe(`google/${model.upstreamId}`)
      expect(model.pricing.prompt).toMatch(/^0\.\d+$/)
      expect(model.pricing.completion).toMatch(/^0\.\d+$/)
      expect(model.pricing.input_cache_read).toMatch(/^0\.\d+$/)
      expect(model.inputModalities).toEqual(['text', 'image', 'audio', 'file'])
    }
    expect(geminiModels.find((m) => m.id === FLASH)!.pricing).toEqual({
      prompt: '0.0000003',
      completion: '0.0000025',
      input_cache_read: '0.00000003',
      currency: 'USD',
    })
  })

  it('checks the key with an authenticated GET /v1beta/models', async () => {
    const from = fake.requests.length
    const [ok] = await gemini({ apiKey: API_KEY, baseURL: fake.url }).check!({ signal: AbortSignal.timeout(5000), timeoutMs: 5000 })
    expect(ok).toMatchObject({ target: 'GET /v1beta/models', ok: true, message: '6 models listed' })
    expect(fake.requests[from]).toMatchObject({ method: 'GET', path: '/v1beta/models' })
    expect(fake.requests[from].headers['x-goog-api-key']).toBe(API_KEY)
    const [bad] = await gemini({ apiKey: 'AIzaSy-wrong', baseURL: `${fake.url}/` }).check!({ signal: AbortSignal.timeout(5000), timeoutMs: 5000 })
    expect(bad).toMatchObject({ ok: false, message: 'the key was rejected' })
  })
})

describe('chat completions through Gemini (openai client)', () => {
  it('answers a whole completion: system → systemInstruction, parameters → generationConfig, usage and exact cost', async () => {
    const from = fake.requests.length
    const question = 'What is the capital of France?'
    const completion = await client.chat.completions.create({
      model: FLASH,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello! Ask away.' },
        { role: 'user', content: question },
      ],
      temperature: 0.4,
      top_p: 0.9,
      max_tokens: 200,
      stop: ['END'],
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      // OpenRouter's extension, not in the openai types
      ...({ top_k: 20 } as object),
    })

    const [upstream] = generateSince(from)
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
    expect(upstream.query).toEqual({})
    expect(upstream.headers['x-goog-api-key']).toBe(API_KEY)
    expect(upstream.headers.authorization).toBeUndefined()
    expect(upstream.headers['content-type']).toBe('application/json')
    expect(upstream.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello! Ask away.' }] },
        { role: 'user', parts: [{ text: question }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in English.' }] },
      generationConfig: {
        candidateCount: 1,
        temperature: 0.4,
        topP: 0.9,
        topK: 20,
        maxOutputTokens: 200,
        stopSequences: ['END'],
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        thinkingConfig: { includeThoughts: true },
      },
    })

    const choice = completion.choices[0] as any
    expect(completion.model).toBe(FLASH)
    expect(choice.message.content).toBe(`Hello from gemini-2.5-flash: ${question}`)
    expect(choice.message.reasoning).toBe(`Thinking about "${question}"`)
    expect(choice.finish_reason).toBe('stop')
    expect(choice.native_finish_reason).toBe('STOP')

    const usage = completion.usage as any
    expect(usage).toMatchObject(usageFrom(upstream.usage))
    expect(usage.completion_tokens_details.reasoning_tokens).toBe(16)
    expect(usage.prompt_tokens_details.cached_tokens).toBe(0)
    const cost = expectedCost(pricingOf(FLASH), usage)
    expect(usage.cost).toBe(Number(cost.usd))
    expect(usage.cost_eur).toBe(Number(cost.eur))
    expect(rawBodies.at(-1)).toContain(`"cost":${cost.usd},`)
  })

  it('streams: a first chunk with the role, text and thought deltas, the finish reason, then usage with cost', async () => {
    const from = fake.requests.length
    const question = 'Tell me a short story about a lighthouse'
    const stream = await client.chat.completions.create({ model: FLASH, messages: [{ role: 'user', content: question }], stream: true })
    const chunks: any[] = []
    for await (const chunk of stream) chunks.push(chunk)

    const [upstream] = generateSince(from)
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent')
    expect(upstream.query).toEqual({ alt: 'sse' })
    expect(upstream.headers['x-goog-api-key']).toBe(API_KEY)
    expect(upstream.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: question }] }],
      generationConfig: { candidateCount: 1, thinkingConfig: { includeThoughts: true } },
    })

    expect(chunks[0].choices[0].delta.role).toBe('assistant')
    const withContent = chunks.filter((c) => c.choices[0]?.delta?.content)
    expect(withContent.length).toBeGreaterThan(3) // word by word, as the fake sends it
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(`Hello from gemini-2.5-flash: ${question}`)
    expect(chunks.map((c) => c.choices[0]?.delta?.reasoning ?? '').join('')).toBe(`Thinking about "${question}"`)
    const finishes = chunks.filter((c) => c.choices[0]?.finish_reason)
    expect(finishes).toHaveLength(1)
    expect(finishes[0].choices[0]).toMatchObject({ finish_reason: 'stop', native_finish_reason: 'STOP' })

    const last = chunks.at(-1)
    expect(last.choices).toEqual([])
    expect(chunks.filter((c) => c.usage)).toHaveLength(1)
    expect(last.usage).toMatchObject({ ...usageFrom(upstream.usage), completion_tokens_details: { reasoning_tokens: 16 } })
    const cost = expectedCost(pricingOf(FLASH), last.usage)
    expect(last.usage.cost).toBe(Number(cost.usd))
    expect(last.usage.cost_eur).toBe(Number(cost.eur))
  })

  it('round-trips a tool call: call, tool result, final answer', async () => {
    const from = fake.requests.length
    const question = 'Weather in Lyon?'
    const messages: any[] = [{ role: 'user', content: question }]
    const first = await client.chat.completions.create({ model: FLASH, messages, tools: [weatherTool], tool_choice: 'auto' })
    const message = first.choices[0].message as any
    expect(first.choices[0].finish_reason).toBe('tool_calls')
    expect(message.content).toBeNull()
    expect(message.tool_calls).toHaveLength(1)
    const call = message.tool_calls[0]
    expect(call.id).toMatch(/^call_[A-Za-z0-9_-]{16}$/) // Gemini 2.5 sends no ids: the gateway makes one
    expect(call.type).toBe('function')
    expect(call.function.name).toBe('get_weather')
    expect(JSON.parse(call.function.arguments)).toEqual({ city: question })

    const [asked] = generateSince(from)
    expect(asked.body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'The current weather in a city',
            parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        ],
      },
    ])
    expect(asked.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } })
    const signature = message.reasoning_details?.[0]?.data
    expect(message.reasoning_details).toEqual([{ type: 'reasoning.encrypted', format: 'google-gemini-v1', data: signature, id: call.id, index: 0 }])
    expect(fake.signatures.has(signature)).toBe(true)

    messages.push(message, { role: 'tool', tool_call_id: call.id, content: '{"temperature": 21, "sky": "clear"}' })
    const second = await client.chat.completions.create({ model: FLASH, messages, tools: [weatherTool] })
    expect(second.choices[0].message.content).toBe('The tools said: get_weather={"temperature":21,"sky":"clear"}')
    expect(second.choices[0].finish_reason).toBe('stop')
    const answered = lastGenerate()
    expect(answered.body.contents).toEqual([
      { role: 'user', parts: [{ text: question }] },
      { role: 'model', parts: [{ functionCall: { id: call.id, name: 'get_weather', args: { city: question } }, thoughtSignature: signature }] },
      { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { temperature: 21, sky: 'clear' } } }] },
    ])
    const cost = expectedCost(pricingOf(FLASH), second.usage!)
    expect((second.usage as any).cost).toBe(Number(cost.usd))
  })

  it('round-trips a streamed tool call (whole calls in one delta, parsed by the client’s stream helper)', async () => {
    const question = 'Weather in Nantes?'
    const runner = client.chat.completions.stream({
      model: FLASH,
      messages: [{ role: 'user', content: question }],
      tools: [weatherTool],
      tool_choice: 'required',
    })
    const deltas: any[] = []
    runner.on('chunk', (chunk) => deltas.push(chunk))
    const final = await runner.finalChatCompletion()
    expect(lastGenerate().body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } })
    const calls = final.choices[0].message.tool_calls as any[]
    expect(calls).toHaveLength(1)
    expect(calls[0].function.name).toBe('get_weather')
    expect(JSON.parse(calls[0].function.arguments)).toEqual({ city: question })
    expect(final.choices[0].finish_reason).toBe('tool_calls')
    const callDeltas = deltas.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? [])
    expect(callDeltas).toHaveLength(1)
    expect(callDeltas[0]).toMatchObject({
      index: 0,
      id: calls[0].id,
      type: 'function',
      function: { name: 'get_weather', arguments: calls[0].function.arguments },
    })
    expect(deltas.at(-1).usage.completion_tokens).toBe(usageFrom(lastGenerate().usage).completion_tokens)

    const follow = await client.chat.completions.create({
      model: FLASH,
      stream: true,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[0].id, content: 'Rain, 12°C' },
      ],
    })
    let text = ''
    for await (const chunk of follow) text += chunk.choices[0]?.delta?.content ?? ''
    expect(text).toBe('The tools said: get_weather={"output":"Rain, 12°C"}')
    expect(lastGenerate().body.contents[2]).toEqual({
      role: 'user',
      parts: [{ functionResponse: { id: calls[0].id, name: 'get_weather', response: { output: 'Rain, 12°C' } } }],
    })
  })

  it('round-trips parallel calls: two calls, two results in one user turn', async () => {
    const question = 'Weather and time in Oslo?'
    const first = await client.chat.completions.create({ model: FLASH, messages: [{ role: 'user', content: question }], tools: [weatherTool, timeTool] })
    const calls = first.choices[0].message.tool_calls as any[]
    expect(calls.map((c) => c.function.name)).toEqual(['get_weather', 'get_time'])
    expect(new Set(calls.map((c) => c.id)).size).toBe(2)
    expect(JSON.parse(calls[1].function.arguments)).toEqual({ city: question, format: '24h' })
    expect(first.choices[0].finish_reason).toBe('tool_calls')

    const second = await client.chat.completions.create({
      model: FLASH,
      tools: [weatherTool, timeTool],
      messages: [
        { role: 'user', content: question },
        first.choices[0].message,
        { role: 'tool', tool_call_id: calls[0].id, content: 'Snow' },
        { role: 'tool', tool_call_id: calls[1].id, content: [{ type: 'text', text: '{"time":"14:05"}' }] },
      ],
    })
    expect(second.choices[0].message.content).toBe('The tools said: get_weather={"output":"Snow"}; get_time={"time":"14:05"}')
    const contents = lastGenerate().body.contents
    expect(contents).toHaveLength(3)
    expect(contents[1].parts.map((p: any) => p.functionCall)).toEqual([
      { id: calls[0].id, name: 'get_weather', args: { city: question } },
      { id: calls[1].id, name: 'get_time', args: { city: question, format: '24h' } },
    ])
    expect(contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: calls[0].id, name: 'get_weather', response: { output: 'Snow' } } },
        { functionResponse: { id: calls[1].id, name: 'get_time', response: { time: '14:05' } } },
      ],
    })
  })

  it('maps tool_choice: a named function → ANY with allowedFunctionNames, none → NONE', async () => {
    const named = await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: 'Time in Rome?' }],
      tools: [weatherTool, timeTool],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    })
    expect(lastGenerate().body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } })
    expect((named.choices[0].message.tool_calls as any[]).map((c) => c.function.name)).toEqual(['get_time'])

    const none = await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: 'Just talk' }],
      tools: [weatherTool],
      tool_choice: 'none',
    })
    expect(lastGenerate().body.toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } })
    expect(none.choices[0].message.content).toBe('Hello from gemini-2.5-flash: Just talk')
    expect(none.choices[0].message.tool_calls).toBeUndefined()
  })

  it('keeps Gemini 3 thought signatures across turns (and stands in for missing ones)', async () => {
    const model = 'google/gemini-3-flash-preview'
    const question = 'Weather in Porto?'
    const first = await client.chat.completions.create({ model, messages: [{ role: 'user', content: question }], tools: [weatherTool] })
    const message = first.choices[0].message as any
    const call = message.tool_calls[0]
    expect(call.id).toMatch(/^fc_/) // Gemini's own id is kept
    const signature = call.extra_content.google.thought_signature
    expect(fake.signatures.has(signature)).toBe(true)
    expect(message.reasoning_details).toEqual([{ type: 'reasoning.encrypted', format: 'google-gemini-v1', data: signature, id: call.id, index: 0 }])

    // The message as the client got it: the signature goes back, so Gemini 3 accepts the step.
    const second = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: question }, message, { role: 'tool', tool_call_id: call.id, content: 'Fog' }],
      tools: [weatherTool],
    })
    expect(second.choices[0].message.content).toBe('The tools said: get_weather={"output":"Fog"}')
    expect(lastGenerate().body.contents[1].parts[0]).toEqual({
      functionCall: { id: call.id, name: 'get_weather', args: { city: question } },
      thoughtSignature: signature,
    })
    // Gemini 3 also signs a text answer (in a closing empty part): passed on as a reasoning detail without id.
    expect((second.choices[0].message as any).reasoning_details).toEqual([
      { type: 'reasoning.encrypted', format: 'google-gemini-v1', data: expect.stringMatching(/^sig_/), index: 0 },
    ])

    // A history written elsewhere has no signature: Google's documented stand-in is sent instead of a 400.
    const foreign = await client.chat.completions.create({
      model,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: question },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_elsewhere', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Porto"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_elsewhere', content: 'Sun' },
      ],
    })
    expect(foreign.choices[0].message.content).toBe('The tools said: get_weather={"output":"Sun"}')
    expect(lastGenerate().body.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator')

    // Streamed: the call and its signature arrive in deltas.
    const res = await post({ model, stream: true, messages: [{ role: 'user', content: question }], tools: [weatherTool] })
    const { events } = await readSse(res)
    const delta = events.find((e: any) => e.choices?.[0]?.delta?.tool_calls)?.choices[0].delta
    expect(delta.tool_calls[0]).toMatchObject({
      index: 0,
      id: expect.stringMatching(/^fc_/),
      extra_content: { google: { thought_signature: expect.stringMatching(/^sig_/) } },
    })
    expect(delta.reasoning_details[0]).toMatchObject({
      type: 'reasoning.encrypted',
      id: delta.tool_calls[0].id,
      data: delta.tool_calls[0].extra_content.google.thought_signature,
    })
  })

  it('sends json_schema as responseJsonSchema (refs inlined, JSON Schema kept) and json_object as JSON output', async () => {
    const question = 'Describe Paris'
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { name: { type: 'string' }, country: { $ref: '#/$defs/country', description: 'Where it is' }, nickname: { type: ['string', 'null'] } },
      required: ['name', 'country', 'nickname'],
      additionalProperties: false,
      $defs: { country: { type: 'object', properties: { code: { type: 'string', enum: ['FR', 'DE'] } }, required: ['code'], additionalProperties: false } },
    }
    const completion = await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: question }],
      response_format: { type: 'json_schema', json_schema: { name: 'city', strict: true, schema } },
    })
    const config = lastGenerate().body.generationConfig
    expect(config.responseMimeType).toBe('application/json')
    expect(config.responseJsonSchema).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string' },
        country: {
          type: 'object',
          properties: { code: { type: 'string', enum: ['FR', 'DE'] } },
          required: ['code'],
          additionalProperties: false,
          description: 'Where it is',
        },
        nickname: { type: ['string', 'null'] },
      },
      required: ['name', 'country', 'nickname'],
      additionalProperties: false,
    })
    expect(config.responseSchema).toBeUndefined()
    expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ name: question, country: { code: 'FR' }, nickname: question })

    const object = await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: 'Give me JSON' }],
      response_format: { type: 'json_object' },
    })
    expect(lastGenerate().body.generationConfig).toMatchObject({ responseMimeType: 'application/json' })
    expect(lastGenerate().body.generationConfig.responseJsonSchema).toBeUndefined()
    expect(JSON.parse(object.choices[0].message.content!)).toEqual({ text: 'Give me JSON' })

    // Tool parameters with JSON Schema keywords the OpenAPI `parameters` field rejects go as parametersJsonSchema.
    const strictTool = {
      type: 'function' as const,
      function: {
        name: 'lookup',
        parameters: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { id: { type: 'integer' } },
          required: ['id'],
          additionalProperties: false,
        },
      },
    }
    const called = await client.chat.completions.create({ model: FLASH, messages: [{ role: 'user', content: 'Look up 4' }], tools: [strictTool] })
    expect(lastGenerate().body.tools[0].functionDeclarations[0]).toEqual({
      name: 'lookup',
      parametersJsonSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'], additionalProperties: false },
    })
    expect(JSON.parse((called.choices[0].message.tool_calls![0] as any).function.arguments)).toEqual({ id: 42 })

    // A recursive $ref cannot be made self-contained: 400 before anything goes upstream.
    const before = fake.requests.length
    const res = await post({
      model: FLASH,
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'tree', schema: { type: 'object', properties: { child: { $ref: '#' } } } } },
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toMatch(/recursive/)
    expect(fake.requests.length).toBe(before)
  })

  it('maps reasoning to thinkingConfig: thought text in message.reasoning, thinking tokens billed as reasoning tokens', async () => {
    const question = 'Why is the sky blue?'
    const completion = await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: question }],
      ...({ reasoning: { effort: 'high' } } as object),
    })
    expect(lastGenerate().body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 24_576 })
    expect((completion.choices[0].message as any).reasoning).toBe(`Thinking about "${question}"`)
    const usage = completion.usage as any
    expect(usage.completion_tokens_details.reasoning_tokens).toBe(16)
    expect(usage.completion_tokens).toBe(lastGenerate().usage.candidatesTokenCount + 16)
    const cost = expectedCost(pricingOf(FLASH), usage)
    expect(usage.cost).toBe(Number(cost.usd))
    expect(usage.cost_eur).toBe(Number(cost.eur))

    await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: question }],
      ...({ reasoning: { max_tokens: 1000, exclude: true } } as object),
    })
    expect(lastGenerate().body.generationConfig.thinkingConfig).toEqual({ includeThoughts: false, thinkingBudget: 1000 })

    const off = await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: question }],
      ...({ reasoning: { enabled: false } } as object),
    })
    expect(lastGenerate().body.generationConfig.thinkingConfig).toEqual({ includeThoughts: false, thinkingBudget: 0 })
    expect((off.choices[0].message as any).reasoning).toBeNull()
    expect((off.usage as any).completion_tokens_details.reasoning_tokens).toBe(0)

    // Gemini 3 takes a level: the nearest one the model offers (3.1 Pro has no MINIMAL).
    await client.chat.completions.create({
      model: 'google/gemini-3.1-pro-preview',
      messages: [{ role: 'user', content: question }],
      ...({ reasoning: { effort: 'minimal' } } as object),
    })
    expect(lastGenerate().body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingLevel: 'LOW' })
    await client.chat.completions.create({
      model: 'google/gemini-3-flash-preview',
      messages: [{ role: 'user', content: question }],
      ...({ reasoning: { effort: 'minimal' } } as object),
    })
    expect(lastGenerate().body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingLevel: 'MINIMAL' })
  })

  it('sends images (base64 and http URLs), audio and files as parts; refuses what Gemini cannot take', async () => {
    const completion = await client.chat.completions.create({
      model: FLASH,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/photos/cat.JPG?size=large' } },
            { type: 'input_audio', input_audio: { data: WAV, format: 'wav' } },
            { type: 'input_audio', input_audio: { data: MP3, format: 'mp3' } },
            { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
          ],
        },
      ],
    })
    expect(lastGenerate().body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: PNG } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photos/cat.JPG?size=large' } },
          { inlineData: { mimeType: 'audio/wav', data: WAV } },
          { inlineData: { mimeType: 'audio/mp3', data: MP3 } },
          { inlineData: { mimeType: 'application/pdf', data: PDF } },
        ],
      },
    ])
    expect(completion.choices[0].message.content).toBe(
      'Hello from gemini-2.5-flash: What is in these? [image/png] [image/jpeg] [audio/wav] [audio/mp3] [application/pdf]',
    )
    const usage = completion.usage as any
    expect(usage.prompt_tokens).toBe(lastGenerate().usage.promptTokenCount)
    expect(usage.prompt_tokens_details.audio_tokens).toBe(200)
    expect(usage.cost).toBe(Number(expectedCost(pricingOf(FLASH), usage).usd))

    const before = fake.requests.length
    const noType = await post({
      model: FLASH,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/render?id=7' } }] }],
    })
    expect(noType.status).toBe(400)
    expect((await noType.json()).error).toMatchObject({
      param: 'messages[0].content[0].image_url.url',
      message: expect.stringMatching(/cannot be told from its name.*base64 data URL/),
    })
    const m4a = await post({ model: FLASH, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: WAV, format: 'm4a' } }] }] })
    expect(m4a.status).toBe(400)
    expect((await m4a.json()).error.message).toMatch(/takes audio as wav, mp3, aiff, aac, ogg, flac/)
    const fileId = await post({ model: FLASH, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] })
    expect(fileId.status).toBe(400)
    expect(fake.requests.length).toBe(before)
  })

  it('bills implicitly cached prompt tokens at the cache price', async () => {
    const system = `You are a meticulous travel agent. ${'Always check visas, weather and local holidays. '.repeat(40)}`
    const ask = () =>
      client.chat.completions.create({
        model: FLASH,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'Plan a weekend in Ghent' },
        ],
      })
    const first = await ask()
    expect((first.usage as any).prompt_tokens_details.cached_tokens).toBe(0)
    const second = await ask()
    const usage = second.usage as any
    const cached = lastGenerate().usage.cachedContentTokenCount
    expect(cached).toBeGreaterThan(400)
    expect(usage.prompt_tokens_details.cached_tokens).toBe(cached)
    expect(usage.prompt_tokens).toBe(lastGenerate().usage.promptTokenCount)
    const cost = expectedCost(pricingOf(FLASH), usage)
    expect(usage.cost).toBe(Number(cost.usd))
    expect(usage.cost_eur).toBe(Number(cost.eur))
    expect(usage.cost).toBeLessThan((first.usage as any).cost)
  })

  it('passes logprobs and the length finish reason through', async () => {
    const completion = await client.chat.completions.create({
      model: FLASH,
      messages: [{ role: 'user', content: 'count one two three four five six' }],
      logprobs: true,
      top_logprobs: 2,
      max_completion_tokens: 4,
    })
    expect(lastGenerate().body.generationConfig).toMatchObject({ responseLogprobs: true, logprobs: 2, maxOutputTokens: 4 })
    const choice = completion.choices[0] as any
    expect(choice.message.content).toBe('Hello from gemini-2.5-flash: count')
    expect(choice.finish_reason).toBe('length')
    expect(choice.native_finish_reason).toBe('MAX_TOKENS')
    expect(choice.logprobs.content.map((e: any) => e.token)).toEqual(['Hello', 'from', 'gemini-2.5-flash:', 'count'])
    expect(choice.logprobs.content[0]).toEqual({
      token: 'Hello',
      logprob: -0.5,
      bytes: [...Buffer.from('Hello')],
      top_logprobs: [
        { token: 'Hello', logprob: -0.5, bytes: [...Buffer.from('Hello')] },
        { token: 'Hello~1', logprob: -1.5, bytes: [...Buffer.from('Hello~1')] },
      ],
    })

    const res = await post({ model: FLASH, stream: true, messages: [{ role: 'user', content: 'count one two' }], logprobs: true, top_logprobs: 1 })
    const { events } = await readSse(res)
    const streamed = events.slice(0, -1).flatMap((e: any) => e.choices?.[0]?.logprobs?.content ?? [])
    expect(streamed.map((e: any) => e.token)).toEqual(['Hello', 'from', 'gemini-2.5-flash:', 'count', 'one', 'two'])
    expect(streamed[5]).toMatchObject({ logprob: -3, top_logprobs: [{ token: 'two', logprob: -3 }] })
  })
})

describe('Gemini errors', () => {
  const cases: [string, number, string][] = [
    ['google/fail-429', 429, 'rate_limit_exceeded'],
    ['google/fail-503', 502, 'provider_overloaded'],
    ['google/fail-500', 502, 'provider_unavailable'],
    ['google/fail-400', 400, 'invalid_request'],
    ['google/fail-context', 400, 'context_length_exceeded'],
    ['google/fail-precondition', 400, 'invalid_request'],
    ['google/fail-401', 502, 'authentication'],
    ['google/fail-403', 502, 'authentication'],
    ['google/palm-2', 400, 'invalid_request'],
    ['bad/gemini-2.5-flash', 502, 'authentication'],
    ['nokey/gemini-2.5-flash', 502, 'authentication'],
    ['google/fail-blocked', 400, 'content_filter'],
  ]
  for (const [model, status, type] of cases) {
    it(`${model} → ${status} ${type}`, async () => {
      for (const stream of [false, true]) {
        const res = await post({ model, stream, messages: [{ role: 'user', content: 'hello' }] })
        expect(res.status).toBe(status)
        const text = await res.text()
        const body = JSON.parse(text)
        expect(body.error.metadata).toMatchObject({ error_type: type, provider_name: expect.any(String), raw: expect.any(String) })
        expect(text).not.toContain(API_KEY)
        if (model === 'google/fail-429') expect(res.headers.get('retry-after')).toBe('17')
        if (model === 'google/fail-403')
          expect(body.error.metadata.raw).toBe("PERMISSION_DENIED: Permission denied: Consumer 'api_key:[redacted]' has been suspended.")
        if (model === 'bad/gemini-2.5-flash') expect(body.error.metadata.raw).toBe('INVALID_ARGUMENT: API key not valid. Please pass a valid API key.')
        if (model === 'google/fail-context') expect(body.error.metadata.raw).toMatch(/input token count \(1250000\) exceeds/)
        if (model === 'google/fail-blocked') expect(body.error.message).toBe('Google AI Studio blocked the prompt (PROHIBITED_CONTENT)')
      }
    })
  }

  it('turns an error event mid-stream into an error chunk after the content already sent', async () => {
    const res = await post({ model: 'google/fail-midstream', stream: true, messages: [{ role: 'user', content: 'one two three four' }] })
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    expect(events.at(-1)).toBe('[DONE]')
    const content = events
      .slice(0, -1)
      .map((e: any) => e.choices?.[0]?.delta?.content ?? '')
      .join('')
    expect(content).toBe('Hello from ')
    const failed = events.find((e: any) => e.error)
    expect(failed.error.metadata).toMatchObject({ error_type: 'provider_unavailable', raw: expect.stringMatching(/^INTERNAL: An internal error has occurred/) })
    expect(failed.choices[0].finish_reason).toBe('error')
  })

  it('reports a candidate stopped for recitation as content_filter', async () => {
    const completion = await client.chat.completions.create({ model: 'google/fail-recitation', messages: [{ role: 'user', content: 'Recite a song' }] })
    expect(completion.choices[0].finish_reason).toBe('content_filter')
    expect(completion.choices[0].message.content).toBeNull()
  })
})
