/**
 * What bounds POST /messages/count_tokens, a free route (docs/messages.md#counting-tokens, docs/limits.md): over real
 * HTTP, its own body limit (`bodyLimits.countTokens`, by default what /messages takes, so that any request a client
 * may send can be counted), 413 in Anthropic's shape beyond it, and the rate limits, which count it as every request.
 */
import { describe, expect, it } from 'vitest'
import { demo } from '../../src/providers/demo'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const MiB = 1024 * 1024

/** A Messages request whose JSON is about `bytes` long: one user message of that much text. */
const messagesOf = (bytes: number, extra: Record<string, unknown> = {}) => ({
  model: 'demo/echo',
  ...extra,
  messages: [{ role: 'user', content: 'x'.repeat(bytes) }],
})
const post = (t: TestGateway, path: string, key: string, body: unknown) =>
  t.request(`/api/v1/messages${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })
/** The gateway's estimate of a one-message request: 4 characters a token of the JSON of its chat messages. */
const estimate = (bytes: number) => Math.ceil(JSON.stringify([{ role: 'user', content: 'x'.repeat(bytes) }]).length / 4)

describe('POST /messages/count_tokens: body limit', () => {
  it('by default takes what /messages takes: 6 MiB counts, and it follows bodyLimits.chat', async () => {
    const t = await startGateway({ providers: [demo()] })
    try {
      const { key } = await createCustomer(t.gateway)
      const counted = await post(t, '/count_tokens', key, messagesOf(6 * MiB))
      expect(counted.status).toBe(200)
      expect(await counted.json()).toEqual({ input_tokens: estimate(6 * MiB) })
      expect(t.gateway.context.options.bodyLimits.countTokens).toBe(10 * MiB)
    } finally {
      await t.close()
    }
    const small = await startGateway({ providers: [demo()], bodyLimits: { chat: MiB } })
    try {
      const { key } = await createCustomer(small.gateway)
      const refused = await post(small, '/count_tokens', key, messagesOf(2 * MiB))
      expect(refused.status).toBe(413)
      expect(await refused.json()).toMatchObject({
        type: 'error',
        error: { type: 'request_too_large', message: `Request body is larger than ${MiB} bytes` },
      })
    } finally {
      await small.close()
    }
  })

  it('bodyLimits.countTokens is its own: past it a count is 413 in Anthropic’s shape, while /messages still takes the body', async () => {
    const limit = 64 * 1024
    const t = await startGateway({ providers: [demo()], bodyLimits: { countTokens: limit } })
    try {
      const { key } = await createCustomer(t.gateway, { credits: '5' })
      const within = await post(t, '/count_tokens', key, messagesOf(limit - 200))
      expect(within.status).toBe(200)
      expect(await within.json()).toEqual({ input_tokens: estimate(limit - 200) })
      const refused = await post(t, '/count_tokens', key, messagesOf(100 * 1024))
      expect(refused.status).toBe(413)
      const body = await refused.json()
      expect(body).toMatchObject({ type: 'error', error: { type: 'request_too_large', message: `Request body is larger than ${limit} bytes` } })
      expect(body.request_id).toBe(refused.headers.get('x-request-id'))
      const served = await post(t, '', key, messagesOf(100 * 1024, { max_tokens: 5 }))
      expect(served.status).toBe(200)
      expect((await served.json()).type).toBe('message')
    } finally {
      await t.close()
    }
  })

  it('refuses a limit that is not a positive number', async () => {
    for (const bad of [0, -1, Number.NaN]) await expect(startGateway({ bodyLimits: { countTokens: bad } })).rejects.toThrow(/bodyLimits\.countTokens/)
  })
})

describe('POST /messages/count_tokens: rate limits', () => {
  it('counts against the key’s window as every request: past it a 429 in Anthropic’s shape, and /messages shares the window', async () => {
    const t = await startGateway({ providers: [demo()], rateLimits: { key: { requests: 3, windowSeconds: 60 } } })
    try {
      const { key } = await createCustomer(t.gateway, { credits: '5' })
      for (let i = 0; i < 3; i++) {
        const res = await post(t, '/count_tokens', key, messagesOf(10))
        expect(res.status).toBe(200)
        expect(res.headers.get('x-ratelimit-remaining')).toBe(String(2 - i))
      }
      const limited = await post(t, '/count_tokens', key, messagesOf(10))
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(await limited.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
      expect((await post(t, '', key, messagesOf(10, { max_tokens: 5 }))).status).toBe(429)
    } finally {
      await t.close()
    }
  })
})
