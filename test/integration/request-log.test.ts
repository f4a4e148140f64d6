import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { demo } from '../../src/index'
import { createCustomer, startGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

// A pino logger writing its JSON lines into `lines`.
function capturedPino() {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

const json = { 'content-type': 'application/json' }

describe('one log line per request, through a pino logger (docs/operations.md#logs)', () => {
  it('writes a whole chat, a streamed chat and a refused request once each, with what each request did and no secret', async () => {
    const { logger, lines } = capturedPino()
    const t = await startGateway({ providers: [demo()], logger })
    try {
      const { key, auth, user } = await createCustomer(t.gateway, { credits: '1' })
      const whole = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...auth, ...json, 'x-request-id': 'req-whole-1' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello log' }] }),
      })
      const answer = await whole.json()
      const stream = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...auth, ...json, 'x-request-id': 'req-stream-1' },
        body: JSON.stringify({ model: 'demo/echo', stream: true, messages: [{ role: 'user', content: 'Hello stream' }] }),
      })
      const streamed = await readSse(stream)
      const refused = await t.request('/api/v1/me', { headers: { authorization: 'Bearer sk-service-v1-not-a-real-key', 'x-request-id': 'req-refused-1' } })
      expect(refused.status).toBe(401)
      await refused.text()

      await expect.poll(() => lines.filter((l) => l.msg === 'request').length).toBe(3)
      const requests = lines.filter((l) => l.msg === 'request')
      // Keyed by the client's id (kept beside the gateway's own, which every line has, and which the usage record names).
      for (const line of requests) expect(line.request_id).toMatch(/^req_[0-9a-f]{24}$/)
      const byId = Object.fromEntries(requests.map((l) => [l.client_request_id, l]))
      expect(Object.keys(byId).sort()).toEqual(['req-refused-1', 'req-stream-1', 'req-whole-1'])
      expect(whole.headers.get('x-request-id')).toBe('req-whole-1')
      const generation = await (await t.request(`/api/v1/generation?id=${answer.id}`, { headers: auth })).json()
      expect(generation.data).toMatchObject({ request_id: byId['req-whole-1'].request_id, client_request_id: 'req-whole-1' })
      expect(byId['req-whole-1']).toMatchObject({
        level: 30,
        component: 'model-gateway',
        method: 'POST',
        path: '/api/v1/chat/completions',
        status: 200,
        org_id: user.org_id,
        key: expect.stringMatching(/^[0-9a-f]{12}$/),
        generation_id: answer.id,
        model: 'demo/echo',
        provider: 'demo',
        stream: false,
        prompt_tokens: answer.usage.prompt_tokens,
        completion_tokens: answer.usage.completion_tokens,
        billed_status: 'success',
      })
      expect(byId['req-whole-1'].latency_ms).toBeTypeOf('number')
      expect(byId['req-whole-1'].latency_ms).toBeLessThan(10_000)
      // The exact decimal string of the usage record, the same amount the answer gave as a number.
      expect(Number(byId['req-whole-1'].cost_eur)).toBe(answer.usage.cost_eur)
      const usage = streamed.events.findLast((e: { usage?: unknown }) => e.usage)!.usage as { cost_eur: number }
      expect(byId['req-stream-1']).toMatchObject({ status: 200, stream: true, model: 'demo/echo', billed_status: 'success' })
      expect(Number(byId['req-stream-1'].cost_eur)).toBe(usage.cost_eur)
      expect(byId['req-refused-1']).toMatchObject({ method: 'GET', path: '/api/v1/me', status: 401 })
      expect(byId['req-refused-1']).not.toHaveProperty('org_id')
      // Never a secret: neither the key nor the refused token appears in any line.
      const text = JSON.stringify(lines)
      expect(text).not.toContain(key)
      expect(text).not.toContain('not-a-real-key')
    } finally {
      await t.close()
    }
  })

  it('writes one line for each of two requests that share an X-Request-Id, once each has ended', async () => {
    const { logger, lines } = capturedPino()
    const t = await startGateway({ providers: [demo()], logger })
    try {
      const { auth } = await createCustomer(t.gateway, { credits: '1' })
      const send = (content: string) =>
        t.request('/api/v1/chat/completions', {
          method: 'POST',
          headers: { ...auth, ...json, 'x-request-id': 'req-shared-1' },
          body: JSON.stringify({ model: 'demo/echo', stream: true, messages: [{ role: 'user', content }] }),
        })
      const [first, second] = await Promise.all([send('one'), send('two')])
      await Promise.all([readSse(first), readSse(second)])
      await expect.poll(() => lines.filter((l) => l.msg === 'request' && l.client_request_id === 'req-shared-1').length).toBe(2)
      const shared = lines.filter((l) => l.client_request_id === 'req-shared-1')
      expect(shared.map((l) => l.status)).toEqual([200, 200])
      expect(new Set(shared.map((l) => l.request_id)).size).toBe(2)
    } finally {
      await t.close()
    }
  })

  it("two orgs sending the same X-Request-Id at once: each line has its own org's billing facts, and the metrics count both as 200", async () => {
    const { logger, lines } = capturedPino()
    const t = await startGateway({ providers: [demo()], logger, metrics: { route: true } })
    try {
      const [alice, bob] = await Promise.all([createCustomer(t.gateway, { credits: '1' }), createCustomer(t.gateway, { credits: '1' })])
      const send = (auth: Record<string, string>, content: string, stream: boolean) =>
        t.request('/api/v1/chat/completions', {
          method: 'POST',
          headers: { ...auth, ...json, 'x-request-id': 'same-id' },
          body: JSON.stringify({ model: 'demo/echo', stream, messages: [{ role: 'user', content }] }),
        })
      // Bob's whole request runs while Alice's stream (begun first, with the same id) is still open.
      const aliceStream = await send(alice.auth, 'alice speaks at some length here', true)
      const bobAnswer = await (await send(bob.auth, 'bob', false)).json()
      const aliceEvents = (await readSse(aliceStream)).events
      const aliceGeneration = aliceEvents[0].id
      await expect.poll(() => lines.filter((l) => l.msg === 'request' && l.client_request_id === 'same-id').length).toBe(2)
      const byOrg = Object.fromEntries(lines.filter((l) => l.client_request_id === 'same-id').map((l) => [l.org_id, l]))
      expect(byOrg[alice.user.org_id]).toMatchObject({ status: 200, stream: true, generation_id: aliceGeneration, billed_status: 'success' })
      expect(byOrg[bob.user.org_id]).toMatchObject({ status: 200, stream: false, generation_id: bobAnswer.id, billed_status: 'success' })
      const metrics = await t.gateway.metrics()
      expect(metrics).toMatch(/model_gateway_requests_total\{[^}]*route="\/chat\/completions"[^}]*status="200"[^}]*\} 2\n/)
      expect(metrics).not.toMatch(/model_gateway_requests_total\{[^}]*status="500"/)
    } finally {
      await t.close()
    }
  })
})
