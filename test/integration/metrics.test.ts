import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { workingAndBrokenProvider } from '../helpers/working-and-broken'

const json = { 'content-type': 'application/json' }

// The value of one series of the text exposition (`name{labels}`), or undefined.
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('Prometheus metrics (docs/operations.md#metrics)', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    t = await startGateway({
      metrics: { route: true, bearerToken: 'scrape-token' },
      retry: { maxRetries: 0, baseDelayMs: 5 },
      providers: [workingAndBrokenProvider(upstream.url)],
    })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  it('counts requests, tokens, cost, time to first token, upstream errors, breakers and holds; served behind its token', async () => {
    const { auth } = await createCustomer(t.gateway, { credits: '1' })
    const chat = (body: object) => t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify(body) })
    const whole = await (await chat({ model: 'up/gpt-test', messages: [{ role: 'user', content: 'one' }] })).json()
    const streamed = await readSse(await chat({ model: 'up/gpt-test', stream: true, messages: [{ role: 'user', content: 'two' }] }))
    const usage = streamed.events.findLast((e: { usage?: unknown }) => e.usage)!.usage as typeof whole.usage
    const broken = await chat({ model: 'up/broken', messages: [{ role: 'user', content: 'three' }] })
    expect(broken.status).toBe(502)
    await broken.text()
    // A fallback: the broken model fails, the next one serves.
    const fallback = await (await chat({ models: ['up/broken', 'up/gpt-test'], messages: [{ role: 'user', content: 'four' }] })).json()

    expect((await t.request('/api/v1/metrics')).status).toBe(401)
    const res = await t.request('/api/v1/metrics', { headers: { authorization: 'Bearer scrape-token' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await res.text()
    // The same metrics, for a host that serves /metrics itself.
    expect(t.gateway.metrics()).toContain('model_gateway_requests_total{route="/chat/completions",method="POST",status="200"} 3\n')

    const labels = 'model="up/gpt-test",provider="up"'
    expect(sample(text, 'model_gateway_requests_total{route="/chat/completions",method="POST",status="200"}')).toBe(3)
    expect(sample(text, 'model_gateway_requests_total{route="/chat/completions",method="POST",status="502"}')).toBe(1)
    expect(sample(text, 'model_gateway_requests_total{route="/metrics",method="GET",status="401"}')).toBe(1)
    expect(sample(text, 'model_gateway_request_duration_seconds_count{route="/chat/completions"}')).toBe(4)
    expect(sample(text, `model_gateway_billed_requests_total{${labels},status="success"}`)).toBe(3)
    const served = [whole.usage, usage, fallback.usage]
    expect(sample(text, `model_gateway_tokens_total{${labels},kind="prompt"}`)).toBe(served.reduce((n, u) => n + u.prompt_tokens, 0))
    expect(sample(text, `model_gateway_tokens_total{${labels},kind="completion"}`)).toBe(served.reduce((n, u) => n + u.completion_tokens, 0))
    expect(sample(text, `model_gateway_cost_eur_total{${labels}}`)).toBeCloseTo(
      served.reduce((n, u) => n + u.cost_eur, 0),
      12,
    )
    expect(sample(text, `model_gateway_time_to_first_token_seconds_count{${labels}}`)).toBe(3)
    expect(sample(text, `model_gateway_time_to_first_token_seconds_bucket{${labels},le="+Inf"}`)).toBe(3)
    // The failure and the fallback's first attempt: two upstream errors of their type, none billed on the broken model.
    expect(sample(text, 'model_gateway_upstream_errors_total{provider="up",type="provider_unavailable"}')).toBe(2)
    expect(text).not.toContain('model_gateway_billed_requests_total{model="up/broken"')
    // Two failures of the three that open a breaker: closed still; a third opens it.
    expect(sample(text, 'model_gateway_breaker_state{provider="up",model="up/broken",credential="service"}')).toBe(0)
    const third = await chat({ model: 'up/broken', messages: [{ role: 'user', content: 'five' }] })
    expect(third.status).toBe(502)
    await third.text()
    expect(sample(t.gateway.metrics(), 'model_gateway_breaker_state{provider="up",model="up/broken",credential="service"}')).toBe(2)
    expect(sample(text, 'model_gateway_breaker_state{provider="up",model="up/gpt-test",credential="service"}')).toBe(0)
    expect(sample(text, 'model_gateway_holds_active{}') ?? sample(text, 'model_gateway_holds_active')).toBe(0)
    expect(text).toContain('# TYPE model_gateway_request_duration_seconds histogram')
    // Every line is a comment or a sample: name, optional labels, a number.
    for (const line of text.trimEnd().split('\n')) expect(line).toMatch(/^(# (HELP|TYPE) \S+ .+|[a-z_]+(\{[^}]*\})? (-?[0-9.e+-]+|\+Inf|NaN))$/)
  })

  it('serves no route unless asked, and collects nothing with metrics: false', async () => {
    const plain = await startGateway({})
    try {
      expect((await plain.request('/api/v1/metrics')).status).toBe(404)
      expect(plain.gateway.metrics()).toContain('# TYPE model_gateway_requests_total counter')
    } finally {
      await plain.close()
    }
    const off = createGateway({ secret: TEST_SECRET, logger: false, metrics: false })
    expect(off.metrics()).toBe('')
    expect(off.context.metrics).toBeUndefined()
    await off.close()
  })
})
