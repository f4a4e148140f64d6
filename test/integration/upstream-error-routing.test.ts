import { afterEach, describe, expect, it } from 'vitest'
import { GatewayError } from '../../src/errors'
import { UpstreamError, type Provider, type RoutingEvent, type UpstreamCompletion } from '../../src/index'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// The router reads what an UpstreamError says (docs/routing.md#retries): a wait it carries is waited, a connection
// error is retried on the same provider, a retryable one falls back, any other is answered as it is. The providers
// here are hand-written, so that nothing but the error's fields (no status, no header) can tell the router.

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const ANSWER: UpstreamCompletion = {
  id: 'up-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'served' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
}

/** A provider of `acme/model` that fails with the errors given, in order, then answers; it notes when each call came. */
function scripted(slug: string, failures: ((provider: { slug: string; name: string }) => Error)[]) {
  const calls: number[] = []
  const name = slug[0].toUpperCase() + slug.slice(1)
  const provider: Provider = {
    slug,
    name,
    models: [{ id: 'acme/model', upstreamId: 'model', pricing }],
    async chat() {
      calls.push(performance.now())
      const fail = failures.shift()
      if (fail) throw fail({ slug, name })
      return ANSWER
    },
    async chatStream() {
      throw new Error('not streamed here')
    },
  }
  return { provider, calls }
}

const opened: TestGateway[] = []
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close()
})

async function ask(providers: Provider[], retry: { maxRetries?: number; baseDelayMs?: number; maxDelayMs?: number } = {}) {
  const events: { kind: string; event: RoutingEvent & { delayMs?: number } }[] = []
  const push = (kind: string) => (event: RoutingEvent) => events.push({ kind, event })
  const t = await startGateway({
    providers,
    retry,
    hooks: { onAttempt: push('attempt'), onRetry: push('retry'), onFallback: push('fallback'), onSuccess: push('success'), onFailure: push('failure') },
  })
  opened.push(t)
  const customer = await createCustomer(t.gateway, { credits: '5' })
  const res = await t.request('/api/v1/chat/completions', {
    method: 'POST',
    headers: { ...customer.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], provider: { order: providers.map((p) => p.slug) } }),
  })
  return { status: res.status, body: await res.json(), events }
}

describe('routing reads the UpstreamError', () => {
  it('waits the retryAfterMs it carries before asking the same provider again', async () => {
    const limited = scripted('limited', [(provider) => new UpstreamError({ kind: 'rate_limit_exceeded', provider, retryAfterMs: 300 })])
    const spare = scripted('spare', [])
    const answer = await ask([limited.provider, spare.provider], { maxRetries: 2, baseDelayMs: 5 })
    expect([answer.status, answer.body.provider, answer.body.choices[0].message.content]).toEqual([200, 'Limited', 'served'])
    expect(answer.events.map((e) => e.kind)).toEqual(['attempt', 'retry', 'attempt', 'success'])
    expect(answer.events[1].event).toMatchObject({ provider: 'limited', retry: 0, delayMs: 300, error: { status: 429, error_type: 'rate_limit_exceeded' } })
    expect(limited.calls).toHaveLength(2)
    expect(limited.calls[1] - limited.calls[0]).toBeGreaterThanOrEqual(298)
    expect(spare.calls).toHaveLength(0)
  })

  it("reads a host provider's GatewayError that names its kind in metadata.error_type (written before UpstreamError) as that kind", async () => {
    const busy = scripted('busy', [
      () =>
        new GatewayError(502, 'Busy is unavailable', { metadata: { provider_name: 'Busy', error_type: 'provider_unavailable', raw: 'down for maintenance' } }),
    ])
    const spare = scripted('spare', [])
    const answer = await ask([busy.provider, spare.provider], { maxRetries: 0 })
    expect([answer.status, answer.body.provider]).toEqual([200, 'Spare'])
    expect(answer.events.map((e) => e.kind)).toEqual(['attempt', 'fallback', 'attempt', 'success'])
    // Alone, it is answered exactly as it was thrown.
    const alone = scripted('busy', [
      () => new GatewayError(502, 'Busy is unavailable', { metadata: { provider_name: 'Busy', error_type: 'provider_unavailable', raw: 'x' } }),
    ])
    const failed = await ask([alone.provider], { maxRetries: 0 })
    expect([failed.status, failed.body]).toEqual([
      502,
      {
        error: {
          code: 502,
          type: 'upstream_error',
          message: 'Busy is unavailable',
          metadata: { provider_name: 'Busy', error_type: 'provider_unavailable', raw: 'x' },
        },
      },
    ])
  })

  it('does not wait a retryAfterMs above retry.maxDelayMs: the next provider serves at once', async () => {
    const limited = scripted('limited', [(provider) => new UpstreamError({ kind: 'rate_limit_exceeded', provider, retryAfterMs: 5_000 })])
    const spare = scripted('spare', [])
    const answer = await ask([limited.provider, spare.provider], { maxRetries: 2, maxDelayMs: 1_000 })
    expect([answer.status, answer.body.provider]).toEqual([200, 'Spare'])
    expect(answer.events.map((e) => e.kind)).toEqual(['attempt', 'fallback', 'attempt', 'success'])
    expect([limited.calls.length, spare.calls.length]).toEqual([1, 1])
  })

  it('retries a connection error on the same provider; the same kind without `connection` falls back at once', async () => {
    const dropped = scripted('dropped', [(provider) => new UpstreamError({ kind: 'provider_unavailable', provider, raw: 'ECONNRESET', connection: true })])
    const spare = scripted('spare', [])
    const retried = await ask([dropped.provider, spare.provider], { maxRetries: 2, baseDelayMs: 5 })
    expect([retried.status, retried.body.provider]).toEqual([200, 'Dropped'])
    expect(retried.events.map((e) => e.kind)).toEqual(['attempt', 'retry', 'attempt', 'success'])

    const down = scripted('down', [(provider) => new UpstreamError({ kind: 'provider_unavailable', provider, raw: 'HTTP 500' })])
    const other = scripted('spare', [])
    const fellBack = await ask([down.provider, other.provider], { maxRetries: 2, baseDelayMs: 5 })
    expect([fellBack.status, fellBack.body.provider]).toEqual([200, 'Spare'])
    expect(fellBack.events.map((e) => e.kind)).toEqual(['attempt', 'fallback', 'attempt', 'success'])
    expect(down.calls).toHaveLength(1)
  })

  it('answers an error that is not retryable as it is, in the envelope clients always saw', async () => {
    const refusing = scripted('refusing', [(provider) => new UpstreamError({ kind: 'invalid_request', provider, raw: 'bad tool schema' })])
    const spare = scripted('spare', [])
    const answer = await ask([refusing.provider, spare.provider])
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({
      error: {
        code: 400,
        type: 'invalid_request',
        message: 'Refusing rejected the request: bad tool schema',
        metadata: { provider_name: 'Refusing', error_type: 'invalid_request', raw: 'bad tool schema' },
      },
    })
    expect(answer.events.map((e) => e.kind)).toEqual(['attempt', 'failure'])
    expect(spare.calls).toHaveLength(0)
  })
})
