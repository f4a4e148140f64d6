import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const json = { 'content-type': 'application/json' }

describe('errors', () => {
  let t: TestGateway
  let auth: Record<string, string>
  beforeAll(async () => {
    t = await startGateway({ bodyLimits: { chat: 64 * 1024 } })
    auth = (await createCustomer(t.gateway, { credits: '5' })).auth
  })
  afterAll(() => t.close())

  const expectEnvelope = async (res: Response, status: number, type: string, message?: RegExp, param?: string) => {
    expect(res.status).toBe(status)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]+$/)
    const body = await res.json()
    expect(body.error.code).toBe(status)
    expect(body.error.type).toBe(type)
    if (message) expect(body.error.message).toMatch(message)
    expect(body.error.param).toBe(param)
    expect(JSON.stringify(body)).not.toMatch(/\bat .*\.ts:\d+/)
    return body
  }

  it('answers 404 for an unknown route, inside and outside the base path', async () => {
    await expectEnvelope(await t.request('/api/v1/nothing-here'), 404, 'not_found', /No route for GET \/api\/v1\/nothing-here/)
    await expectEnvelope(await t.request('/', { method: 'POST' }), 404, 'not_found')
    await expectEnvelope(await t.request('/api/v2/me', { headers: auth }), 404, 'not_found')
  })

  it('answers 405 with Allow for a known path and another method', async () => {
    const res = await t.request('/api/v1/me', { method: 'DELETE', headers: auth })
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    await expectEnvelope(res, 405, 'method_not_allowed', /DELETE is not allowed/)
    const byok = await t.request('/api/v1/byok/00000000-0000-0000-0000-000000000000', { method: 'PUT', headers: auth })
    expect(byok.headers.get('allow')).toBe('GET, PATCH, DELETE, HEAD')
    expect(byok.status).toBe(405)
  })

  it('answers 400 for invalid JSON, naming no field', async () => {
    await expectEnvelope(
      await t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json }, body: '{"model": "x",' }),
      400,
      'invalid_request',
      /not valid JSON/,
    )
  })

  it('answers 400 for failed validation, naming the field and never echoing the value', async () => {
    const post = (body: unknown) => t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify(body) })
    await expectEnvelope(await post({ model: 'a/b', messages: [] }), 400, 'invalid_request', /^messages: must not be empty$/, 'messages')
    await expectEnvelope(await post({ model: 'a/b' }), 400, 'invalid_request', /^messages: is required$/, 'messages')
    await expectEnvelope(
      await post({ model: 'a/b', messages: [{ role: 'wizard', content: 'hi' }] }),
      400,
      'invalid_request',
      /^messages\.0\.role: expected/,
      'messages.0.role',
    )
    await expectEnvelope(await post({ model: 42, messages: [{ role: 'user', content: 'hi' }] }), 400, 'invalid_request', /^model: expected string$/, 'model')
    await expectEnvelope(
      await post({ model: 'a/b', messages: [{ role: 'user', content: 'hi' }], temperature: 7 }),
      400,
      'invalid_request',
      /^temperature: must be <=2$/,
      'temperature',
    )
    await expectEnvelope(await post(['not', 'an', 'object']), 400, 'invalid_request', /^body: expected a JSON object$/)
    await expectEnvelope(
      await t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json } }),
      400,
      'invalid_request',
      /^body: a JSON object is required$/,
    )
    const secret = 'sk-live-SECRET-VALUE-123456'
    const res = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...auth, ...json },
      body: JSON.stringify({ key: secret, provider: 'openai', colour: secret }),
    })
    const body = await expectEnvelope(res, 400, 'invalid_request', /^colour: is not a known field$/, 'colour')
    expect(JSON.stringify(body)).not.toContain(secret)
  })

  it('validates query and path parameters with the limits of docs/limits.md', async () => {
    await expectEnvelope(await t.request('/api/v1/byok?limit=101', { headers: auth }), 400, 'invalid_request', /^limit: must be at most 100$/, 'limit')
    await expectEnvelope(await t.request('/api/v1/byok?limit=0', { headers: auth }), 400, 'invalid_request', /^limit: must be at least 1$/, 'limit')
    await expectEnvelope(await t.request('/api/v1/byok?offset=-1', { headers: auth }), 400, 'invalid_request', /^offset: must be at least 0$/, 'offset')
    await expectEnvelope(await t.request('/api/v1/byok?offset=1.5', { headers: auth }), 400, 'invalid_request', /^offset: must be an integer$/, 'offset')
    await expectEnvelope(
      await t.request('/api/v1/byok?offset=9007199254740992', { headers: auth }),
      400,
      'invalid_request',
      /^offset: must be at most 9007199254740991$/,
      'offset',
    )
    await expectEnvelope(await t.request('/api/v1/byok/not-a-uuid', { headers: auth }), 400, 'invalid_request', /^id: must be a UUID$/, 'id')
    await expectEnvelope(await t.request('/api/v1/byok/123e4567-e89b-02d3-a456-426614174000', { headers: auth }), 400, 'invalid_request', /UUID/, 'id')
    await expectEnvelope(
      await t.request('/api/v1/auth?callback_url=https://app.example&code_challenge=short'),
      400,
      'invalid_request',
      /^code_challenge: must have at least 43 characters$/,
      'code_challenge',
    )
    await expectEnvelope(await t.request('/api/v1/models?use_rss=maybe'), 400, 'invalid_request', /^use_rss: expected/, 'use_rss')
  })

  it('answers 413 beyond the body limit, by Content-Length or by streamed size', async () => {
    const big = JSON.stringify({ model: 'a/b', messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }] })
    await expectEnvelope(
      await t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json }, body: big }),
      413,
      'payload_too_large',
      /larger than 65536 bytes/,
    )
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      },
    })
    const chunked = await t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, ...json }, body: stream, duplex: 'half' } as RequestInit)
    await expectEnvelope(chunked, 413, 'payload_too_large')
    const other = JSON.stringify({ callback_url: 'https://a.example', code_challenge: 'x'.repeat(1024 * 1024) })
    await expectEnvelope(
      await t.request('/api/v1/auth/keys/code', { method: 'POST', headers: { ...auth, ...json }, body: other }),
      413,
      'payload_too_large',
      /1048576/,
    )
  })

  it('answers 415 for a body that is not JSON', async () => {
    await expectEnvelope(
      await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'model=x',
      }),
      415,
      'unsupported_media_type',
    )
  })

  it('answers the audio routes after auth and validation: 401 without a key, 400 naming the field, 404 for a model it lacks', async () => {
    const valid = JSON.stringify({ model: 'openai/tts-1', input: 'Hello' })
    await expectEnvelope(
      await t.request('/api/v1/audio/speech', { method: 'POST', headers: { ...auth, ...json }, body: valid }),
      404,
      'not_found',
      /Model openai\/tts-1 is not available/,
      'model',
    )
    expect((await t.request('/api/v1/audio/speech', { method: 'POST', headers: json, body: valid })).status).toBe(401)
    await expectEnvelope(
      await t.request('/api/v1/audio/speech', { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify({ model: 'x' }) }),
      400,
      'invalid_request',
      /^input: is required$/,
      'input',
    )
  })

  it('echoes a valid X-Request-Id and replaces an invalid one', async () => {
    const echoed = await t.request('/api/v1/me', { headers: { ...auth, 'x-request-id': 'client-123.abc' } })
    expect(echoed.headers.get('x-request-id')).toBe('client-123.abc')
    const replaced = await t.request('/api/v1/me', { headers: { ...auth, 'x-request-id': 'bad id <script>' } })
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/)
    const error = await t.request('/api/v1/nope', { headers: { 'x-request-id': 'trace-42' } })
    expect(error.headers.get('x-request-id')).toBe('trace-42')
  })
})

describe('unexpected failures', () => {
  it('answer 500 internal_error with the request id, log the cause and reveal nothing', async () => {
    const logged: { message: string; fields?: Record<string, unknown> }[] = []
    const t = await startGateway({
      // A host's own code that fails in a way the gateway cannot know.
      auth: {
        resolveUser: () => {
          throw new Error('disk on fire at /var/secret/path')
        },
      },
      logger: { debug() {}, info() {}, warn() {}, error: (message, fields) => logged.push({ message, fields }) },
    })
    try {
      const query = new URLSearchParams({ callback_url: 'https://app.example/cb', code_challenge: 'a'.repeat(43) })
      const res = await t.request(`/api/v1/auth?${query}`, { headers: { 'x-request-id': 'r-500' }, redirect: 'manual' })
      expect(res.status).toBe(500)
      const body = await res.json()
      // The gateway's own id names the request in the body and the log; the client's is echoed and logged beside it.
      const id = body.error.metadata.request_id
      expect(id).toMatch(/^req_[0-9a-f]{24}$/)
      expect(res.headers.get('x-request-id')).toBe('r-500')
      expect(body).toEqual({ error: { code: 500, type: 'internal_error', message: `Internal error (request ${id})`, metadata: { request_id: id } } })
      expect(logged).toHaveLength(1)
      expect(logged[0].message).toBe('GET /api/v1/auth failed')
      expect(logged[0].fields).toMatchObject({ request_id: id, client_request_id: 'r-500', status: 500 })
      expect(String(logged[0].fields?.error)).toContain('disk on fire')
    } finally {
      await t.close()
    }
  })

  it("a storage that fails answers the storage's 503, logs its error as the cause and reveals nothing of it", async () => {
    const logged: { message: string; fields?: Record<string, unknown> }[] = []
    const broken = defineDriver(() => {
      const memory = memoryDriver()
      return { ...memory, name: 'broken', getItem: () => Promise.reject(new Error('disk on fire at /var/secret/path')) }
    })
    const t = await startGateway({
      storage: createStorage({ driver: broken() }),
      atomic: 'local', // a test driver that only this process uses
      logger: { debug() {}, info() {}, warn() {}, error: (message, fields) => logged.push({ message, fields }) },
    })
    try {
      const res = await t.request('/api/v1/me', { headers: { authorization: `Bearer sk-service-v1-${'a'.repeat(64)}` } })
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('5')
      const text = await res.text()
      expect(JSON.parse(text)).toEqual({
        error: {
          code: 503,
          type: 'no_provider_available',
          message: "The gateway's storage (the broken driver) failed to answer: try again shortly",
          metadata: { error_type: 'storage_unavailable', storage: 'broken' },
        },
      })
      expect(text).not.toContain('secret')
      expect(logged).toHaveLength(1)
      expect(logged[0].fields).toMatchObject({ status: 503 })
      expect(String(logged[0].fields?.error)).toContain('disk on fire')
    } finally {
      await t.close()
    }
  })
})
