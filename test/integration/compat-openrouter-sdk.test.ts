/**
 * OpenRouter's own client, `@openrouter/sdk` (pinned in package.json), unchanged against the gateway over real HTTP on
 * 127.0.0.1, with the fake OpenAI upstream of test/fakes/openai.ts behind it: one test per SDK method that maps to a
 * route of the gateway. Each checks what reached the upstream, what the SDK parsed (its zod schemas validate every
 * answer, so a missing or mistyped field fails the call, and a stream event or output item it cannot type comes out
 * as UNKNOWN) and, for billed calls, the exact cost. Audio, embeddings and the Responses API run on gateways of their
 * own (OpenAI natively for `/responses`, an OpenAI-compatible host translated), so that the chat catalogue stays one
 * model. Methods that map to nothing the gateway serves are in docs/compatibility.md, not here.
 */
import { createHash, randomBytes } from 'node:crypto'
import { OpenRouter } from '@openrouter/sdk'
import type { BYOKProviderSlug } from '@openrouter/sdk/models'
import * as sdkErrors from '@openrouter/sdk/models/errors'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiAudioModels } from '../../src/providers/models/audio-models'
import { embeddingModels } from '../../src/providers/models/embedding-models'
import { openai } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { ProviderModel } from '../../src/contracts'
import { makeWav } from '../fakes/audio'
import { fakeEmbedding } from '../fakes/embedding-vector'
import { fakeSpeechAudio } from '../fakes/openai-audio'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const SUPPORTED = ['max_tokens', 'temperature', 'tools', 'tool_choice', 'response_format', 'structured_outputs', 'reasoning']
// OpenAI's audio models without their retirement dates, so the tests do not depend on the day they run.
const audioModels: ProviderModel[] = openaiAudioModels
  .filter((m) => m.id === 'openai/tts-1' || m.id === 'openai/whisper-1')
  .map((m) => ({ ...m, expirationDate: undefined }))

/** The exact cost of a request: USD at the model's prices, EUR at 0.86 (rounded half-up once, to 12 digits). */
const usdToEur = (usd: bigint) => ({ usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) })
const chatCost = (promptTokens: number, completionTokens: number) =>
  usdToEur(BigInt(promptTokens) * units(PRICING.prompt) + BigInt(completionTokens) * units(PRICING.completion))

/** The fake's token counts: its prompt is the JSON of the messages it received / 4, its completion one token per word. */
const fakePromptTokens = (upstreamBody: any) => Math.ceil(JSON.stringify(upstreamBody.messages).length / 4)
const words = (text: string) => text.split(/\s+/).filter(Boolean).length

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}

let fake: FakeOpenAI
let t: TestGateway

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: ['sk-upstream', 'sk-customer-own-0123456789'] })
  t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    // The host's session, for the browser PKCE flow: here, a header the tests set.
    auth: { resolveUser: (event) => event.req.headers.get('x-test-user'), signInUrl: '/sign-in' },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: fake.url,
        apiKey: 'sk-upstream',
        byokSupported: true,
        // A zero-retention provider, so that provider.zdr and data_collection "deny" keep it.
        dataPolicy: { training: false, retains_prompts: false, source: 'test', checked: '2026-11-26' },
        models: [
          {
            id: 'fake/gpt-test',
            upstreamId: 'gpt-test',
            name: 'Fake GPT',
            pricing: PRICING,
            contextLength: 32_000,
            maxCompletionTokens: 4_096,
            quantization: 'fp8',
            supportedParameters: SUPPORTED,
          },
        ],
      }),
    ],
  })
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

/** A new customer (its own org with 5 EUR) and an SDK client on its key. */
async function customerWithSdk(options: ConstructorParameters<typeof OpenRouter>[0] = {}, on: TestGateway = t) {
  const customer = await createCustomer(on.gateway, { credits: '5' })
  const sdk = new OpenRouter({ apiKey: customer.key, serverURL: `${on.url}/api/v1`, retryConfig: { strategy: 'none' }, ...options })
  return { ...customer, sdk }
}
const chatsSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')
const spent = async (orgId: string, on: TestGateway = t) => (await on.gateway.admin.getCredits(orgId)).total_usage

describe('@openrouter/sdk: chat', () => {
  it('chat.send answers a whole completion with the exact cost, and the org pays exactly cost × 0.86', async () => {
    const { sdk, user } = await customerWithSdk()
    const sent = fake.requests.length
    const text = 'What is the capital of France?'
    const result = await sdk.chat.send({
      chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: text }], maxTokens: 100, temperature: 0.5 },
    })

    const [upstream] = chatsSince(sent)
    expect(upstream.headers.authorization).toBe('Bearer sk-upstream')
    expect(upstream.body).toMatchObject({ model: 'gpt-test', messages: [{ role: 'user', content: text }], max_tokens: 100, temperature: 0.5 })

    if (!('choices' in result)) throw new Error('expected a whole completion')
    const answer = `Hello from gpt-test: ${text}`
    expect(result.id).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(result.model).toBe('fake/gpt-test')
    expect(result.object).toBe('chat.completion')
    expect(result.choices).toHaveLength(1)
    expect(result.choices[0].message).toMatchObject({ role: 'assistant', content: answer })
    expect(result.choices[0].finishReason).toBe('stop')

    const promptTokens = fakePromptTokens(upstream.body)
    const cost = chatCost(promptTokens, words(answer))
    expect(result.usage).toMatchObject({
      promptTokens,
      completionTokens: words(answer),
      totalTokens: promptTokens + words(answer),
      cost: Number(cost.usd),
      isByok: false,
    })
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('chat.send with stream: true yields the chunks, the usage and cost in the last one', async () => {
    const { sdk, user } = await customerWithSdk()
    const sent = fake.requests.length
    const text = 'Tell me a story'
    const stream = await sdk.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: text }], stream: true } })
    if ('choices' in stream) throw new Error('expected a stream')
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)

    const [upstream] = chatsSince(sent)
    expect(upstream.body).toMatchObject({ model: 'gpt-test', stream: true, stream_options: { include_usage: true } })
    const answer = `Hello from gpt-test: ${text}`
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(answer)
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
    expect(chunks.filter((c) => c.choices.length).at(-1)!.choices[0].finishReason).toBe('stop')
    const last = chunks.at(-1)!
    expect(last.choices).toEqual([])
    const promptTokens = fakePromptTokens(upstream.body)
    const cost = chatCost(promptTokens, words(answer))
    expect(last.usage).toMatchObject({ promptTokens, completionTokens: words(answer), cost: Number(cost.usd) })
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('chat.send with tools returns the tool call, and answers the tool result', async () => {
    const { sdk } = await customerWithSdk()
    const first = await sdk.chat.send({
      chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'Paris' }], tools: [weatherTool], toolChoice: 'auto' },
    })
    if (!('choices' in first)) throw new Error('expected a whole completion')
    expect(first.choices[0].finishReason).toBe('tool_calls')
    const call = first.choices[0].message.toolCalls![0]
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } })
    expect(call.id).toMatch(/^call_fake0/)

    const sent = fake.requests.length
    const second = await sdk.chat.send({
      chatRequest: {
        model: 'fake/gpt-test',
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Paris' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: call.function.arguments } }],
          },
          { role: 'tool', toolCallId: call.id, content: 'Sunny, 24 °C' },
        ],
      },
    })
    if (!('choices' in second)) throw new Error('expected a whole completion')
    expect(second.choices[0].message.content).toBe('The tool said: Sunny, 24 °C')
    const [upstream] = chatsSince(sent)
    expect(upstream.body.tools).toEqual([weatherTool])
    expect(upstream.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: call.id, content: 'Sunny, 24 °C' },
    ])
  })

  it('chat.send with a json_schema response format answers matching JSON, the format passed upstream unchanged', async () => {
    const { sdk } = await customerWithSdk()
    const sent = fake.requests.length
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    }
    const result = await sdk.chat.send({
      chatRequest: {
        model: 'fake/gpt-test',
        messages: [{ role: 'user', content: 'Ada' }],
        responseFormat: { type: 'json_schema', jsonSchema: { name: 'person', schema, strict: true } },
      },
    })
    if (!('choices' in result)) throw new Error('expected a whole completion')
    expect(JSON.parse(result.choices[0].message.content as string)).toEqual({ name: 'Ada', age: 42 })
    expect(chatsSince(sent)[0].body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'person', schema, strict: true } })
  })

  it('chat.send with OpenRouter’s own fields: provider preferences, reasoning, session, metadata, trace reach no provider', async () => {
    const { sdk } = await customerWithSdk()
    const sent = fake.requests.length
    const result = await sdk.chat.send({
      chatRequest: {
        model: 'fake/gpt-test',
        messages: [{ role: 'user', content: 'Private please' }],
        provider: {
          zdr: true,
          dataCollection: 'deny',
          quantizations: ['fp8'],
          sort: { by: 'price', partition: 'none' },
          allowFallbacks: false,
          order: ['fake'],
        },
        reasoning: { effort: 'low' },
        sessionId: 'session-42',
        metadata: { team: 'compat' },
        trace: { traceId: 'trace-1' },
        user: 'end-user-7',
      },
    })
    if (!('choices' in result)) throw new Error('expected a whole completion')
    expect(result.choices[0].message.content).toBe('Hello from gpt-test: Private please')
    const [upstream] = chatsSince(sent)
    for (const field of ['provider', 'reasoning', 'session_id', 'metadata', 'trace', 'plugins', 'usage', 'transforms'])
      expect(upstream.body, field).not.toHaveProperty(field)
    expect(upstream.body.messages).toEqual([{ role: 'user', content: 'Private please' }])
  })

  it('errors are the SDK’s typed errors: a bad key → UnauthorizedResponseError, an unknown model → NotFoundResponseError', async () => {
    const bad = new OpenRouter({ apiKey: `sk-service-v1-${'0'.repeat(64)}`, serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
    const unauthorized = await bad.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'hi' }] } }).catch((e: unknown) => e)
    expect(unauthorized).toBeInstanceOf(sdkErrors.UnauthorizedResponseError)
    expect(unauthorized).toMatchObject({ statusCode: 401, error: { code: 401 } })

    const { sdk } = await customerWithSdk()
    const missing = await sdk.chat.send({ chatRequest: { model: 'nobody/nothing', messages: [{ role: 'user', content: 'hi' }] } }).catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(sdkErrors.NotFoundResponseError)
    expect(missing).toMatchObject({ statusCode: 404, error: { code: 404 } })
  })
})

describe('@openrouter/sdk: catalogue', () => {
  const expectedModel = {
    id: 'fake/gpt-test',
    canonicalSlug: 'fake/gpt-test',
    name: 'Fake GPT',
    contextLength: 32_000,
    pricing: expect.objectContaining({ prompt: '0.000001', completion: '0.000002' }),
    supportedParameters: SUPPORTED,
    topProvider: expect.objectContaining({ contextLength: 32_000, maxCompletionTokens: 4_096 }),
    architecture: expect.objectContaining({ inputModalities: ['text'], outputModalities: ['text'] }),
  }

  it('models.list returns the catalogue’s chat models with their exact prices', async () => {
    const { sdk } = await customerWithSdk()
    const page = await sdk.models.list()
    expect(page.result.data.map((m) => m.id)).toEqual(['fake/gpt-test'])
    expect(page.result.data[0]).toMatchObject(expectedModel)
    expect(page.result.totalCount).toBe(1)
  })

  it('models.count counts them', async () => {
    const { sdk } = await customerWithSdk()
    expect(await sdk.models.count()).toEqual({ data: { count: 1 } })
  })

  it('models.get reads one model by author and slug', async () => {
    const { sdk } = await customerWithSdk()
    const model = await sdk.models.get({ author: 'fake', slug: 'gpt-test' })
    expect(model.data).toMatchObject(expectedModel)
  })

  it('models.listForUser lists the models the key may use', async () => {
    const { sdk, key } = await customerWithSdk()
    const page = await sdk.models.listForUser({ bearer: key })
    expect(page.result.data.map((m) => m.id)).toEqual(['fake/gpt-test'])
    expect(page.result.data[0]).toMatchObject(expectedModel)
  })

  it('endpoints.list lists the providers serving a model, with their prices and quantization', async () => {
    const { sdk } = await customerWithSdk()
    const listed = await sdk.endpoints.list({ author: 'fake', slug: 'gpt-test' })
    expect(listed.data).toMatchObject({ id: 'fake/gpt-test', name: 'Fake GPT' })
    expect(listed.data.endpoints).toHaveLength(1)
    expect(listed.data.endpoints[0]).toMatchObject({
      providerName: 'Fake',
      tag: 'fake',
      quantization: 'fp8',
      contextLength: 32_000,
      maxCompletionTokens: 4_096,
      pricing: expect.objectContaining({ prompt: '0.000001', completion: '0.000002' }),
      supportedParameters: SUPPORTED,
    })
  })

  it('providers.list lists the upstream providers', async () => {
    const { sdk } = await customerWithSdk()
    const listed = await sdk.providers.list()
    expect(listed.data).toEqual([expect.objectContaining({ name: 'Fake', slug: 'fake' })])
  })
})

describe('@openrouter/sdk: credits, generations, activity', () => {
  it('credits.getCredits gives the org’s credits and exact usage', async () => {
    const { sdk, user } = await customerWithSdk()
    expect(await sdk.credits.getCredits()).toEqual({ data: { totalCredits: 5, totalUsage: 0 } })
    const sent = fake.requests.length
    await sdk.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'Count me' }] } })
    const [upstream] = chatsSince(sent)
    const cost = chatCost(fakePromptTokens(upstream.body), words('Hello from gpt-test: Count me'))
    expect(await sdk.credits.getCredits()).toEqual({ data: { totalCredits: 5, totalUsage: Number(cost.eur) } })
    expect(await spent(user.org_id)).toBe(cost.eur)
  })

  it('generations.getGeneration reads a generation’s stats: tokens, cost, provider, app attribution', async () => {
    const { sdk } = await customerWithSdk({ httpReferer: 'https://app.example/chat', appTitle: 'Compat App' })
    const sent = fake.requests.length
    const result = await sdk.chat.send({
      chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'Remember me' }], sessionId: 'session-7' },
    })
    if (!('choices' in result)) throw new Error('expected a whole completion')
    const [upstream] = chatsSince(sent)
    const promptTokens = fakePromptTokens(upstream.body)
    const completionTokens = words('Hello from gpt-test: Remember me')
    const cost = chatCost(promptTokens, completionTokens)

    const generation = await sdk.generations.getGeneration({ id: result.id })
    expect(generation.data).toMatchObject({
      id: result.id,
      model: 'fake/gpt-test',
      providerName: 'Fake',
      upstreamId: `chatcmpl-fake${fake.requests.length}`,
      streamed: false,
      cancelled: false,
      isByok: false,
      finishReason: 'stop',
      nativeFinishReason: 'stop',
      tokensPrompt: promptTokens,
      tokensCompletion: completionTokens,
      nativeTokensPrompt: promptTokens,
      nativeTokensCompletion: completionTokens,
      totalCost: Number(cost.usd),
      usage: Number(cost.eur),
      httpReferer: 'https://app.example/chat',
      sessionId: 'session-7',
      apiType: 'completions',
    })
    expect(generation.data.appId).toEqual(expect.any(Number))
  })

  it('analytics.getUserActivity sums the day’s requests, tokens and usage per model and provider', async () => {
    const { sdk } = await customerWithSdk()
    const sent = fake.requests.length
    await sdk.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'One' }] } })
    await sdk.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'Two more' }] } })
    const upstream = chatsSince(sent)
    const prompt = upstream.reduce((n, r) => n + fakePromptTokens(r.body), 0)
    const completion = words('Hello from gpt-test: One') + words('Hello from gpt-test: Two more')
    const cost = chatCost(prompt, completion)

    const activity = await sdk.analytics.getUserActivity()
    expect(activity.data).toEqual([
      expect.objectContaining({
        date: new Date().toISOString().slice(0, 10),
        model: 'fake/gpt-test',
        modelPermaslug: 'fake/gpt-test',
        providerName: 'Fake',
        requests: 2,
        promptTokens: prompt,
        completionTokens: completion,
        reasoningTokens: 0,
        usage: Number(cost.eur),
        byokUsageInference: 0,
      }),
    ])
  })
})

describe('@openrouter/sdk: API keys', () => {
  it('apiKeys.getCurrentKeyMetadata describes the calling key: its label, limit and usage', async () => {
    const { sdk, record, user } = await customerWithSdk()
    const sent = fake.requests.length
    await sdk.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'Spend' }] } })
    const cost = chatCost(fakePromptTokens(chatsSince(sent)[0].body), words('Hello from gpt-test: Spend'))
    const current = await sdk.apiKeys.getCurrentKeyMetadata()
    expect(current.data).toMatchObject({
      label: record.label,
      limit: null,
      limitRemaining: null,
      limitReset: null,
      includeByokInLimit: false,
      isManagementKey: false,
      isProvisioningKey: false,
      isFreeTier: false,
      usage: Number(cost.eur),
      usageDaily: Number(cost.eur),
      usageWeekly: Number(cost.eur),
      usageMonthly: Number(cost.eur),
      byokUsage: 0,
    })
    expect(current.data.organizationId ?? user.org_id).toBe(user.org_id)
  })

  describe('with a management key', () => {
    let manager: OpenRouter
    let userId: string
    beforeAll(async () => {
      const customer = await createCustomer(t.gateway, { credits: '5' })
      userId = customer.user.id
      const management = await t.gateway.admin.issueKey({ userId, management: true, label: 'manager' })
      manager = new OpenRouter({ apiKey: management.key, serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
    })

    it('apiKeys.create creates a key, shown once, that works for chat', async () => {
      const created = await manager.apiKeys.create({ requestBody: { name: 'ci key', limit: 2, limitReset: 'monthly' } })
      expect(created.key).toMatch(/^sk-service-v1-[0-9a-f]{64}$/)
      expect(created.data).toMatchObject({
        name: 'ci key',
        limit: 2,
        limitRemaining: 2,
        limitReset: 'monthly',
        disabled: false,
        usage: 0,
        includeByokInLimit: false,
      })
      expect(created.data.hash).toBe(createHash('sha256').update(created.key).digest('hex'))
      const client = new OpenRouter({ apiKey: created.key, serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
      const answer = await client.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'new key' }] } })
      expect('choices' in answer && answer.choices[0].message.content).toBe('Hello from gpt-test: new key')
    })

    it('apiKeys.list lists the org’s keys', async () => {
      const created = await manager.apiKeys.create({ requestBody: { name: 'listed key' } })
      const listed = await manager.apiKeys.list()
      expect(listed.data.map((k) => k.hash)).toContain(created.data.hash)
      expect(listed.data.find((k) => k.hash === created.data.hash)).toMatchObject({ name: 'listed key', limit: null, disabled: false })
    })

    it('apiKeys.get reads one key by its hash', async () => {
      const created = await manager.apiKeys.create({ requestBody: { name: 'read key', limit: 1.5 } })
      const read = await manager.apiKeys.get({ hash: created.data.hash })
      expect(read.data).toMatchObject({ hash: created.data.hash, name: 'read key', limit: 1.5, limitRemaining: 1.5, usage: 0 })
    })

    it('apiKeys.update renames, limits and disables a key; a disabled key answers 401', async () => {
      const created = await manager.apiKeys.create({ requestBody: { name: 'old name' } })
      const updated = await manager.apiKeys.update({ hash: created.data.hash, requestBody: { name: 'new name', limit: 3, disabled: true } })
      expect(updated.data).toMatchObject({ hash: created.data.hash, name: 'new name', limit: 3, disabled: true })
      const client = new OpenRouter({ apiKey: created.key, serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
      await expect(client.credits.getCredits()).rejects.toMatchObject({ statusCode: 401 })
    })

    it('apiKeys.delete deletes a key; it then answers 401', async () => {
      const created = await manager.apiKeys.create({ requestBody: { name: 'doomed' } })
      expect(await manager.apiKeys.delete({ hash: created.data.hash })).toEqual({ deleted: true })
      const client = new OpenRouter({ apiKey: created.key, serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
      await expect(client.credits.getCredits()).rejects.toMatchObject({ statusCode: 401 })
      await expect(manager.apiKeys.get({ hash: created.data.hash })).rejects.toMatchObject({ statusCode: 404 })
    })
  })
})

describe('@openrouter/sdk: OAuth (PKCE)', () => {
  it('oAuth.createAuthCode answers the code as data.id with app_id and created_at; it exchanges for a working key', async () => {
    const { sdk, user } = await customerWithSdk()
    const { codeChallenge, codeVerifier } = await sdk.oAuth.createSHA256CodeChallenge()
    expect(codeChallenge).toBe(createHash('sha256').update(codeVerifier).digest('base64url'))

    const created = await sdk.oAuth.createAuthCode({
      requestBody: { callbackUrl: 'https://app.example/callback', codeChallenge, codeChallengeMethod: 'S256', keyLabel: 'from the SDK', limit: 1 },
    })
    expect(created.data.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(created.data.appId).toEqual(expect.any(Number))
    expect(new Date(created.data.createdAt).toString()).not.toBe('Invalid Date')

    const anonymous = new OpenRouter({ serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
    const exchanged = await anonymous.oAuth.exchangeAuthCodeForAPIKey({ requestBody: { code: created.data.id, codeVerifier, codeChallengeMethod: 'S256' } })
    expect(exchanged.key).toMatch(/^sk-service-v1-[0-9a-f]{64}$/)
    expect(exchanged.userId).toBe(user.id)

    const client = new OpenRouter({ apiKey: exchanged.key, serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
    expect(await client.credits.getCredits()).toEqual({ data: { totalCredits: 5, totalUsage: 0 } })
    // The code is spent.
    await expect(anonymous.oAuth.exchangeAuthCodeForAPIKey({ requestBody: { code: created.data.id, codeVerifier } })).rejects.toMatchObject({ statusCode: 403 })
  })

  it('oAuth.exchangeAuthCodeForAPIKey exchanges a code and its verifier for a working key, once', async () => {
    const { sdk, auth, user } = await customerWithSdk()
    const { codeChallenge, codeVerifier } = await sdk.oAuth.createSHA256CodeChallenge()
    expect(codeChallenge).toBe(createHash('sha256').update(codeVerifier).digest('base64url'))
    // The code is made over plain HTTP here (oAuth.createAuthCode has its own test); the answer's shape is that test's business.
    const made = await t.request('/api/v1/auth/keys/code', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ callback_url: 'https://app.example/callback', code_challenge: codeChallenge, code_challenge_method: 'S256' }),
    })
    const madeBody = await made.json()
    const code: string = madeBody.data?.id ?? madeBody.code

    const anonymous = new OpenRouter({ serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
    const exchanged = await anonymous.oAuth.exchangeAuthCodeForAPIKey({ requestBody: { code, codeVerifier, codeChallengeMethod: 'S256' } })
    expect(exchanged.key).toMatch(/^sk-service-v1-[0-9a-f]{64}$/)
    expect(exchanged.userId).toBe(user.id)
    const client = new OpenRouter({ apiKey: exchanged.key, serverURL: `${t.url}/api/v1`, retryConfig: { strategy: 'none' } })
    expect(await client.credits.getCredits()).toEqual({ data: { totalCredits: 5, totalUsage: 0 } })
    // A code is spent by its exchange.
    await expect(anonymous.oAuth.exchangeAuthCodeForAPIKey({ requestBody: { code, codeVerifier } })).rejects.toMatchObject({ statusCode: 403 })
  })

  it('oAuth.createAuthorizationUrl builds <origin>/auth with the PKCE query; the same query begins the flow at …/api/v1/auth', async () => {
    const { sdk, user } = await customerWithSdk()
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url')
    const url = new URL(
      await sdk.oAuth.createAuthorizationUrl({ callbackUrl: 'https://app.example/cb', codeChallenge: challenge, codeChallengeMethod: 'S256', limit: 3 }),
    )
    // The SDK drops the server URL's path: OpenRouter's page is on its site, not under /api/v1 (docs/compatibility.md).
    expect(url.origin + url.pathname).toBe(`${t.url}/auth`)
    expect(Object.fromEntries(url.searchParams)).toEqual({
      callback_url: 'https://app.example/cb',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      limit: '3',
    })
    const path = `/api/v1/auth${url.search}`
    const signIn = await t.request(path, { redirect: 'manual' })
    expect(signIn.status).toBe(302)
    expect(signIn.headers.get('location')).toBe(`/sign-in?return_to=${encodeURIComponent(t.url + path)}`)
    const consent = await t.request(path, { redirect: 'manual', headers: { 'x-test-user': user.id } })
    expect(consent.status).toBe(302)
    expect(consent.headers.get('location')).toMatch(/^\/api\/v1\/auth\/consent\?request=/)
  })
})

describe('@openrouter/sdk: BYOK', () => {
  // The SDK's provider slug is an open enum: a slug it does not list (this gateway's 'fake') is sent as it is.
  const FAKE = 'fake' as BYOKProviderSlug

  it('byok.create, list, get, update and delete manage a provider key, never returning it', async () => {
    const { sdk, user } = await customerWithSdk()
    const secret = 'sk-customer-own-0123456789'
    const created = await sdk.byok.create({
      createBYOKKeyRequest: { key: secret, provider: FAKE, name: 'my key', allowedModels: ['fake/gpt-test'], isFallback: false },
    })
    expect(JSON.stringify(created)).not.toContain(secret)
    expect(created.data).toMatchObject({
      provider: 'fake',
      name: 'my key',
      allowedModels: ['fake/gpt-test'],
      isFallback: false,
      disabled: false,
      label: 'sk-…6789',
      allowedUserIds: [],
      isRequired: false,
      isByokOnly: false,
      declaredZdr: null,
      workspaceId: user.org_id,
    })
    const id = created.data.id

    const listed = await sdk.byok.list()
    expect(listed.result.data.map((k) => k.id)).toEqual([id])

    expect((await sdk.byok.get({ id })).data).toMatchObject({ id, provider: 'fake', name: 'my key' })

    const updated = await sdk.byok.update({ id, updateBYOKKeyRequest: { disabled: true, name: 'renamed', allowedUserIds: [user.id], declaredZdr: true } })
    expect(updated.data).toMatchObject({ id, disabled: true, name: 'renamed', allowedUserIds: [user.id], declaredZdr: true })

    expect(await sdk.byok.delete({ id })).toMatchObject({ deleted: true })
    expect((await sdk.byok.list()).result.data).toEqual([])
  })

  it('a key added through byok.create serves the customer’s chats (is_byok, the platform fee charged)', async () => {
    const { sdk } = await customerWithSdk()
    await sdk.byok.create({ createBYOKKeyRequest: { key: 'sk-customer-own-0123456789', provider: FAKE } })
    const sent = fake.requests.length
    const result = await sdk.chat.send({ chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'On my key' }] } })
    if (!('choices' in result)) throw new Error('expected a whole completion')
    const [upstream] = chatsSince(sent)
    expect(upstream.headers.authorization).toBe('Bearer sk-customer-own-0123456789')
    const cost = chatCost(fakePromptTokens(upstream.body), words('Hello from gpt-test: On my key'))
    // Within the free allowance the platform fee is 0; the upstream cost is what the provider charges the customer.
    expect(result.usage).toMatchObject({ isByok: true, cost: 0, costDetails: expect.objectContaining({ upstreamInferenceCost: Number(cost.usd) }) })
  })
})

describe('@openrouter/sdk: audio', () => {
  // A gateway of its own, so that the audio models do not show in the chat catalogue above.
  let audio: TestGateway
  beforeAll(async () => {
    audio = await startGateway({
      exchangeRates: { EUR: '1', USD: '0.86' },
      providers: [openaiCompatible({ slug: 'fake', name: 'Fake', baseURL: fake.url, apiKey: 'sk-upstream', models: audioModels })],
    })
  })
  afterAll(() => audio?.close())

  it('tts.createSpeech streams the upstream audio, billed per character', async () => {
    const { sdk, user } = await customerWithSdk({}, audio)
    const input = 'Hello from the OpenRouter SDK'
    const stream = await sdk.tts.createSpeech({ speechRequest: { model: 'openai/tts-1', input, voice: 'echo', responseFormat: 'mp3' } })
    const bytes = Buffer.from(await new Response(stream).arrayBuffer())
    const upstream = fake.requests.at(-1)!
    expect(upstream.path).toBe('/v1/audio/speech')
    expect(upstream.body).toEqual({ model: 'tts-1', input, voice: 'echo', response_format: 'mp3' })
    expect(bytes.equals(fakeSpeechAudio({ input, voice: 'echo', response_format: 'mp3' }))).toBe(true)
    // tts-1: $15 per 1M characters.
    expect(await spent(user.org_id, audio)).toBe(usdToEur(BigInt([...input].length) * 15_000_000n).eur)
  })

  it('stt.createTranscription sends base64 audio and answers the text with usage and cost', async () => {
    const { sdk, user } = await customerWithSdk({}, audio)
    const wav = makeWav(0.25)
    const result = await sdk.stt.createTranscription({
      sttRequest: { model: 'openai/whisper-1', inputAudio: { data: wav.toString('base64'), format: 'wav' }, language: 'en' },
    })
    const upstream = fake.requests.at(-1)!
    expect(upstream.path).toBe('/v1/audio/transcriptions')
    expect(upstream.body.file.bytes.equals(wav)).toBe(true)
    expect(upstream.body.fields).toEqual({ model: 'whisper-1', response_format: 'json', language: 'en' })
    expect(result.text).toBe(`Heard ${wav.length} bytes from audio.wav (audio/wav) with whisper-1 in en`)
    // whisper-1 reports 1 second (0.25 s rounded up): $0.0001 a second.
    const cost = usdToEur(100_000_000n)
    expect(result.usage).toMatchObject({ seconds: 1, cost: Number(cost.usd) })
    expect(await spent(user.org_id, audio)).toBe(cost.eur)
  })

  it('stt.createTranscriptionMultipart uploads a file and answers the text, billed per second', async () => {
    const { sdk, user } = await customerWithSdk({}, audio)
    const wav = makeWav(0.25)
    const result = await sdk.stt.createTranscriptionMultipart({
      requestBody: { model: 'openai/whisper-1', file: { fileName: 'clip.wav', content: new Uint8Array(wav) }, language: 'en' },
    })
    const upstream = fake.requests.at(-1)!
    expect(upstream.body.file.bytes.equals(wav)).toBe(true)
    expect(upstream.body.fields).toEqual({ model: 'whisper-1', response_format: 'json', language: 'en' })
    expect(result.text).toBe(`Heard ${wav.length} bytes from audio.wav (audio/wav) with whisper-1 in en`)
    const cost = usdToEur(100_000_000n)
    expect(result.usage).toMatchObject({ seconds: 1, cost: Number(cost.usd) })
    expect(await spent(user.org_id, audio)).toBe(cost.eur)
  })
})

describe('@openrouter/sdk: embeddings', () => {
  // A gateway of its own, so that the embedding models do not show in the chat catalogue above: OpenAI's embedding
  // models (without their retirement dates) and a chat model, all on the fake OpenAI.
  const EMBEDDING_MODELS = embeddingModels.openai.map((m) => ({ ...m, expirationDate: undefined }))
  // In the catalogue's order: newest first, then by id.
  const EMBEDDING_IDS = ['openai/text-embedding-3-large', 'openai/text-embedding-3-small', 'openai/text-embedding-ada-002']
  let embed: TestGateway
  beforeAll(async () => {
    embed = await startGateway({
      exchangeRates: { EUR: '1', USD: '0.86' },
      providers: [
        openai({
          apiKey: 'sk-upstream',
          baseURL: fake.url,
          models: [{ id: 'openai/gpt-test', upstreamId: 'gpt-test', pricing: PRICING }, ...EMBEDDING_MODELS],
        }),
      ],
    })
  })
  afterAll(() => embed?.close())

  it('embeddings.generate answers the vectors, with usage.cost_details as OpenRouter’s (completions cost 0) and the exact cost', async () => {
    const { sdk, user } = await customerWithSdk({}, embed)
    const input = ['The quick brown fox', 'jumps over the lazy dog']
    const result = await sdk.embeddings.generate({ requestBody: { model: 'openai/text-embedding-3-small', input, dimensions: 8 } })
    if (typeof result === 'string') throw new Error('expected a JSON answer')
    const upstream = fake.requests.at(-1)!
    expect(upstream.path).toBe('/v1/embeddings')
    expect(upstream.body).toMatchObject({ model: 'text-embedding-3-small', input, dimensions: 8 })

    expect(result.object).toBe('list')
    expect(result.model).toBe('openai/text-embedding-3-small')
    expect(result.id).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(result.data).toEqual(input.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, 8) })))
    // The fake counts a token per 4 characters of each string: 5 + 6; text-embedding-3-small is $0.02 per M.
    const tokens = Math.ceil(input[0].length / 4) + Math.ceil(input[1].length / 4)
    const cost = usdToEur(BigInt(tokens) * units('0.00000002'))
    expect(result.usage).toEqual({
      promptTokens: tokens,
      totalTokens: tokens,
      cost: Number(cost.usd),
      isByok: false,
      costDetails: {
        upstreamInferenceCost: Number(cost.usd),
        upstreamInferencePromptCost: Number(cost.usd),
        upstreamInferenceCompletionsCost: 0,
      },
    })
    expect(await spent(user.org_id, embed)).toBe(cost.eur)
  })

  it('embeddings.listModels lists the models that serve embeddings in /models’ shape, and pages through them', async () => {
    const { sdk } = await customerWithSdk({}, embed)
    const ids = EMBEDDING_IDS
    expect([...ids].sort()).toEqual(EMBEDDING_MODELS.map((m) => m.id).sort())
    const page = await sdk.embeddings.listModels()
    expect(page.result.data.map((m) => m.id)).toEqual(ids)
    expect(page.result.totalCount).toBe(ids.length)
    expect(page.result.data[1]).toMatchObject({
      id: 'openai/text-embedding-3-small',
      name: 'OpenAI: Text Embedding 3 Small',
      pricing: expect.objectContaining({ prompt: '0.00000002', completion: '0' }),
      architecture: expect.objectContaining({ inputModalities: ['text'], outputModalities: ['embeddings'] }),
      supportedParameters: ['dimensions', 'encoding_format', 'user'],
    })
    // The chat model is not listed; /models lists both.
    expect((await sdk.models.list()).result.data.map((m) => m.id)).toEqual(['openai/gpt-test', ...ids])

    // Pages of one: the SDK follows them until a page is short.
    const seen: string[] = []
    for await (const each of await sdk.embeddings.listModels({ limit: 1 })) seen.push(...each.result.data.map((m) => m.id))
    expect(seen).toEqual(ids)
    const second = await sdk.embeddings.listModels({ offset: 1, limit: 1 })
    expect(second.result).toMatchObject({ data: [expect.objectContaining({ id: ids[1] })], totalCount: ids.length })
  })

  it('GET /embeddings/models is public like /models; a bad limit is a 400', async () => {
    const anonymous = await embed.request('/api/v1/embeddings/models')
    expect(anonymous.status).toBe(200)
    const body = await anonymous.json()
    expect(body).toMatchObject({ object: 'list', total_count: EMBEDDING_MODELS.length, links: { next: null } })
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(EMBEDDING_IDS)
    const bad = await embed.request('/api/v1/embeddings/models?limit=0')
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toMatchObject({ code: 400, param: 'limit' })
  })
})

describe('@openrouter/sdk: Responses API', () => {
  // A gateway of its own: OpenAI serves `openai/*` natively (its own Responses API, on the fake), an OpenAI-compatible
  // host without the Responses API serves `compat/*` translated through chat (docs/responses.md).
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startGateway({
      exchangeRates: { EUR: '1', USD: '0.86' },
      retry: { maxRetries: 0 },
      providers: [
        openai({
          apiKey: 'sk-upstream',
          baseURL: fake.url,
          models: [
            { id: 'openai/gpt-test', upstreamId: 'gpt-test', pricing: PRICING, maxCompletionTokens: 1000 },
            { id: 'openai/midstream', upstreamId: 'fail-midstream', pricing: PRICING, maxCompletionTokens: 1000 },
          ],
        }),
        openaiCompatible({
          slug: 'compat',
          name: 'Compat',
          baseURL: fake.url,
          apiKey: 'sk-upstream',
          models: [
            { id: 'compat/gpt-test', upstreamId: 'gpt-test', pricing: PRICING, maxCompletionTokens: 1000, supportedParameters: SUPPORTED },
            { id: 'compat/midstream', upstreamId: 'fail-midstream', pricing: PRICING, maxCompletionTokens: 1000 },
          ],
        }),
      ],
    })
  })
  afterAll(() => gw?.close())

  const since = (from: number, path: string) => fake.requests.slice(from).filter((r) => r.path === path)
  /** Every event of an SDK stream; fails on one the SDK's schemas did not type (parsed as UNKNOWN). */
  async function typedEvents(stream: unknown): Promise<any[]> {
    const events: any[] = []
    for await (const event of stream as AsyncIterable<any>) {
      expect(event.type, JSON.stringify(event.raw ?? event)).not.toBe('UNKNOWN')
      expect(event).not.toHaveProperty('isUnknown')
      events.push(event)
    }
    return events
  }
  /** The fields of a Response object OpenRouter always sends and the SDK requires (null when unset). */
  const expectResponseFields = (response: any, status: string) => {
    expect(response).toMatchObject({ object: 'response', status, frequencyPenalty: null, presencePenalty: null })
    expect(response.id).toMatch(/^resp_[0-9a-f]{44}$/)
    if (status === 'completed') expect(response.completedAt).toBeGreaterThanOrEqual(response.createdAt)
    else expect(response.completedAt).toBeNull()
    for (const item of response.output) expect(item).not.toHaveProperty('isUnknown')
  }
  /** The usage's cost details in OpenRouter's Responses names, exact (prompt and completion sides at PRICING). */
  const costDetailsOf = (input: number, output: number) => ({
    upstreamInferenceCost: Number(chatCost(input, output).usd),
    upstreamInferenceInputCost: Number(chatCost(input, 0).usd),
    upstreamInferenceOutputCost: Number(chatCost(0, output).usd),
  })

  it('responses.send, translated: the whole Response has completed_at, the penalties and the cost details; the org pays exactly', async () => {
    const { sdk, user } = await customerWithSdk({}, gw)
    const sent = fake.requests.length
    const result = await sdk.responses.send({ responsesRequest: { model: 'compat/gpt-test', input: 'What is the capital of France?', maxOutputTokens: 100 } })
    if (!('output' in result)) throw new Error('expected a whole Response')
    const [upstream] = since(sent, '/v1/chat/completions')
    expect(upstream.body).toMatchObject({ model: 'gpt-test', max_tokens: 100 })

    const answer = 'Hello from gpt-test: What is the capital of France?'
    expectResponseFields(result, 'completed')
    // The SDK always sends store: false (OpenRouter stores no response) and service_tier auto.
    expect(upstream.body).not.toHaveProperty('store')
    expect(result).toMatchObject({ model: 'compat/gpt-test', error: null, incompleteDetails: null, store: false, maxOutputTokens: 100 })
    expect(result.output).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [expect.objectContaining({ type: 'output_text', text: answer })],
      }),
    ])
    const input = fakePromptTokens(upstream.body)
    const output = words(answer)
    const cost = chatCost(input, output)
    expect(result.usage).toMatchObject({
      inputTokens: input,
      inputTokensDetails: { cachedTokens: 0 },
      outputTokens: output,
      outputTokensDetails: { reasoningTokens: 0 },
      totalTokens: input + output,
      cost: Number(cost.usd),
      isByok: false,
      costDetails: costDetailsOf(input, output),
    })
    expect(await spent(user.org_id, gw)).toBe(cost.eur)
  })

  it('responses.send with stream: true, translated: every event typed, response.created / in_progress / completed with their Response', async () => {
    const { sdk, user } = await customerWithSdk({}, gw)
    const sent = fake.requests.length
    const text = 'Tell me a story'
    const events = await typedEvents(await sdk.responses.send({ responsesRequest: { model: 'compat/gpt-test', input: text, stream: true } }))
    const answer = `Hello from gpt-test: ${text}`
    const types = events.map((e) => e.type)
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      // One delta a word, as the fake streams it.
      ...Array(words(answer)).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(events.map((e) => e.sequenceNumber)).toEqual(events.map((_, i) => i))
    expect(
      events
        .filter((e) => e.type === 'response.output_text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe(answer)
    for (const event of events.slice(0, 2)) {
      expectResponseFields(event.response, 'in_progress')
      expect(event.response.usage).toBeNull()
    }
    const completed = events.at(-1).response
    expectResponseFields(completed, 'completed')
    expect(completed.id).toBe(events[0].response.id)
    expect(completed.output[0]).toMatchObject({ type: 'message', content: [expect.objectContaining({ type: 'output_text', text: answer })] })
    const [upstream] = since(sent, '/v1/chat/completions')
    const input = fakePromptTokens(upstream.body)
    const cost = chatCost(input, words(answer))
    expect(completed.usage).toMatchObject({
      inputTokens: input,
      outputTokens: words(answer),
      cost: Number(cost.usd),
      costDetails: costDetailsOf(input, words(answer)),
    })
    expect(await spent(user.org_id, gw)).toBe(cost.eur)
  })

  it('translated, with tools: the function call is typed, whole and streamed', async () => {
    const { sdk } = await customerWithSdk({}, gw)
    const tool = { type: 'function' as const, name: 'get_weather', description: 'The current weather in a city', parameters: weatherTool.function.parameters }
    const whole = await sdk.responses.send({ responsesRequest: { model: 'compat/gpt-test', input: 'Paris', tools: [tool] } })
    if (!('output' in whole)) throw new Error('expected a whole Response')
    expectResponseFields(whole, 'completed')
    expect(whole.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' })])

    const events = await typedEvents(await sdk.responses.send({ responsesRequest: { model: 'compat/gpt-test', input: 'Paris', tools: [tool], stream: true } }))
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      ...events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.type),
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' })
    expect(events.at(-1).response.output).toEqual([
      expect.objectContaining({ type: 'function_call', callId: expect.stringMatching(/^call_fake/), name: 'get_weather', arguments: '{"city":"Paris"}' }),
    ])
  })

  it('translated, cut by max_output_tokens: response.incomplete is typed, completed_at null', async () => {
    const { sdk } = await customerWithSdk({}, gw)
    const events = await typedEvents(
      await sdk.responses.send({ responsesRequest: { model: 'compat/gpt-test', input: 'Tell me a long story', maxOutputTokens: 2, stream: true } }),
    )
    const last = events.at(-1)
    expect(last.type).toBe('response.incomplete')
    expectResponseFields(last.response, 'incomplete')
    expect(last.response.incompleteDetails).toEqual({ reason: 'max_output_tokens' })
    expect(last.response.usage).toMatchObject({
      outputTokens: 2,
      costDetails: expect.objectContaining({ upstreamInferenceOutputCost: Number(chatCost(0, 2).usd) }),
    })
  })

  it('translated, a stream that fails after it began: response.failed is typed, with its error', async () => {
    const { sdk } = await customerWithSdk({}, gw)
    const events = await typedEvents(await sdk.responses.send({ responsesRequest: { model: 'compat/midstream', input: 'Tell me a story', stream: true } }))
    const last = events.at(-1)
    expect(last.type).toBe('response.failed')
    expectResponseFields(last.response, 'failed')
    expect(last.response.error).toMatchObject({ code: 'server_error', message: expect.any(String) })
  })

  it('responses.send, native (OpenAI’s Responses API): the whole Response and every streamed event pass the SDK’s validation', async () => {
    const { sdk, user } = await customerWithSdk({}, gw)
    const sent = fake.requests.length
    const text = 'What is the capital of France?'
    const whole = await sdk.responses.send({ responsesRequest: { model: 'openai/gpt-test', input: text } })
    if (!('output' in whole)) throw new Error('expected a whole Response')
    expect(since(sent, '/v1/responses')).toHaveLength(1)
    const answer = `Hello from gpt-test: ${text}`
    expectResponseFields(whole, 'completed')
    expect(whole).toMatchObject({ model: 'openai/gpt-test', store: false })
    expect(whole.output).toEqual([expect.objectContaining({ type: 'message', content: [expect.objectContaining({ type: 'output_text', text: answer })] })])
    // The fake's usage: 1 + the input's words in, the answer's words out.
    const input = 1 + words(text)
    const output = words(answer)
    expect(whole.usage).toMatchObject({
      inputTokens: input,
      outputTokens: output,
      cost: Number(chatCost(input, output).usd),
      costDetails: costDetailsOf(input, output),
    })

    const events = await typedEvents(await sdk.responses.send({ responsesRequest: { model: 'openai/gpt-test', input: text, stream: true } }))
    expect(since(sent, '/v1/responses')).toHaveLength(2)
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['response.created', 'response.in_progress'])
    expect(events.at(-1).type).toBe('response.completed')
    for (const event of events.slice(0, 2)) expectResponseFields(event.response, 'in_progress')
    const completed = events.at(-1).response
    expectResponseFields(completed, 'completed')
    expect(completed.usage).toMatchObject({ inputTokens: input, outputTokens: output, costDetails: costDetailsOf(input, output) })
    expect(await spent(user.org_id, gw)).toBe(decimalText(2n * units(chatCost(input, output).eur)))
  })

  it('native, a stream that fails after it began: response.failed is typed, with its error', async () => {
    const { sdk } = await customerWithSdk({}, gw)
    const sent = fake.requests.length
    const events = await typedEvents(await sdk.responses.send({ responsesRequest: { model: 'openai/midstream', input: 'Tell me a story', stream: true } }))
    expect(since(sent, '/v1/responses')).toHaveLength(1)
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['response.created', 'response.in_progress'])
    const last = events.at(-1)
    expect(last.type).toBe('response.failed')
    expectResponseFields(last.response, 'failed')
    expect(last.response.error).toMatchObject({ code: 'server_error', message: expect.any(String) })
  })

  it('callModel (the SDK’s agent loop over the streamed Responses API) reads the text and the whole Response', async () => {
    const { sdk } = await customerWithSdk({}, gw)
    for (const model of ['compat/gpt-test', 'openai/gpt-test']) {
      const result = sdk.callModel({ model, input: 'Hello there' })
      expect(await result.getText()).toBe('Hello from gpt-test: Hello there')
      const response = await result.getResponse()
      expectResponseFields(response, 'completed')
      expect(response.model).toBe(model)
    }
  })
})
