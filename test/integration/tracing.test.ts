import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { workingAndBrokenProvider } from '../helpers/working-and-broken'

const json = { 'content-type': 'application/json' }

describe('OpenTelemetry traces through the host’s SDK (docs/operations.md#traces)', () => {
  const exporter = new InMemorySpanExporter()
  let upstream: FakeOpenAI
  let t: TestGateway
  let auth: Record<string, string>
  let orgId: string
  beforeAll(async () => {
    // The host's SDK: a tracer provider exporting to memory, W3C trace context.
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    t = await startGateway({
      retry: { maxRetries: 0, baseDelayMs: 5 },
      providers: [workingAndBrokenProvider(upstream.url)],
    })
    const customer = await createCustomer(t.gateway, { credits: '1' })
    auth = customer.auth
    orgId = customer.user.org_id
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
    trace.disable()
    propagation.disable()
  })

  const chat = (requestId: string, body: object) =>
    t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json, 'x-request-id': requestId }, body: JSON.stringify(body) })
  // The spans of one request: its SERVER span and its attempts' CLIENT spans, once the request span has ended.
  async function spansOf(requestId: string): Promise<{ request: ReadableSpan; attempts: ReadableSpan[] }> {
    await expect.poll(() => exporter.getFinishedSpans().some((s) => s.attributes['model_gateway.client_request_id'] === requestId)).toBe(true)
    const request = exporter.getFinishedSpans().find((s) => s.attributes['model_gateway.client_request_id'] === requestId)!
    const attempts = exporter
      .getFinishedSpans()
      .filter((s) => s.kind === SpanKind.CLIENT && s.parentSpanContext?.spanId === request.spanContext().spanId)
      .sort((a, b) => Number(a.attributes['model_gateway.attempt']) - Number(b.attributes['model_gateway.attempt']))
    return { request, attempts }
  }
  const traceparentOf = (i: number) => String(upstream.requests[i].headers.traceparent)

  it('a whole request: a SERVER span with the GenAI usage and the gateway’s attributes, a CLIENT span for its attempt, whose context reaches the provider', async () => {
    const before = upstream.requests.length
    const answer = await (await chat('trace-whole', { model: 'up/gpt-test', messages: [{ role: 'user', content: 'hi' }] })).json()
    const { request, attempts } = await spansOf('trace-whole')
    expect(request.kind).toBe(SpanKind.SERVER)
    expect(request.name).toBe('POST /chat/completions')
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/chat/completions',
      'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat',
      'gen_ai.response.model': 'up/gpt-test',
      'gen_ai.response.id': answer.id,
      'gen_ai.usage.input_tokens': answer.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': answer.usage.completion_tokens,
      'model_gateway.provider': 'up',
      'model_gateway.org_id': orgId,
      'model_gateway.stream': false,
      'model_gateway.billed_status': 'success',
    })
    expect(Number(request.attributes['model_gateway.cost_eur'])).toBe(answer.usage.cost_eur)
    expect(request.status.code).not.toBe(SpanStatusCode.ERROR)
    expect(attempts).toHaveLength(1)
    expect(attempts[0].name).toBe('chat gpt-test')
    expect(attempts[0].attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.provider.name': 'up',
      'model_gateway.attempt': 1,
      'model_gateway.fallback': false,
    })
    // W3C trace context: the provider sees the attempt's span as its parent.
    expect(traceparentOf(before)).toBe(`00-${attempts[0].spanContext().traceId}-${attempts[0].spanContext().spanId}-01`)
    // Never a prompt, an answer or a key.
    const text = JSON.stringify([request.attributes, attempts[0].attributes])
    expect(text).not.toContain('hi"')
    expect(text).not.toContain('sk-')
  })

  it('a stream: its SERVER span ends once it is billed, with the usage', async () => {
    const streamed = await readSse(await chat('trace-stream', { model: 'up/gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] }))
    const usage = streamed.events.findLast((e: { usage?: unknown }) => e.usage)!.usage as { prompt_tokens: number; completion_tokens: number }
    const { request, attempts } = await spansOf('trace-stream')
    expect(request.attributes).toMatchObject({
      'http.response.status_code': 200,
      'model_gateway.stream': true,
      'gen_ai.usage.input_tokens': usage.prompt_tokens,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
    })
    expect(attempts).toHaveLength(1)
  })

  it('a fallback: the failed attempt’s span says why, the next one is marked a fallback', async () => {
    const res = await chat('trace-fallback', { models: ['up/broken', 'up/gpt-test'], messages: [{ role: 'user', content: 'hi' }] })
    expect(res.status).toBe(200)
    await res.json()
    const { request, attempts } = await spansOf('trace-fallback')
    expect(attempts.map((a) => [a.name, a.status.code, a.attributes['model_gateway.fallback']])).toEqual([
      ['chat fail-500', SpanStatusCode.ERROR, false],
      ['chat gpt-test', SpanStatusCode.UNSET, true],
    ])
    expect(attempts[0].attributes['error.type']).toBe('provider_unavailable')
    expect(request.attributes['gen_ai.response.model']).toBe('up/gpt-test')
  })

  it('a failure: the request’s span is an error with the status it answered', async () => {
    const res = await chat('trace-failure', { model: 'up/broken', messages: [{ role: 'user', content: 'hi' }] })
    expect(res.status).toBe(502)
    await res.text()
    const { request, attempts } = await spansOf('trace-failure')
    expect(request.status.code).toBe(SpanStatusCode.ERROR)
    expect(request.attributes['http.response.status_code']).toBe(502)
    expect(request.attributes['model_gateway.billed_status']).toBeUndefined()
    expect(attempts).toHaveLength(1)
    expect(attempts[0].status.code).toBe(SpanStatusCode.ERROR)
  })
})
