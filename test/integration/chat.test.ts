import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, readSse, roundUnits } from '../helpers/sse'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const model = (id: string, upstreamId: string, extra: Partial<ProviderModel> = {}): ProviderModel => ({ id, upstreamId, pricing, ...extra })
const json = { 'content-type': 'application/json' }

/** Expected cost of reported usage at the test pricing: [USD, EUR] as decimal strings. */
const expectedCost = (prompt: number, completion: number): [string, string] => {
  const usd = BigInt(prompt) * 1_000_000n + BigInt(completion) * 2_000_000n
  return [decimalText(usd), decimalText(roundUnits(usd * 86n, 2))]
}

describe('POST /api/v1/chat/completions', () => {
  let alpha: FakeOpenAI
  let beta: FakeOpenAI
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>

  const post = (body: unknown, headers: Record<string, string> = customer.auth) =>
    t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...headers, ...json }, body: JSON.stringify(body) })
  const ask = (modelId: string, text = 'hello gateway', extra: Record<string, unknown> = {}) =>
    post({ model: modelId, messages: [{ role: 'user', content: text }], ...extra })

  beforeAll(async () => {
    alpha = await startFakeOpenAI({ apiKey: 'sk-alpha', slowMs: 150 })
    beta = await startFakeOpenAI({ apiKey: 'sk-beta' })
    t = await startGateway({
      keepAliveMs: 40,
      providers: [
        openaiCompatible({
          slug: 'alpha',
          name: 'Alpha',
          baseURL: alpha.url,
          apiKey: 'sk-alpha',
          models: [
            model('fake/gpt-test', 'gpt-test'),
            model('fake/cached', 'gpt-cached', { pricing: { ...pricing, input_cache_read: '0.0000005' } }),
            ...['fail-400', 'fail-401', 'fail-429', 'fail-500', 'fail-503', 'fail-malformed', 'fail-reset', 'fail-midstream', 'slow'].map((id) =>
              model(`fake/${id}`, id),
            ),
            model('shared/model', 'fail-500'),
            model('shared/limited', 'fail-429'),
          ],
        }),
        openaiCompatible({
          slug: 'beta',
          name: 'Beta',
          baseURL: beta.url,
          apiKey: 'sk-beta',
          models: [model('shared/model', 'gpt-test'), model('shared/limited', 'gpt-test'), model('beta/only', 'gpt-test')],
        }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '10' })
  })
  afterAll(async () => {
    await t.close()
    await alpha.close()
    await beta.close()
  })

  const credits = () => t.gateway.admin.getCredits(customer.user.org_id)

  it('answers a whole completion in the shape of docs/chat.md, billed exactly once', async () => {
    const before = await credits()
    const sent = alpha.requests.length
    const res = await ask('fake/gpt-test', 'what is up')
    expect(res.status).toBe(200)
    const generationId = res.headers.get('x-generation-id')
    expect(generationId).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(res.headers.get('x-request-id')).toMatch(/^req_/)
    const body = await res.json()
    expect(body).toMatchObject({
      id: generationId,
      provider: 'Alpha',
      object: 'chat.completion',
      model: 'fake/gpt-test',
      service_tier: 'default',
      system_fingerprint: 'fp_fake123',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello from gpt-test: what is up', refusal: null, reasoning: null, annotations: [] },
          finish_reason: 'stop',
          native_finish_reason: 'stop',
          logprobs: null,
        },
      ],
    })
    expect(typeof body.created).toBe('number')
    const { prompt_tokens: p, completion_tokens: c } = body.usage
    expect(c).toBe(6)
    const [usd, eur] = expectedCost(p, c)
    expect(body.usage).toMatchObject({
      total_tokens: p + c,
      cost_currency: 'USD',
      is_byok: false,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    })
    expect(String(body.usage.cost)).toBe(usd)
    expect(String(body.usage.cost_eur)).toBe(eur)
    expect(body.usage.cost_details).toEqual({
      upstream_inference_cost: Number(usd),
      upstream_inference_prompt_cost: p / 1e6,
      upstream_inference_completions_cost: (c * 2) / 1e6,
    })

    // What went upstream: the provider's model id, the service key, no gateway-only fields.
    expect(alpha.requests.length).toBe(sent + 1)
    const upstream = alpha.requests.at(-1)!
    expect(upstream.path).toBe('/v1/chat/completions')
    expect(upstream.headers.authorization).toBe('Bearer sk-alpha')
    expect(upstream.body).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: 'what is up' }] })

    const after = await credits()
    expect(decimalText(BigInt(Math.round(0)) + (toUnits(before.balance) - toUnits(after.balance)))).toBe(eur)
    const records = await t.gateway.context.usage.list(customer.user.org_id)
    expect(records.find((r) => r.id === generationId)).toMatchObject({
      model: 'fake/gpt-test',
      provider: 'alpha',
      status: 'success',
      stream: false,
      cost: usd,
      cost_eur: eur,
      prompt_tokens: p,
      completion_tokens: c,
      key_hash: customer.record.hash,
      usage_estimated: false,
      is_byok: false,
    })
  })

  it('streams OpenAI chunks, then usage with cost once in a last chunk with no choices, then [DONE]', async () => {
    const before = await credits()
    const res = await ask('fake/gpt-test', 'stream this please', { stream: true })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    const { events } = await readSse(res)
    expect(events.at(-1)).toBe('[DONE]')
    const chunks = events.slice(0, -1)
    const generationId = res.headers.get('x-generation-id')
    for (const chunk of chunks) expect(chunk).toMatchObject({ id: generationId, object: 'chat.completion.chunk', model: 'fake/gpt-test', provider: 'Alpha' })
    const text = chunks.flatMap((chunk: any) => chunk.choices.map((choice: any) => choice.delta?.content ?? '')).join('')
    expect(text).toBe('Hello from gpt-test: stream this please')
    const withUsage = chunks.filter((chunk: any) => chunk.usage)
    expect(withUsage).toHaveLength(1)
    expect(withUsage[0]).toBe(chunks.at(-1))
    expect(withUsage[0].choices).toEqual([])
    const finish = chunks.find((chunk: any) => chunk.choices[0]?.finish_reason)
    expect(finish.choices[0]).toMatchObject({ finish_reason: 'stop', native_finish_reason: 'stop' })
    const { prompt_tokens: p, completion_tokens: c, cost, cost_eur } = withUsage[0].usage
    const [usd, eur] = expectedCost(p, c)
    expect([String(cost), String(cost_eur)]).toEqual([usd, eur])
    // The gateway asked for usage upstream although the client did not.
    expect(alpha.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true })
    const after = await credits()
    expect(decimalText(toUnits(before.balance) - toUnits(after.balance))).toBe(eur)
  })

  it('passes tool calls through, whole and streamed with argument deltas', async () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
    ]
    const whole = await (await ask('fake/gpt-test', 'Paris', { tools })).json()
    expect(whole.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { content: null, tool_calls: [{ index: 0, type: 'function', function: { name: 'get_weather' } }] },
    })
    expect(JSON.parse(whole.choices[0].message.tool_calls[0].function.arguments)).toEqual({ city: 'Paris' })

    const { events } = await readSse(await ask('fake/gpt-test', 'Lyon', { tools, stream: true }))
    let args = ''
    for (const chunk of events.slice(0, -1)) for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) args += call.function?.arguments ?? ''
    expect(JSON.parse(args)).toEqual({ city: 'Lyon' })
    expect(events.slice(0, -1).some((chunk: any) => chunk.choices[0]?.finish_reason === 'tool_calls')).toBe(true)
  })

  it('passes images and parallel tool calls through unchanged', async () => {
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }
    await post({ model: 'fake/gpt-test', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, image] }] })
    expect(alpha.requests.at(-1)!.body.messages[0].content).toEqual([{ type: 'text', text: 'what is this' }, image])
    const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { city: { type: 'string' } } } } })
    const body = await (await ask('fake/gpt-test', 'Oslo', { tools: [tool('weather'), tool('time')] })).json()
    expect(body.choices[0].message.tool_calls.map((c: any) => [c.index, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      [0, 'weather', { city: 'Oslo' }],
      [1, 'time', { city: 'Oslo' }],
    ])
  })

  it('passes logprobs through', async () => {
    const body = await (await ask('fake/gpt-test', 'two words', { logprobs: true, top_logprobs: 1 })).json()
    expect(body.choices[0].logprobs.content.map((e: any) => e.token)).toEqual(['Hello', 'from', 'gpt-test:', 'two', 'words'])
    expect(body.choices[0].logprobs.content[0]).toEqual({
      token: 'Hello',
      logprob: -0.25,
      bytes: [72, 101, 108, 108, 111],
      top_logprobs: [{ token: 'Hello', logprob: -0.25, bytes: [72, 101, 108, 108, 111] }],
    })
  })

  it('bills cached prompt tokens at the cache price', async () => {
    const body = await (await ask('fake/cached', 'cache me')).json()
    const {
      prompt_tokens: p,
      completion_tokens: c,
      prompt_tokens_details: { cached_tokens: cached },
    } = body.usage
    expect(cached).toBe(Math.floor(p / 2))
    const usd = BigInt(p - cached) * 1_000_000n + BigInt(cached) * 500_000n + BigInt(c) * 2_000_000n
    expect(String(body.usage.cost)).toBe(decimalText(usd))
  })

  it('maps upstream errors to the envelope with provider_name and error_type', async () => {
    const cases: [string, number, string, string][] = [
      ['fake/fail-400', 400, 'invalid_request', 'invalid_request'],
      ['fake/fail-401', 502, 'upstream_error', 'authentication'],
      ['fake/fail-429', 429, 'rate_limited', 'rate_limit_exceeded'],
      ['fake/fail-500', 502, 'upstream_error', 'provider_unavailable'],
      ['fake/fail-503', 502, 'upstream_error', 'provider_overloaded'],
      ['fake/fail-malformed', 502, 'upstream_error', 'malformed_response'],
      ['fake/fail-reset', 502, 'upstream_error', 'provider_unavailable'],
    ]
    const before = await credits()
    for (const [id, status, type, errorType] of cases) {
      const res = await ask(id)
      expect(res.status, id).toBe(status)
      const body = await res.json()
      expect(body.error, id).toMatchObject({ code: status, type, metadata: { provider_name: 'Alpha', error_type: errorType } })
      expect(JSON.stringify(body), id).not.toContain('sk-alpha')
      if (id === 'fake/fail-429') expect(res.headers.get('retry-after')).toBe('2')
      if (id === 'fake/fail-400') expect(body.error.message).toContain("Invalid value for 'temperature'")
    }
    expect(await credits()).toEqual(before)
  })

  it('falls back to the next provider on a retryable failure, and not when fallbacks are off', async () => {
    const sentToBeta = beta.requests.length
    const res = await ask('shared/model', 'fall back')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.provider).toBe('Beta')
    expect(body.choices[0].message.content).toBe('Hello from gpt-test: fall back')
    expect(beta.requests.length).toBe(sentToBeta + 1)

    const streamed = await readSse(await ask('shared/limited', 'fall back streamed', { stream: true }))
    expect(streamed.events[0].provider).toBe('Beta')

    const strict = await ask('shared/model', 'no fallback', { provider: { order: ['alpha'], allow_fallbacks: false } })
    expect(strict.status).toBe(502)
    const ordered = await (await ask('shared/model', 'beta first', { provider: { order: ['beta'] } })).json()
    expect(ordered.provider).toBe('Beta')
    const excluded = await ask('beta/only', 'x', { provider: { ignore: ['beta'] } })
    expect(excluded.status).toBe(404)
    expect((await excluded.json()).error.type).toBe('not_found')
  })

  it('falls back across the models list', async () => {
    const body = await (await post({ model: 'fake/fail-503', models: ['beta/only'], messages: [{ role: 'user', content: 'next model' }] })).json()
    expect(body.model).toBe('beta/only')
    expect(body.provider).toBe('Beta')
  })

  it('ends a stream that fails midway with an error chunk, then usage, then [DONE], and bills what was generated', async () => {
    const before = await credits()
    const res = await ask('fake/fail-midstream', 'one two three four five', { stream: true })
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    expect(events.at(-1)).toBe('[DONE]')
    const errorChunk = events.find((e: any) => e.error)
    expect(errorChunk.error).toMatchObject({ code: 502, metadata: { provider_name: 'Alpha', error_type: 'provider_unavailable' } })
    expect(errorChunk.choices[0]).toMatchObject({ finish_reason: 'error' })
    const usageChunk = events.at(-2)
    expect(usageChunk.choices).toEqual([])
    expect(usageChunk.usage.estimated).toBe(true)
    const after = await credits()
    expect(decimalText(toUnits(before.balance) - toUnits(after.balance))).toBe(String(usageChunk.usage.cost_eur))
    const record = (await t.gateway.context.usage.list(customer.user.org_id)).find((r) => r.id === errorChunk.id)
    expect(record).toMatchObject({ status: 'error', usage_estimated: true })
  })

  it('sends keep-alive comments while waiting for a slow provider', async () => {
    const { comments, events } = await readSse(await ask('fake/slow', 'a b', { stream: true }))
    expect(comments).toContain(': service processing')
    expect(events.at(-1)).toBe('[DONE]')
  })

  it('answers 408 at the request deadline: whole as an error, a stream waiting with keep-alives as a 408 error chunk, then [DONE]', async () => {
    const late = await startFakeOpenAI({ apiKey: 'sk-late' })
    late.latencyMs = 3000 // the first byte would come long after the deadline
    const g = await startGateway({
      keepAliveMs: 40,
      requestTimeoutMs: 300,
      upstreamTimeoutMs: 10_000,
      providers: [openaiCompatible({ slug: 'late', name: 'Late', baseURL: late.url, apiKey: 'sk-late', models: [model('late/model', 'gpt-test')] })],
    })
    try {
      const c = await createCustomer(g.gateway, { credits: '1' })
      const wholeStarted = performance.now()
      const whole = await g.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...c.auth, ...json },
        body: JSON.stringify({ model: 'late/model', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(whole.status).toBe(408)
      expect((await whole.json()).error).toMatchObject({ code: 408, type: 'timeout', metadata: { provider_name: 'Late', error_type: 'timeout' } })
      expect(performance.now() - wholeStarted).toBeLessThan(2000)
      await expect.poll(() => late.aborted, { timeout: 2000 }).toBe(1)

      const started = performance.now()
      const res = await g.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...c.auth, ...json },
        body: JSON.stringify({ model: 'late/model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(res.status).toBe(200)
      const { comments, events } = await readSse(res)
      const elapsed = performance.now() - started
      expect(comments).toContain(': service processing')
      expect(events.at(-1)).toBe('[DONE]')
      expect(events[0].error).toMatchObject({ code: 408, metadata: { error_type: 'timeout' } })
      expect(events[0].choices[0].finish_reason).toBe('error')
      expect(elapsed).toBeLessThan(2000)
      await expect.poll(() => late.aborted, { timeout: 2000 }).toBe(2) // the upstream call was stopped
      expect((await g.gateway.admin.getCredits(c.user.org_id)).total_usage).toBe('0')
    } finally {
      await g.close()
      await late.close()
    }
  })

  it('aborts the upstream call when the client disconnects, and still bills', async () => {
    const abortedBefore = alpha.aborted
    const controller = new AbortController()
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      signal: controller.signal,
      body: JSON.stringify({ model: 'fake/slow', stream: true, messages: [{ role: 'user', content: 'one two three four five six seven' }] }),
    })
    const generationId = res.headers.get('x-generation-id')
    const reader = res.body!.getReader()
    let seen = ''
    while (!seen.includes('"content":"Hello"')) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`the stream ended before any content: ${seen}`)
      seen += new TextDecoder().decode(value)
    }
    controller.abort()
    await expect.poll(() => alpha.aborted, { timeout: 3000 }).toBe(abortedBefore + 1)
    await expect
      .poll(async () => (await t.gateway.context.usage.list(customer.user.org_id)).find((r) => r.id === generationId)?.status, { timeout: 3000 })
      .toBe('cancelled')
  })

  it('refuses with 402 before any upstream call when the balance is not positive', async () => {
    const broke = await createCustomer(t.gateway)
    const sent = alpha.requests.length
    const res = await ask('fake/gpt-test', 'free lunch?', {})
    expect(res.status).toBe(200)
    const refused = await post({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'free lunch?' }] }, broke.auth)
    expect(refused.status).toBe(402)
    expect((await refused.json()).error).toMatchObject({ code: 402, type: 'insufficient_credits' })
    const streamed = await post({ model: 'fake/gpt-test', stream: true, messages: [{ role: 'user', content: 'free lunch?' }] }, broke.auth)
    expect(streamed.status).toBe(402)
    expect(alpha.requests.length).toBe(sent + 1)
  })

  it('enforces a key’s credit limit', async () => {
    const limited = await createCustomer(t.gateway, { credits: '5' })
    const sent = alpha.requests.length
    // The hold of a request is its maximum cost: 1 prompt token and 10 completion tokens at most here.
    const ask = (headers: Record<string, string>) => post({ model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'one' }] }, headers)
    const tiny = await t.gateway.admin.issueKey({ userId: limited.user.id, creditLimit: '0.000000000001' })
    const refused = await ask({ authorization: `Bearer ${tiny.key}` })
    expect(refused.status).toBe(402)
    const error = (await refused.json()).error
    expect(error.message).toMatch(/credit limit/)
    expect(error.metadata).toMatchObject({ credit_limit: '0.000000000001', requested_tokens: 10, affordable_tokens: 0 })
    expect(alpha.requests.length).toBe(sent)
    // A limit that covers one request's hold but not two: the first is served and charged, the second refused.
    const one = await t.gateway.admin.issueKey({ userId: limited.user.id, creditLimit: '0.00003' })
    const headers = { authorization: `Bearer ${one.key}` }
    expect((await ask(headers)).status).toBe(200)
    const second = await ask(headers)
    expect(second.status).toBe(402)
    expect((await second.json()).error.message).toMatch(/credit limit/)
  })

  it('keeps the balance exact over 50 concurrent requests', async () => {
    const busy = await createCustomer(t.gateway, { credits: '1' })
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(
          { model: i % 2 ? 'fake/gpt-test' : 'fake/cached', stream: i % 3 === 0, messages: [{ role: 'user', content: `request number ${'x'.repeat(i)}` }] },
          busy.auth,
        ),
      ),
    )
    let total = 0n
    for (const res of responses) {
      expect(res.status).toBe(200)
      const usage = res.headers.get('content-type')!.startsWith('text/event-stream') ? (await readSse(res)).events.at(-2).usage : (await res.json()).usage
      total += toUnits(String(usage.cost_eur))
    }
    const after = await t.gateway.admin.getCredits(busy.user.org_id)
    expect(after.total_usage).toBe(decimalText(total))
    expect(after.balance).toBe(decimalText(toUnits('1') - total))
  })

  it('rejects bad input with a 4xx envelope naming the problem', async () => {
    const cases: [unknown, number, RegExp, string | undefined][] = [
      [{ model: 'fake/gpt-test', messages: [] }, 400, /^messages: must not be empty$/, 'messages'],
      [{ model: 'fake/gpt-test', messages: 'hi' }, 400, /^messages: expected Array$/, 'messages'],
      [{ model: 'fake/gpt-test', messages: [{ role: 'robot', content: 'hi' }] }, 400, /^messages\.0\.role: expected/, 'messages.0.role'],
      [{ model: 'fake/gpt-test', messages: [{ role: 'user', content: 5 }] }, 400, /^messages\.0\.content: expected/, 'messages.0.content'],
      [{ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: 'yes' }, 400, /^stream: expected boolean$/, 'stream'],
      [{ model: 'nobody/nothing', messages: [{ role: 'user', content: 'hi' }] }, 404, /^Model nobody\/nothing is not available/, 'model'],
      [{ messages: [{ role: 'user', content: 'hi' }] }, 400, /^model: is required$/, 'model'],
    ]
    for (const [body, status, message, param] of cases) {
      const res = await post(body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      const error = (await res.json()).error
      expect(error.message, JSON.stringify(body)).toMatch(message)
      expect(error.param).toBe(param)
    }
    const invalid = await t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...customer.auth, ...json }, body: '{"model":' })
    expect(invalid.status).toBe(400)
  })
})

function toUnits(text: string): bigint {
  const negative = text.startsWith('-')
  const [whole, fraction = ''] = text.replace('-', '').split('.')
  const value = BigInt(whole) * 10n ** 12n + BigInt(fraction.padEnd(12, '0') || '0')
  return negative ? -value : value
}
