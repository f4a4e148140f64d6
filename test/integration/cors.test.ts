/**
 * CORS over real HTTP on 127.0.0.1 (docs/api.md#cors): preflights answered with 204, every API response
 * (errors, streams and redirects included) readable by a page of any origin by default, never with credentials; a
 * configured list of origins, or off.
 */
import { H3 } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, demo } from '../../src/index'
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS } from '../../src/http/cors'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'

const APP = 'https://app.example'
const json = { 'content-type': 'application/json' }
const preflightHeaders = (origin = APP, method = 'POST', headers = 'authorization, content-type') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': headers,
})
const list = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)

describe('CORS, by default: any origin, without credentials', () => {
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>
  beforeAll(async () => {
    t = await startGateway({ providers: [demo()], rateLimits: { key: { requests: 1000, windowSeconds: 60 } } })
    customer = await createCustomer(t.gateway, { credits: '5' })
  })
  afterAll(() => t?.close())

  it('answers a preflight with 204, the origin, the methods, the API headers (and those asked for), and how long to keep it', async () => {
    for (const path of ['/api/v1/chat/completions', '/api/v1/byok/00000000-0000-4000-8000-000000000000', '/api/v1/no-such-route']) {
      const res = await t.request(path, { method: 'OPTIONS', headers: preflightHeaders(APP, 'POST', 'Authorization, Content-Type, X-Stainless-OS, x-title') })
      expect(res.status, path).toBe(204)
      expect(await res.text()).toBe('')
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(list(res.headers.get('access-control-allow-methods'))).toEqual(expect.arrayContaining(['get', 'post', 'patch', 'delete', 'options']))
      expect(list(res.headers.get('access-control-allow-headers'))).toEqual([...CORS_ALLOW_HEADERS.map((h) => h.toLowerCase()), 'x-stainless-os'])
      expect(res.headers.get('access-control-max-age')).toBe('7200')
      expect(res.headers.get('access-control-allow-credentials')).toBeNull()
      expect(res.headers.get('x-request-id')).toMatch(/^req_/)
    }
  })

  it('adds Access-Control-Allow-Origin and Expose-Headers to every API response: reads, chats, streams', async () => {
    const expose = list(CORS_EXPOSE_HEADERS.join(','))
    const check = (res: Response) => {
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(list(res.headers.get('access-control-expose-headers'))).toEqual(expose)
      expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    }
    check(await t.request('/api/v1/models', { headers: { origin: APP } }))
    const me = await t.request('/api/v1/me', { headers: { origin: APP, ...customer.auth } })
    expect(me.status).toBe(200)
    check(me)
    expect(me.headers.get('x-ratelimit-limit')).toBe('1000')
    for (const stream of [false, true]) {
      const chat = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { origin: APP, ...customer.auth, ...json },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }], stream }),
      })
      expect(chat.status).toBe(200)
      check(chat)
      expect(chat.headers.get('x-generation-id')).toMatch(/^gen-/)
      await chat.text()
    }
  })

  it("adds them to errors too: 401, 400, 404, 405, and the browser flow's answers", async () => {
    const cases: [string, RequestInit, number][] = [
      ['/api/v1/me', {}, 401],
      ['/api/v1/chat/completions', { method: 'POST', headers: { ...customer.auth, ...json }, body: '{"model":"demo/echo","messages":[]}' }, 400],
      ['/api/v1/no-such-route', {}, 404],
      ['/api/v1/models', { method: 'DELETE' }, 405],
      [`/api/v1/auth?callback_url=https%3A%2F%2Fapp.example%2Fcb&code_challenge=${'c'.repeat(43)}`, { redirect: 'manual' }, 403],
    ]
    for (const [path, init, status] of cases) {
      const res = await t.request(path, { ...init, headers: { origin: APP, ...(init.headers as Record<string, string>) } })
      expect(res.status, path).toBe(status)
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*')
      expect(list(res.headers.get('access-control-expose-headers')), path).toContain('x-request-id')
    }
  })

  it('a route handler mounted on its own answers preflights and adds the headers as well', async () => {
    const gateway = createGateway({ secret: TEST_SECRET, logger: false, providers: [demo()] })
    const app = new H3().all('/me', gateway.handlers.getMe)
    const preflight = await app.fetch(new Request('http://host.example/me', { method: 'OPTIONS', headers: preflightHeaders(APP, 'GET', 'authorization') }))
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    const unauthorized = await app.fetch(new Request('http://host.example/me', { headers: { origin: APP } }))
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe('*')
    await gateway.close()
  })
})

describe('CORS with a list of origins', () => {
  let t: TestGateway
  beforeAll(async () => {
    t = await startGateway({ providers: [demo()], cors: { origins: [APP, 'http://localhost:5173'] } })
  })
  afterAll(() => t?.close())

  it('allows only those origins, naming the one that asked, and says the answer varies by Origin', async () => {
    for (const origin of [APP, 'http://localhost:5173']) {
      const pre = await t.request('/api/v1/chat/completions', { method: 'OPTIONS', headers: preflightHeaders(origin) })
      expect(pre.status).toBe(204)
      expect(pre.headers.get('access-control-allow-origin')).toBe(origin)
      expect(list(pre.headers.get('vary'))).toContain('origin')
      const res = await t.request('/api/v1/models', { headers: { origin } })
      expect(res.headers.get('access-control-allow-origin')).toBe(origin)
      expect(list(res.headers.get('vary'))).toContain('origin')
    }
    const refused = await t.request('/api/v1/chat/completions', { method: 'OPTIONS', headers: preflightHeaders('https://evil.example') })
    expect(refused.status).toBe(204)
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()
    expect(refused.headers.get('access-control-allow-headers')).toBeNull()
    const read = await t.request('/api/v1/models', { headers: { origin: 'https://evil.example' } })
    expect(read.status).toBe(200)
    expect(read.headers.get('access-control-allow-origin')).toBeNull()
    expect(list(read.headers.get('vary'))).toContain('origin')
  })

  it('refuses a list entry that is not an origin, at creation', () => {
    for (const origins of [['https://app.example/path'], ['app.example'], ['https://app.example/'.repeat(2)], [42 as unknown as string]]) {
      expect(() => createGateway({ secret: TEST_SECRET, logger: false, cors: { origins } })).toThrow(/cors/)
    }
  })
})

describe('CORS off', () => {
  let t: TestGateway
  beforeAll(async () => {
    t = await startGateway({ providers: [demo()], cors: false })
  })
  afterAll(() => t?.close())

  it('answers OPTIONS with 405 and adds no CORS header', async () => {
    const pre = await t.request('/api/v1/models', { method: 'OPTIONS', headers: preflightHeaders(APP, 'GET') })
    expect(pre.status).toBe(405)
    expect(pre.headers.get('access-control-allow-origin')).toBeNull()
    const res = await t.request('/api/v1/models', { headers: { origin: APP } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    expect(res.headers.get('access-control-expose-headers')).toBeNull()
  })
})
