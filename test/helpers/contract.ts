import { createHash, randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { readSse } from './sse'

/**
 * The adapter contract: the same HTTP checks against a gateway however it is mounted. `baseUrl` is where its
 * `/api/v1` lives (a mount prefix included); `key` a key of a user with credits; the gateway serves `demo/echo`.
 */
export async function runContract(baseUrl: string, key: string): Promise<void> {
  const auth = { authorization: `Bearer ${key}` }
  const json = { 'content-type': 'application/json' }

  // GET /me, every field.
  const me = await fetch(`${baseUrl}/api/v1/me`, { headers: auth })
  expect(me.status).toBe(200)
  expect(me.headers.get('x-request-id')).toMatch(/^req_/)
  const identity = await me.json()
  expect(Object.keys(identity)).toEqual(['user_id', 'email', 'org_name', 'org_id', 'plan', 'credits'])
  expect(Object.keys(identity.credits)).toEqual(['balance', 'total_credits', 'total_usage'])

  // Errors in the envelope.
  const unauthorized = await fetch(`${baseUrl}/api/v1/me`)
  expect(unauthorized.status).toBe(401)
  expect((await unauthorized.json()).error).toMatchObject({ code: 401, type: 'unauthorized' })
  const missing = await fetch(`${baseUrl}/api/v1/no-such-route`, { headers: auth })
  expect(missing.status).toBe(404)
  expect((await missing.json()).error).toMatchObject({ code: 404, type: 'not_found' })
  const invalid = await fetch(`${baseUrl}/api/v1/chat/completions`, { method: 'POST', headers: { ...auth, ...json }, body: '{"model":' })
  expect(invalid.status).toBe(400)
  expect((await invalid.json()).error).toMatchObject({ code: 400, type: 'invalid_request' })

  // A streamed chat: chunks, the usage chunk, [DONE].
  const streamed = await fetch(`${baseUrl}/api/v1/chat/completions`, {
    method: 'POST', headers: { ...auth, ...json },
    body: JSON.stringify({ model: 'demo/echo', stream: true, messages: [{ role: 'user', content: 'contract check' }] }),
  })
  expect(streamed.status).toBe(200)
  expect(streamed.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  const { events } = await readSse(streamed)
  expect(events.at(-1)).toBe('[DONE]')
  expect(events.slice(0, -1).map((e: any) => e.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: contract check')
  expect(events.at(-2)).toMatchObject({ choices: [], usage: { completion_tokens: 3 } })
  expect(events.at(-2).usage.cost).toBeGreaterThan(0)

  // A PKCE exchange: a code for the caller, exchanged with its verifier for a key that works.
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const created = await fetch(`${baseUrl}/api/v1/auth/keys/code`, { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: challenge }) })
  expect(created.status).toBe(201)
  const { code } = await created.json()
  const exchanged = await fetch(`${baseUrl}/api/v1/auth/keys`, { method: 'POST', headers: json, body: JSON.stringify({ code, code_verifier: verifier }) })
  expect(exchanged.status).toBe(200)
  const issued = await exchanged.json()
  expect(issued.user_id).toBe(identity.user_id)
  const again = await fetch(`${baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${issued.key}` } })
  expect((await again.json()).user_id).toBe(identity.user_id)
}
