import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const verifier = () => randomBytes(32).toString('base64url') // 43 characters of [A-Za-z0-9-_]
const s256 = (v: string) => createHash('sha256').update(v).digest('base64url')
const json = { 'content-type': 'application/json' }
const form = { 'content-type': 'application/x-www-form-urlencoded' }

describe('key issuance by PKCE', () => {
  let t: TestGateway
  let now = Date.parse('2026-11-25T10:00:00.000Z')
  let customer: Awaited<ReturnType<typeof createCustomer>>
  beforeAll(async () => {
    t = await startGateway({
      clock: () => now,
      auth: {
        // The host's session: here, a header the tests set.
        resolveUser: (event) => event.req.headers.get('x-test-user'),
        signInUrl: '/sign-in',
      },
    })
    customer = await createCustomer(t.gateway, { credits: '1' })
  })
  afterAll(() => t.close())

  const signedIn = () => ({ 'x-test-user': customer.user.id })
  const get = (path: string, headers: Record<string, string> = {}) => t.request(path, { headers, redirect: 'manual' })
  const exchange = (code: string, code_verifier: string) =>
    t.request('/api/v1/auth/keys', { method: 'POST', headers: json, body: JSON.stringify({ code, code_verifier }) })
  const authUrl = (params: Record<string, string>) => `/api/v1/auth?${new URLSearchParams(params)}`

  /** Walks GET /auth → consent page → approve or deny, as a signed-in browser would; returns the final redirect. */
  async function browserFlow(params: Record<string, string>, decision: 'approve' | 'deny' = 'approve') {
    const begin = await get(authUrl(params), signedIn())
    expect(begin.status).toBe(302)
    const consentPath = begin.headers.get('location')!
    expect(consentPath).toMatch(/^\/api\/v1\/auth\/consent\?request=/)
    const page = await get(consentPath, signedIn())
    expect(page.status).toBe(200)
    const html = await page.text()
    const request = /name="request" value="([^"]+)"/.exec(html)![1]
    const answer = await t.request('/api/v1/auth/consent', {
      method: 'POST',
      redirect: 'manual',
      headers: { ...form, ...signedIn(), origin: t.url },
      body: new URLSearchParams({ request, decision }).toString(),
    })
    return { answer, html, request }
  }

  it('sends someone who is not signed in to the host’s sign-in page with a return address', async () => {
    const url = authUrl({ callback_url: 'https://app.example/cb', code_challenge: s256(verifier()) })
    const res = await get(url)
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!, t.url)
    expect(location.pathname).toBe('/sign-in')
    expect(location.searchParams.get('return_to')).toBe(`${t.url}${url}`)
  })

  it('issues a working key through the browser flow with S256, echoing state and keeping the callback’s query', async () => {
    const v = verifier()
    const { answer, html } = await browserFlow({
      callback_url: 'https://app.example/cb?tab=keys',
      code_challenge: s256(v),
      state: 'xyz 123',
      response_type: 'code',
      client_id: 'my-app',
      redirect_uri: 'https://app.example/cb?tab=keys',
    })
    expect(html).toContain('Allow <span class="app">https://app.example</span> to use your account?')
    expect(html).toContain(customer.user.email)
    expect(answer.status).toBe(302)
    const callback = new URL(answer.headers.get('location')!)
    expect(callback.origin + callback.pathname).toBe('https://app.example/cb')
    expect(callback.searchParams.get('tab')).toBe('keys')
    expect(callback.searchParams.get('state')).toBe('xyz 123')
    const code = callback.searchParams.get('code')!
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const res = await exchange(code, v)
    expect(res.status).toBe(200)
    const issued = await res.json()
    expect(issued).toEqual({ key: expect.stringMatching(/^sk-service-v1-[0-9a-f]{64}$/), user_id: customer.user.id })
    const me = await t.request('/api/v1/me', { headers: { authorization: `Bearer ${issued.key}` } })
    expect((await me.json()).user_id).toBe(customer.user.id)
    const keys = await t.gateway.admin.listKeys(customer.user.id)
    expect(keys.map((k) => k.label)).toContain('App https://app.example')
  })

  it('redirects with error=access_denied and state when the user denies', async () => {
    const { answer } = await browserFlow({ callback_url: 'http://localhost:5173/cb', code_challenge: s256(verifier()), state: 's1' }, 'deny')
    const callback = new URL(answer.headers.get('location')!)
    expect(Object.fromEntries(callback.searchParams)).toEqual({ error: 'access_denied', state: 's1' })
  })

  it('refuses a replayed, tampered, foreign or cross-site consent answer', async () => {
    const { request } = await browserFlow({ callback_url: 'https://app.example/cb', code_challenge: s256(verifier()) })
    const post = (body: Record<string, string>, headers: Record<string, string> = { ...signedIn(), origin: t.url }) =>
      t.request('/api/v1/auth/consent', { method: 'POST', redirect: 'manual', headers: { ...form, ...headers }, body: new URLSearchParams(body).toString() })
    const replayed = await post({ request, decision: 'approve' })
    expect(replayed.status).toBe(409)
    const [header, payload, signature] = request.split('.')
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = Buffer.from(JSON.stringify({ ...claims, cb: 'https://evil.example/cb', jti: 'new' })).toString('base64url')
    const tampered = await post({ request: `${header}.${forged}.${signature}`, decision: 'approve' })
    expect(tampered.status).toBe(400)
    expect((await tampered.json()).error.param).toBe('request')

    const other = await createCustomer(t.gateway)
    const { request: unanswered } = await (async () => {
      const begin = await get(authUrl({ callback_url: 'https://app.example/cb', code_challenge: s256(verifier()) }), signedIn())
      const html = await (await get(begin.headers.get('location')!, signedIn())).text()
      return { request: /name="request" value="([^"]+)"/.exec(html)![1] }
    })()
    expect((await post({ request: unanswered, decision: 'approve' }, { 'x-test-user': other.user.id, origin: t.url })).status).toBe(403)
    expect((await post({ request: unanswered, decision: 'approve' }, { ...signedIn(), origin: 'https://evil.example' })).status).toBe(403)
    expect((await post({ request: unanswered, decision: 'approve' }, { ...signedIn(), 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await post({ request: unanswered, decision: 'maybe' })).status).toBe(400)
    // An expired consent request is refused; before expiry, after all those refusals, the rightful answer goes through once.
    now += 10 * 60 * 1000 + 1000
    expect((await post({ request: unanswered, decision: 'approve' })).status).toBe(400)
    now -= 10 * 60 * 1000 + 1000
    expect((await post({ request: unanswered, decision: 'approve' })).status).toBe(302)
  })

  it("creates codes programmatically for the calling key (200, with OpenRouter's data), exchangeable with plain and S256", async () => {
    const appIds = new Set<number>()
    for (const route of ['/api/v1/auth/keys/code', '/api/v1/auth/keys/authorize']) {
      for (const method of ['S256', 'plain'] as const) {
        const v = verifier()
        const res = await t.request(route, {
          method: 'POST',
          headers: { ...json, ...customer.auth },
          body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: method === 'S256' ? s256(v) : v, code_challenge_method: method }),
        })
        expect(res.status, `${route} ${method}`).toBe(200)
        const body = await res.json()
        const createdAt = new Date(now).toISOString()
        expect(body).toEqual({
          code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          created_at: createdAt,
          data: { id: body.code, app_id: expect.any(Number), created_at: createdAt },
        })
        expect(Number.isSafeInteger(body.data.app_id) && body.data.app_id > 0).toBe(true)
        appIds.add(body.data.app_id)
        // The exchange may name the method again (as OpenRouter's SDK does).
        const issued = await t.request('/api/v1/auth/keys', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ code: body.code, code_verifier: v, code_challenge_method: method }),
        })
        expect(issued.status, `${route} ${method}`).toBe(200)
        expect((await issued.json()).user_id).toBe(customer.user.id)
      }
    }
    // app_id is derived from the callback origin: the same for every code of one app, another for another app.
    expect(appIds.size).toBe(1)
    const other = await t.request('/api/v1/auth/keys/code', {
      method: 'POST',
      headers: { ...json, ...customer.auth },
      body: JSON.stringify({ callback_url: 'https://other.example/cb', code_challenge: s256(verifier()) }),
    })
    expect(appIds.has((await other.json()).data.app_id)).toBe(false)
  })

  it("refuses an exchange naming another method than the code's with the same 403, and spends the code", async () => {
    const v = verifier()
    const { code } = await (
      await t.request('/api/v1/auth/keys/code', {
        method: 'POST',
        headers: { ...json, ...customer.auth },
        body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: s256(v) }),
      })
    ).json()
    const refused = await t.request('/api/v1/auth/keys', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code, code_verifier: v, code_challenge_method: 'plain' }),
    })
    expect(refused.status).toBe(403)
    expect((await exchange(code, v)).status).toBe(403)
    const bad = await t.request('/api/v1/auth/keys', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code, code_verifier: v, code_challenge_method: 'S512' }),
    })
    expect((await bad.json()).error.param).toBe('code_challenge_method')
  })

  it("takes OpenRouter's key_label, limit, expires_at (null: none) and usage_limit_type; the key is minted with them", async () => {
    const v = verifier()
    const res = await t.request('/api/v1/auth/keys/code', {
      method: 'POST',
      headers: { ...json, ...customer.auth },
      body: JSON.stringify({
        callback_url: 'https://app.example/cb',
        code_challenge: s256(v),
        key_label: 'nightly job',
        limit: 0.5,
        expires_at: null,
        usage_limit_type: 'daily',
      }),
    })
    expect(res.status).toBe(200)
    const issued = await exchange((await res.json()).code, v)
    expect(issued.status).toBe(200)
    const { key } = await issued.json()
    const record = (await t.gateway.admin.listKeys(customer.user.id)).find((k) => k.label === 'nightly job')!
    expect(record).toMatchObject({ credit_limit: '0.5', limit_reset: 'daily', expires_at: null })
    expect(key).toMatch(/^sk-service-v1-/)
    const wrong = await t.request('/api/v1/auth/keys/code', {
      method: 'POST',
      headers: { ...json, ...customer.auth },
      body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: s256(v), usage_limit_type: 'hourly' }),
    })
    expect((await wrong.json()).error.param).toBe('usage_limit_type')
  })

  it("shows the limit an app asks for in the browser flow (as OpenRouter's SDK sends it) and issues the key with it", async () => {
    const v = verifier()
    const { answer, html } = await browserFlow({ callback_url: 'https://limited.example/cb', code_challenge: s256(v), limit: '3.50' })
    expect(html).toContain('The key can spend at most <strong>3.5 EUR</strong>.')
    const code = new URL(answer.headers.get('location')!).searchParams.get('code')!
    expect((await exchange(code, v)).status).toBe(200)
    const key = (await t.gateway.admin.listKeys(customer.user.id)).find((k) => k.label === 'App https://limited.example')!
    expect(key.credit_limit).toBe('3.5')
    for (const limit of ['0', '-1', 'lots']) {
      const res = await get(authUrl({ callback_url: 'https://limited.example/cb', code_challenge: s256(v), limit }), signedIn())
      expect([res.status, (await res.json()).error.param], limit).toEqual([400, 'limit'])
    }
  })

  it("begins the browser flow at the site root too, where OpenRouter's SDK sends people (<origin>/auth)", async () => {
    const params = { callback_url: 'https://app.example/cb', code_challenge: s256(verifier()), code_challenge_method: 'S256', limit: '3' }
    const atRoot = await get(`/auth?${new URLSearchParams(params)}`, signedIn())
    expect(atRoot.status).toBe(302)
    expect(atRoot.headers.get('location')).toMatch(/^\/api\/v1\/auth\/consent\?request=/)
    const signIn = await get(`/auth?${new URLSearchParams(params)}`)
    expect(new URL(signIn.headers.get('location')!, t.url).searchParams.get('return_to')).toBe(`${t.url}/auth?${new URLSearchParams(params)}`)
    expect((await get(`/auth?callback_url=javascript%3Aalert(1)&code_challenge=${'c'.repeat(43)}`, signedIn())).status).toBe(400)
    const post = await t.request('/auth', { method: 'POST' })
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
    // A host that mounts the gateway's handlers one by one mounts this one at /auth.
    expect(t.gateway.handlers.beginAuthorization).toBeTypeOf('function')
  })

  it('answers one 403 for a wrong verifier, a reused, an expired or an unknown code, and issues no key', async () => {
    const create = async (v: string) =>
      (
        await (
          await t.request('/api/v1/auth/keys/code', {
            method: 'POST',
            headers: { ...json, ...customer.auth },
            body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: s256(v) }),
          })
        ).json()
      ).code as string
    const keysBefore = (await t.gateway.admin.listKeys(customer.user.id)).length
    const messages = new Set<string>()
    const refuse = async (res: Response) => {
      expect(res.status).toBe(403)
      const body = await res.json()
      expect(body.error.type).toBe('forbidden')
      messages.add(body.error.message)
    }
    const v1 = verifier()
    const wrong = await create(v1)
    await refuse(await exchange(wrong, verifier()))
    await refuse(await exchange(wrong, v1)) // a refused attempt spends the code

    const v2 = verifier()
    const reused = await create(v2)
    expect((await exchange(reused, v2)).status).toBe(200)
    await refuse(await exchange(reused, v2))

    const v3 = verifier()
    const expired = await create(v3)
    now += 10 * 60 * 1000 + 1
    await refuse(await exchange(expired, v3))
    now -= 10 * 60 * 1000 + 1

    await refuse(await exchange(randomBytes(32).toString('base64url'), verifier()))
    expect(messages.size).toBe(1)
    expect((await t.gateway.admin.listKeys(customer.user.id)).length).toBe(keysBefore + 1)
  })

  it('gives exactly one key when two exchanges of one code race', async () => {
    const v = verifier()
    const { code } = await (
      await t.request('/api/v1/auth/keys/code', {
        method: 'POST',
        headers: { ...json, ...customer.auth },
        body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: s256(v) }),
      })
    ).json()
    const results = await Promise.all(Array.from({ length: 10 }, () => exchange(code, v)))
    expect(results.map((r) => r.status).sort()).toEqual([200, 403, 403, 403, 403, 403, 403, 403, 403, 403])
  })

  it('rejects every unsafe callback_url and a redirect_uri that differs, with 400', async () => {
    const challenge = s256(verifier())
    const bad = [
      '/relative/path',
      'javascript:alert(1)',
      'data:text/html,hi',
      'ftp://app.example/cb',
      'http://app.example/cb',
      'https://user:pass@app.example/cb',
      'https://app.example/cb#frag',
      'not a url',
      'http://localhost.evil.example/cb',
    ]
    for (const callback_url of bad) {
      const res = await get(authUrl({ callback_url, code_challenge: challenge }), signedIn())
      expect(res.status, callback_url).toBe(400)
      expect((await res.json()).error.param, callback_url).toBe('callback_url')
      const programmatic = await t.request('/api/v1/auth/keys/code', {
        method: 'POST',
        headers: { ...json, ...customer.auth },
        body: JSON.stringify({ callback_url, code_challenge: challenge }),
      })
      expect(programmatic.status, callback_url).toBe(400)
    }
    for (const good of ['http://localhost:3000/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb']) {
      expect((await get(authUrl({ callback_url: good, code_challenge: challenge }), signedIn())).status, good).toBe(302)
    }
    const mismatch = await get(
      authUrl({ callback_url: 'https://app.example/cb', redirect_uri: 'https://app.example/other', code_challenge: challenge }),
      signedIn(),
    )
    expect(mismatch.status).toBe(400)
    expect((await mismatch.json()).error.param).toBe('redirect_uri')
    const badMethod = await get(authUrl({ callback_url: 'https://app.example/cb', code_challenge: challenge, code_challenge_method: 'S512' }))
    expect(badMethod.status).toBe(400)
    const badType = await get(authUrl({ callback_url: 'https://app.example/cb', code_challenge: challenge, response_type: 'token' }))
    expect(badType.status).toBe(400)
  })

  it('keeps callbacks to the allowed origins when an allow-list is set', async () => {
    const strict = await startGateway({
      auth: { resolveUser: () => null, signInUrl: 'https://host.example/login', allowedCallbackOrigins: ['https://good.example'] },
    })
    try {
      const challenge = s256(verifier())
      const bad = await strict.request(`/api/v1/auth?${new URLSearchParams({ callback_url: 'https://other.example/cb', code_challenge: challenge })}`, {
        redirect: 'manual',
      })
      expect(bad.status).toBe(400)
      const good = await strict.request(`/api/v1/auth?${new URLSearchParams({ callback_url: 'https://good.example/cb', code_challenge: challenge })}`, {
        redirect: 'manual',
      })
      expect(good.status).toBe(302)
      expect(good.headers.get('location')).toMatch(/^https:\/\/host\.example\/login\?return_to=/)
    } finally {
      await strict.close()
    }
  })
})
