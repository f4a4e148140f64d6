import { OpenRouter } from '@openrouter/sdk'
import type { ChatResult } from '@openrouter/sdk/models'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo, openaiCompatible, type ProviderModel } from '../../src/index'
import { appIdOf } from '../../src/http/attribution'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const model = (id: string, upstreamId: string): ProviderModel => ({ id, upstreamId, pricing, maxCompletionTokens: 1000 })
const json = { 'content-type': 'application/json' }
/** UTF-8 text as a header value (fetch sends each character of a header value as one byte). */
const utf8Header = (text: string) => Buffer.from(text, 'utf8').toString('latin1')
/** The decimal text of a JSON number field in a body, exactly as sent (the first occurrence). */
const rawNumber = (text: string, name: string) => new RegExp(`"${name}":(-?[0-9.]+)`).exec(text)?.[1]

const attribution = {
  'http-referer': 'https://app.example/chat?x=1',
  'x-title': 'Old Title',
  'x-openrouter-title': utf8Header('Über\tApp '),
  'x-openrouter-categories': 'cli-agent, Cloud-Agent,not a category,cli-agent',
  'user-agent': 'test-client/1.0',
}

describe('GET /api/v1/generation', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>
  let other: Awaited<ReturnType<typeof createCustomer>>

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 100 })
    t = await startGateway({
      keepAliveMs: 50,
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up Provider',
          baseURL: upstream.url,
          apiKey: 'sk-up',
          models: [model('fake/gpt-test', 'gpt-test'), model('fake/slow', 'slow')],
        }),
        demo({ audio: true }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '10' })
    other = await createCustomer(t.gateway, { credits: '10' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...customer.auth, ...json, ...headers }, body: JSON.stringify(body), signal })
  const generation = (id: string, who = customer) => t.request(`/api/v1/generation?id=${encodeURIComponent(id)}`, { headers: who.auth })
  const recordOf = async (id: string) => (await t.gateway.context.usage.list(customer.user.org_id)).find((r) => r.id === id)!

  it('reports a whole completion: model, provider, tokens, exact cost, timing, app attribution and grouping fields', async () => {
    const res = await chat(
      {
        model: 'fake/gpt-test',
        messages: [{ role: 'user', content: 'hello there' }],
        session_id: 'session-42',
        user: 'end-user-7',
        metadata: { feature: 'search', plan: 'pro' },
        trace: { trace_id: 'trace-1', span_name: 'answer', custom: { n: 1 } },
      },
      attribution,
    )
    expect(res.status).toBe(200)
    const text = await res.text()
    const completion = JSON.parse(text)
    const id = res.headers.get('x-generation-id')!
    expect(completion.id).toBe(id)

    const stats = await generation(id)
    expect(stats.status).toBe(200)
    const statsText = await stats.text()
    const { data } = JSON.parse(statsText)
    const record = await recordOf(id)
    expect(data).toMatchObject({
      id,
      model: 'fake/gpt-test',
      provider_name: 'Up Provider',
      provider: 'up',
      upstream_id: record.upstream_id,
      created_at: record.created_at,
      streamed: false,
      cancelled: false,
      status: 'success',
      is_byok: false,
      finish_reason: 'stop',
      native_finish_reason: 'stop',
      tokens_prompt: completion.usage.prompt_tokens,
      tokens_completion: completion.usage.completion_tokens,
      native_tokens_prompt: completion.usage.prompt_tokens,
      native_tokens_completion: completion.usage.completion_tokens,
      native_tokens_reasoning: 0,
      native_tokens_cached: 0,
      api_type: 'completions',
      cost_currency: 'USD',
      // App attribution: the UTF-8 title read back, spaces tidied, X-OpenRouter-Title before X-Title.
      http_referer: 'https://app.example/chat?x=1',
      origin: 'https://app.example/chat?x=1',
      app_id: appIdOf('https://app.example'),
      app_title: 'Über App',
      app_categories: ['cli-agent', 'cloud-agent'],
      user_agent: 'test-client/1.0',
      request_id: res.headers.get('x-request-id'),
      session_id: 'session-42',
      external_user: 'end-user-7',
      metadata: { feature: 'search', plan: 'pro' },
      trace: { trace_id: 'trace-1', span_name: 'answer', custom: { n: 1 } },
      moderation_latency: null,
      cache_discount: null,
      data_region: 'global',
    })
    // Money exactly as the completion's usage said it (the decimal text of the JSON numbers).
    expect(rawNumber(statsText, 'total_cost')).toBe(rawNumber(text, 'cost'))
    expect(rawNumber(statsText, 'total_cost')).toBe(record.cost)
    expect(rawNumber(statsText, 'usage')).toBe(rawNumber(text, 'cost_eur'))
    expect(rawNumber(statsText, 'cost_eur')).toBe(record.cost_eur)
    expect(rawNumber(statsText, 'upstream_inference_cost')).toBe(record.upstream_inference_cost)
    expect(data.latency).toBe(data.generation_time) // a whole answer: the first byte is the answer
    expect(data.generation_time).toBe(record.latency_ms)
    // Every field of OpenRouter's generation shape is there (null where the gateway has no value).
    for (const field of [
      'num_media_prompt',
      'num_media_completion',
      'num_search_results',
      'num_fetches',
      'preset_id',
      'provider_responses',
      'router',
      'service_tier',
      'web_search_engine',
      'workspace_id',
      'native_tokens_completion_images',
      'response_cache_source_id',
    ]) {
      expect(data).toHaveProperty(field, null)
    }
  })

  it('reports a stream: streamed, not cancelled, time to first chunk within the generation time', async () => {
    const res = await chat(
      { model: 'fake/slow', stream: true, session_id: 'session-42', messages: [{ role: 'user', content: 'stream me please' }] },
      { 'http-referer': 'not a url', 'x-title': 'Plain Title' },
    )
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    const usage = events[events.length - 2].usage
    const id = res.headers.get('x-generation-id')!
    const body = await (await generation(id)).json()
    expect(body.data).toMatchObject({
      id,
      model: 'fake/slow',
      provider_name: 'Up Provider',
      streamed: true,
      cancelled: false,
      finish_reason: 'stop',
      native_finish_reason: 'stop',
      tokens_prompt: usage.prompt_tokens,
      tokens_completion: usage.completion_tokens,
      total_cost: usage.cost,
      usage: usage.cost_eur,
      http_referer: 'not a url',
      app_id: appIdOf('not a url'),
      app_title: 'Plain Title',
      app_categories: [],
      session_id: 'session-42',
      metadata: null,
      trace: null,
    })
    // The slow model waits 100 ms before each chunk: the first came well before the end.
    expect(body.data.latency).toBeGreaterThanOrEqual(90)
    expect(body.data.generation_time).toBeGreaterThan(body.data.latency)
  })

  it('reports a stream the client left as cancelled', async () => {
    const abort = new AbortController()
    const res = await chat({ model: 'fake/slow', stream: true, messages: [{ role: 'user', content: 'one two three four five six seven' }] }, {}, abort.signal)
    const id = res.headers.get('x-generation-id')!
    const reader = res.body!.getReader()
    let seen = ''
    while (!seen.includes('"role":"assistant"')) seen += new TextDecoder().decode((await reader.read()).value)
    abort.abort()
    let answer: Response | undefined
    for (let i = 0; i < 100 && answer?.status !== 200; i++) {
      if (i) await new Promise((resolve) => setTimeout(resolve, 20))
      answer = await generation(id)
    }
    const { data } = await answer!.json()
    expect(data).toMatchObject({ id, streamed: true, cancelled: true, status: 'cancelled' })
    expect(data.finish_reason).toBeNull()
  })

  it('reports speech and transcription with their api_type and attribution', async () => {
    const speech = await t.request('/api/v1/audio/speech', {
      method: 'POST',
      headers: { ...customer.auth, ...json, 'x-openrouter-title': 'Voice App' },
      body: JSON.stringify({ model: 'demo/speech', input: 'hello', response_format: 'wav', session_id: 'voice-1' }),
    })
    expect(speech.status).toBe(200)
    await speech.arrayBuffer()
    const spoken = await (await generation(speech.headers.get('x-generation-id')!)).json()
    expect(spoken.data).toMatchObject({
      model: 'demo/speech',
      api_type: 'tts',
      streamed: true,
      cancelled: false,
      app_title: 'Voice App',
      session_id: 'voice-1',
      provider_name: 'Demo (offline)',
    })

    const clip = await t.request('/api/v1/audio/speech', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'demo/speech', input: 'hi', response_format: 'wav' }),
    })
    const wav = Buffer.from(await clip.arrayBuffer()).toString('base64')
    const transcription = await t.request('/api/v1/audio/transcriptions', {
      method: 'POST',
      headers: { ...customer.auth, ...json, 'http-referer': 'https://voice.example/' },
      body: JSON.stringify({ model: 'demo/transcribe', input_audio: { data: wav, format: 'wav' }, metadata: { clip: '1' } }),
    })
    expect(transcription.status).toBe(200)
    const heard = await transcription.json()
    const stats = await (await generation(transcription.headers.get('x-generation-id')!)).json()
    expect(stats.data).toMatchObject({
      model: 'demo/transcribe',
      api_type: 'stt',
      streamed: false,
      usage: heard.usage.cost_eur,
      http_referer: 'https://voice.example/',
      app_id: appIdOf('https://voice.example'),
      metadata: { clip: '1' },
    })
  })

  it("parses with OpenRouter's own client, whose app attribution and session are recorded", async () => {
    const client = new OpenRouter({
      apiKey: customer.key,
      serverURL: `${t.url}/api/v1`,
      httpReferer: 'https://sdk.example/app',
      appTitle: 'SDK App',
      appCategories: 'cli-agent,programming',
    })
    const completion = (await client.chat.send({
      chatRequest: { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'through the sdk' }], sessionId: 'sdk-session', stream: false },
    })) as ChatResult
    const id = completion.id
    const record = (await recordOf(id))!
    const { data } = await client.generations.getGeneration({ id })
    expect(data).toMatchObject({
      id,
      model: 'fake/gpt-test',
      providerName: 'Up Provider',
      streamed: false,
      cancelled: false,
      isByok: false,
      totalCost: Number(record.cost),
      usage: Number(record.cost_eur),
      tokensPrompt: completion.usage!.promptTokens,
      tokensCompletion: completion.usage!.completionTokens,
      httpReferer: 'https://sdk.example/app',
      appId: appIdOf('https://sdk.example'),
      apiType: 'completions',
      finishReason: 'stop',
      dataRegion: 'global',
      sessionId: 'sdk-session',
      requestId: record.request_id,
    })
    expect(data.userAgent).toContain('@openrouter/sdk')
    // The client sends its app title and categories with every call (the generation shape has no field for them).
    expect(record).toMatchObject({ app_title: 'SDK App', app_categories: ['cli-agent', 'programming'], session_id: 'sdk-session' })
    await expect(client.generations.getGeneration({ id: 'gen-1764000000-BBBBBBBBBBBBBBBBBBBB' })).rejects.toMatchObject({ statusCode: 404 })
    const credits = await client.credits.getCredits()
    expect(credits.data.totalCredits).toBe(10)
  })

  it('answers 404 not_found for an unknown id and for another org’s, alike; 400 for a malformed id', async () => {
    const res = await chat({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'mine' }] })
    const id = res.headers.get('x-generation-id')!
    await res.json()
    expect((await generation(id)).status).toBe(200)

    const foreign = await generation(id, other)
    const unknown = await generation('gen-1764000000-AAAAAAAAAAAAAAAAAAAA', other)
    for (const answer of [foreign, unknown]) {
      expect(answer.status).toBe(404)
      const { error } = await answer.json()
      expect(error).toMatchObject({ code: 404, type: 'not_found' })
      expect(error.metadata).toBeUndefined()
    }

    const malformed = await generation('gen:../x')
    expect(malformed.status).toBe(400)
    expect((await malformed.json()).error).toMatchObject({ type: 'invalid_request', param: 'id' })
    expect((await t.request('/api/v1/generation', { headers: customer.auth })).status).toBe(400)
    expect((await t.request(`/api/v1/generation?id=${id}`)).status).toBe(401)
  })

  it('leaves out request fields beyond their bounds (chat refuses them) and cuts header text to its bound', async () => {
    const tooLong = {
      session_id: 'x'.repeat(129),
      metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
      trace: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])),
    }
    const refused = await chat({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'bounds' }], session_id: tooLong.session_id })
    expect(refused.status).toBe(400)
    await refused.json()
    const speech = await t.request('/api/v1/audio/speech', {
      method: 'POST',
      headers: {
        ...customer.auth,
        ...json,
        'x-title': 'T'.repeat(300),
        'x-session-id': 'header-session',
        'x-openrouter-categories': Array.from({ length: 12 }, (_, i) => `c${i}`).join(','),
      },
      body: JSON.stringify({ model: 'demo/speech', input: 'bounds', response_format: 'wav', ...tooLong }),
    })
    expect(speech.status).toBe(200)
    await speech.arrayBuffer()
    const { data } = await (await generation(speech.headers.get('x-generation-id')!)).json()
    expect(data.session_id).toBe('header-session') // the body's was too long: the header's is used
    expect(data.metadata).toBeNull()
    expect(data.trace).toBeNull()
    expect(data.app_title).toBe('T'.repeat(256))
    expect(data.app_categories).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`))
  })
})

describe('GET /api/v1/credits', () => {
  let t: TestGateway
  beforeAll(async () => {
    t = await startGateway({ providers: [demo()] })
  })
  afterAll(() => t?.close())

  it('equals the admin credits exactly, in OpenRouter’s shape (numbers), with the balance beside', async () => {
    const customer = await createCustomer(t.gateway, { credits: '12.345678901234' })
    const chat = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'spend a little' }] }),
    })
    expect(chat.status).toBe(200)
    await chat.json()
    const res = await t.request('/api/v1/credits', { headers: customer.auth })
    expect(res.status).toBe(200)
    const text = await res.text()
    const admin = await t.gateway.admin.getCredits(customer.user.org_id)
    expect(rawNumber(text, 'total_credits')).toBe(admin.total_credits)
    expect(rawNumber(text, 'total_usage')).toBe(admin.total_usage)
    expect(rawNumber(text, 'balance')).toBe(admin.balance)
    expect(admin.total_credits).toBe('12.345678901234')
    expect(admin.total_usage).not.toBe('0')
    const { data } = JSON.parse(text)
    expect(typeof data.total_credits).toBe('number')
    expect(data.currency).toBe('EUR')
    const me = await (await t.request('/api/v1/me', { headers: customer.auth })).json()
    expect(me.credits).toEqual(admin)
    expect((await t.request('/api/v1/credits')).status).toBe(401)
  })
})
