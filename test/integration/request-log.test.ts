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
      const byId = Object.fromEntries(requests.map((l) => [l.request_id, l]))
      expect(Object.keys(byId).sort()).toEqual(['req-refused-1', 'req-stream-1', 'req-whole-1'])
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
      await expect.poll(() => lines.filter((l) => l.msg === 'request' && l.request_id === 'req-shared-1').length).toBe(2)
      const shared = lines.filter((l) => l.request_id === 'req-shared-1')
      expect(shared.map((l) => l.status)).toEqual([200, 200])
    } finally {
      await t.close()
    }
  })
})
