import { getEventListeners } from 'node:events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { createGateway, GatewayError, openaiCompatible, type Gateway, type SessionOptions } from '../../src/index'
import { serve } from '../../adapters/node'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, TEST_SECRET } from '../helpers/server'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'EUR' }
const json = { 'content-type': 'application/json' }

// The host's sessions: a cookie `sid=<token>` names a signed-in host user.
const sessionsByToken: Record<string, { id: string; email?: string }> = {
  'tok-alice': { id: 'host-alice', email: 'alice@host.example' },
  'tok-bob': { id: 'host-bob' },
}
const cookieUser = (cookie: string | null) => {
  const token = /(?:^|;\s*)sid=([^;]+)/.exec(cookie ?? '')?.[1]
  return token ? (sessionsByToken[token] ?? null) : null
}
const placed: string[] = []
const session = (orgId?: () => string): SessionOptions => ({
  user: (event) => cookieUser(event.req.headers.get('cookie')),
  onNewUser: (user) => {
    placed.push(user.id)
    return orgId ? { orgId: orgId() } : { orgName: `team of ${user.id}`, credits: '2' }
  },
  trustedOrigins: ['https://trusted.example'],
})

describe('first-party mode: session principals over HTTP and the in-process client', () => {
  let upstream: FakeOpenAI
  let gateway: Gateway
  let url: string
  let close: () => Promise<void>
  const chat = (headers: Record<string, string>, body: Record<string, unknown> = {}) =>
    fetch(`${url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { ...json, ...headers },
      body: JSON.stringify({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'hi there' }], ...body }),
    })

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    gateway = createGateway({
      secret: TEST_SECRET,
      logger: false,
      drainTimeoutMs: 1000,
      session: session(),
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up',
          baseURL: upstream.url,
          apiKey: 'sk-up',
          models: [
            { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing },
            { id: 'fake/slow', upstreamId: 'slow', pricing },
            { id: 'fake/fail', upstreamId: 'fail-400', pricing },
          ],
        }),
      ],
    })
    const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
    url = server.url
    close = () => server.close()
  })
  afterAll(async () => {
    await close()
    await upstream.close()
  })

  it('a signed-in user chats without a key: created on first use in its own org with its grant, billed to it', async () => {
    const response = await chat({ cookie: 'sid=tok-alice' })
    expect(response.status).toBe(200)
    const completion = await response.json()
    expect(completion.choices[0].message.content).toBe('Hello from gpt-test: hi there')
    const me = await (await fetch(`${url}/api/v1/me`, { headers: { cookie: 'sid=tok-alice' } })).json()
    expect(me.email).toBe('alice@host.example')
    expect(me.org_name).toBe('team of host-alice')
    const user = await gateway.admin.getUser(me.user_id)
    expect(user?.host_id).toBe('host-alice')
    // Granted 2 EUR, charged the request's exact cost (7 prompt tokens at the fake's count… read from the usage).
    const cost = completion.usage.cost
    expect(cost).toBeGreaterThan(0)
    expect(me.credits.total_credits).toBe('2')
    expect(Number(me.credits.total_usage)).toBeCloseTo(cost, 12)
    const records = await gateway.admin.usage(me.org_id)
    expect(records.map((r) => [r.user_id, r.key_hash])).toEqual([[me.user_id, `session-${me.user_id}`]])
    // GET /generation with the same session shows the request.
    const generation = await fetch(`${url}/api/v1/generation?id=${completion.id}`, { headers: { cookie: 'sid=tok-alice' } })
    expect(generation.status).toBe(200)
    expect((await generation.json()).data.id).toBe(completion.id)
    expect(placed.filter((id) => id === 'host-alice')).toEqual(['host-alice'])
  })

  it('a host user without an email is known by its host id; each user has its own org', async () => {
    const me = await (await fetch(`${url}/api/v1/me`, { headers: { cookie: 'sid=tok-bob' } })).json()
    expect(me.email).toBe('')
    expect(me.org_name).toBe('team of host-bob')
    const alice = await (await fetch(`${url}/api/v1/me`, { headers: { cookie: 'sid=tok-alice' } })).json()
    expect(me.org_id).not.toBe(alice.org_id)
  })

  it('refuses a forged cross-site POST, and lets the site itself, trusted origins and non-browsers through', async () => {
    const forged = await chat({ cookie: 'sid=tok-alice', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
    expect(forged.status).toBe(403)
    const envelope = await forged.json()
    expect(envelope.error.message).toContain('Cross-site request refused')
    expect(envelope.error.metadata.reason).toBe('cross_site_session_request')
    // An older browser without Fetch Metadata: its Origin decides.
    expect((await chat({ cookie: 'sid=tok-alice', origin: 'https://evil.example' })).status).toBe(403)
    expect((await chat({ cookie: 'sid=tok-alice', 'sec-fetch-site': 'same-site', origin: 'https://sub.host.example' })).status).toBe(403)
    expect((await chat({ cookie: 'sid=tok-alice', origin: 'null' })).status).toBe(403)
    expect((await chat({ cookie: 'sid=tok-alice', 'sec-fetch-site': 'same-origin', origin: url })).status).toBe(200)
    expect((await chat({ cookie: 'sid=tok-alice', origin: url })).status).toBe(200)
    expect((await chat({ cookie: 'sid=tok-alice', 'sec-fetch-site': 'cross-site', origin: 'https://trusted.example' })).status).toBe(200)
    expect((await chat({ cookie: 'sid=tok-alice' })).status).toBe(200)
    // A cross-site GET changes nothing: it reads.
    expect(
      (await fetch(`${url}/api/v1/me`, { headers: { cookie: 'sid=tok-alice', 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } })).status,
    ).toBe(200)
  })

  it('CORS: a trusted origin gets credentials under its own name, never with *; any other origin gets * without them', async () => {
    const preflight = await fetch(`${url}/api/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://trusted.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://trusted.example')
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true')
    expect(preflight.headers.get('vary')).toContain('Origin')
    const trusted = await chat({ cookie: 'sid=tok-alice', origin: 'https://trusted.example', 'sec-fetch-site': 'cross-site' })
    expect(trusted.headers.get('access-control-allow-origin')).toBe('https://trusted.example')
    expect(trusted.headers.get('access-control-allow-credentials')).toBe('true')
    const other = await fetch(`${url}/api/v1/models`, { headers: { origin: 'https://other.example' } })
    expect(other.headers.get('access-control-allow-origin')).toBe('*')
    expect(other.headers.get('access-control-allow-credentials')).toBeNull()
    expect(other.headers.get('vary')).toContain('Origin')
  })

  it('a key, when sent, wins over the session; without either the request is a 401; key management takes no session', async () => {
    const customer = await createCustomer(gateway, { credits: '1' })
    const response = await chat({ cookie: 'sid=tok-alice', ...customer.auth })
    expect(response.status).toBe(200)
    const me = await (await fetch(`${url}/api/v1/me`, { headers: { cookie: 'sid=tok-alice', ...customer.auth } })).json()
    expect(me.user_id).toBe(customer.user.id)
    expect((await gateway.admin.usage(customer.user.org_id)).length).toBe(1)
    expect((await chat({})).status).toBe(401)
    expect((await chat({ cookie: 'sid=unknown-token' })).status).toBe(401)
    expect((await fetch(`${url}/api/v1/keys`, { headers: { cookie: 'sid=tok-alice' } })).status).toBe(401)
    // A bad key is not rescued by the session.
    expect((await chat({ cookie: 'sid=tok-alice', authorization: 'Bearer sk-nope' })).status).toBe(401)
  })

  it('GET /key answers for a session with its session key', async () => {
    const key = await (await fetch(`${url}/api/v1/key`, { headers: { cookie: 'sid=tok-alice' } })).json()
    expect(key.data.label).toBe('session')
    expect(key.data.limit).toBeNull()
    expect(key.data.is_management_key).toBe(false)
  })

  it('in process: a whole chat completion for a host user, billed exactly as over HTTP', async () => {
    const client = gateway.client({ user: { id: 'host-carol', email: 'carol@host.example' } })
    const completion = await client.chat.completions.create({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'hi there' }] })
    expect(completion.object).toBe('chat.completion')
    expect(completion.choices[0].message.content).toBe('Hello from gpt-test: hi there')
    expect(completion.id).toMatch(/^gen-/)
    const identity = await client.identity()
    expect(identity.via).toBe('session')
    expect(identity.email).toBe('carol@host.example')
    const records = await gateway.admin.usage(identity.org_id)
    expect(records.length).toBe(1)
    expect(records[0].id).toBe(completion.id)
    // The same usage object as the HTTP answer: plain numbers, the cost exactly what the record charged.
    expect(typeof completion.usage.cost).toBe('number')
    const credits = await gateway.admin.getCredits(identity.org_id)
    expect(Number(credits.total_usage)).toBe(completion.usage.cost)
    expect(completion.usage.prompt_tokens).toBe(records[0].prompt_tokens)
  })

  it('in process: a stream of chunk objects ends with the usage chunk; its id is the generation id', async () => {
    const client = gateway.client({ user: 'host-dave' })
    const stream = await client.chat.completions.create({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'one two three' }], stream: true })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')
    expect(text).toBe('Hello from gpt-test: one two three')
    const last = chunks.at(-1)!
    expect(last.choices).toEqual([])
    expect(typeof last.usage?.cost).toBe('number')
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
    const identity = await client.identity()
    const records = await gateway.admin.usage(identity.org_id)
    expect(records.map((r) => [r.id, r.stream])).toEqual([[chunks[0].id, true]])
  })

  it('in process: leaving the loop or aborting stops the upstream call and bills what was generated', async () => {
    const client = gateway.client({ user: 'host-erin' })
    const stream = await client.chat.completions.create({ model: 'fake/slow', messages: [{ role: 'user', content: 'a b c d e f g h' }], stream: true })
    let seen = 0
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) seen++
      if (seen === 2) break
    }
    const identity = await client.identity()
    await expect.poll(async () => (await gateway.admin.usage(identity.org_id)).length, { timeout: 5000 }).toBe(1)
    const [record] = await gateway.admin.usage(identity.org_id)
    expect(record.status).toBe('cancelled')
    expect(record.completion_tokens).toBeGreaterThan(0)
    expect(gateway.context.inFlight.size).toBe(0)

    // An AbortSignal aborts a whole call: it rejects, and its hold is released (nothing stays held).
    const controller = new AbortController()
    const pending = client.chat.completions.create({ model: 'fake/slow', messages: [{ role: 'user', content: 'x' }] }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    await expect(pending).rejects.toBeInstanceOf(GatewayError)
    const orgBudget = gateway.context.holds.orgBudget(identity.org_id)
    await expect.poll(() => gateway.context.holds.held(orgBudget, Date.now()), { timeout: 5000 }).toBe(0n)
    expect((await gateway.admin.usage(identity.org_id)).length).toBe(1) // no answer came: nothing charged
  })

  it('in process: one long-lived signal passed to many calls keeps no listener once they ended', async () => {
    const client = gateway.client({ user: 'host-gina' })
    const shared = new AbortController()
    const body = { model: 'fake/gpt-test', messages: [{ role: 'user', content: 'x' }] }
    for (let i = 0; i < 5; i++) await client.chat.completions.create(body, { signal: shared.signal })
    for (let i = 0; i < 3; i++) for await (const _chunk of await client.chat.completions.create({ ...body, stream: true }, { signal: shared.signal }));
    await client.chat.completions.create({ ...body, model: 'no/such-model' }, { signal: shared.signal }).catch(() => undefined)
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0)
  })

  it('in process: errors are the gateway typed error: validation 400, unknown model, upstream failure, unknown user', async () => {
    const client = gateway.client({ user: 'host-alice' })
    const invalid = await client.chat.completions.create({ model: 'fake/gpt-test', messages: 'nope' as never }).catch((e) => e)
    expect(invalid).toBeInstanceOf(GatewayError)
    expect(invalid.status).toBe(400)
    const unknown = await client.chat.completions.create({ model: 'no/such-model', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)
    expect(unknown.status).toBe(404)
    const failed = await client.chat.completions.create({ model: 'fake/fail', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)
    expect(failed).toBeInstanceOf(GatewayError)
    expect(failed.status).toBe(400)
    const nobody = await gateway
      .client({ userId: 'no-such-user' })
      .chat.completions.create({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e)
    expect(nobody.status).toBe(404)
    const badKey = await gateway
      .client({ key: 'sk-nope' })
      .embeddings.create({ model: 'x', input: 'y' })
      .catch((e) => e)
    expect(badKey.status).toBe(401)
  })

  it('in process with a key, and for a request (its session, or its key)', async () => {
    const customer = await createCustomer(gateway, { credits: '1' })
    const viaKey = await gateway.client({ key: customer.key }).chat.completions.create({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'k' }] })
    expect(viaKey.choices[0].message.content).toBe('Hello from gpt-test: k')
    expect((await gateway.admin.usage(customer.user.org_id)).length).toBe(1)
    // The request's `user` names its end user, as over HTTP: kept on the record; too long a one is the route's 400.
    await gateway.client({ key: customer.key }).chat.completions.create({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'e' }], user: 'end-7' })
    const records = await gateway.admin.usage(customer.user.org_id)
    expect(records.map((r) => r.end_user ?? null).sort()).toEqual(['end-7', null])
    const tooLong = await gateway
      .client({ key: customer.key })
      .embeddings.create({ model: 'x/y', input: 'e', user: 'u'.repeat(257) })
      .catch((e) => e)
    expect([tooLong.status, tooLong.param ?? tooLong.metadata?.param]).toEqual([400, 'user'])
    const request = new Request('http://host.example/anything', { headers: { cookie: 'sid=tok-bob' } })
    const identity = await gateway.client({ request }).identity()
    const bob = await (await fetch(`${url}/api/v1/me`, { headers: { cookie: 'sid=tok-bob' } })).json()
    expect(identity.user_id).toBe(bob.user_id)
    const anonymous = await gateway
      .client({ request: new Request('http://host.example/') })
      .identity()
      .catch((e) => e)
    expect(anonymous.status).toBe(401)
  })

  it('in process: Messages, Responses and embeddings, whole and streamed', async () => {
    const client = gateway.client({ user: 'host-frank' })
    const message: any = await client.messages.create({ model: 'fake/gpt-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi there' }] })
    expect(message.type).toBe('message')
    expect((message.content as { text: string }[])[0].text).toBe('Hello from gpt-test: hi there')
    const events = []
    for await (const event of await client.messages.create({
      model: 'fake/gpt-test',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    }))
      events.push(event.type)
    expect(events[0]).toBe('message_start')
    expect(events.at(-1)).toBe('message_stop')
    const response: any = await client.responses.create({ model: 'fake/gpt-test', input: 'hi there', store: false })
    expect(response.object).toBe('response')
    expect(response.output_text ?? JSON.stringify(response.output)).toContain('Hello from gpt-test: hi there')
    const types = []
    for await (const event of await client.responses.create({ model: 'fake/gpt-test', input: 'hi', stream: true, store: false })) types.push(event.type)
    expect(types[0]).toBe('response.created')
    expect(types.at(-1)).toBe('response.completed')
    const identity = await client.identity()
    expect((await gateway.admin.usage(identity.org_id)).length).toBe(4)
  })

  it('a host user seen by two instances at once is created once, with one grant', async () => {
    const storage = createStorage()
    const make = () => createGateway({ secret: TEST_SECRET, logger: false, storage, session: session(), providers: gateway.context.options.providers })
    const [a, b] = [make(), make()]
    try {
      const identities = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).client({ user: { id: 'host-racer' } }).identity()))
      expect(new Set(identities.map((i) => i.user_id)).size).toBe(1)
      expect(new Set(identities.map((i) => i.org_id)).size).toBe(1)
      expect((await a.admin.getCredits(identities[0].org_id)).total_credits).toBe('2')
      expect(placed.filter((id) => id === 'host-racer')).toEqual(['host-racer'])
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })
})
