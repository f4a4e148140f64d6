// model-gateway/nuxt on Nitro's `cloudflare-module` preset (docs/edge.md#nuxt-on-cloudflare): the Nuxt fixture built
// for Cloudflare (test/fixtures/nuxt-cloudflare.ts, the fixture's own install), its .output served in workerd by one
// Miniflare with the Durable Object bound, in front of the fake OpenAI upstream here in Node. Not in `npm test` (the
// build takes about a minute): `npm run test:edge-nuxt`.
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toUnits } from '../../src/billing/money'
import { createGateway, durableObjectStorage, type DurableObjectNamespaceLike, type Gateway, openaiCompatible } from '../../src/edge'
import { SLOW_ECHO_DELAY_MS, SLOW_ECHO_MODEL } from '../adapters/contract-providers'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { type CloudflareBuild, buildCloudflareFixture } from '../fixtures/nuxt-cloudflare'
import { FIXTURE_SECRET } from '../fixtures/nuxt-fixture'
import { readSse } from '../helpers/sse'
import { chatThrough } from '../helpers/edge-chat'
import { race, servedOfRace } from '../helpers/race'

// A chat below (one user message "hi", max_tokens 10): 8 prompt and 4 completion tokens upstream, 0.00001376 EUR.
const COST = toUnits('0.00001376')
const json = { 'content-type': 'application/json' }

describe('model-gateway/nuxt built with NITRO_PRESET=cloudflare-module, served in workerd', () => {
  let upstream: FakeOpenAI
  let built: CloudflareBuild
  let mf: Miniflare
  // The same gateway in Node, over the same Durable Object (its records, counters and holds), with the same secret: as
  // a host's own script would create customers.
  let nodeGateway: Gateway
  let admin: Gateway['admin']
  // What the Worker printed (its console, through workerd's stdout and stderr).
  let output = ''
  const call = (path: string, init?: RequestInit) => mf.dispatchFetch(`http://app.test${path}`, init as never) as unknown as Promise<Response>
  const customer = async (credits: string) => {
    const user = await admin.createUser({ email: `user-${crypto.randomUUID()}@example.com` })
    await admin.addCredits(user.org_id, credits)
    const { key } = await admin.issueKey({ userId: user.id, label: 'cloudflare' })
    return { key, orgId: user.org_id }
  }
  const chat = chatThrough(call)

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: ['sk-up', 'sk-customer-own'], slowMs: 5 })
    built = await buildCloudflareFixture()
    const worker = {
      modules: built.modules.map(({ type, path, contents }) => ({ type, path, contents })),
      // As docs/edge.md's wrangler.toml (Nitro writes none unless deployConfig is set).
      compatibilityDate: '2025-09-01',
      compatibilityFlags: ['nodejs_compat'],
      bindings: { NUXT_MODEL_GATEWAY_SECRET: FIXTURE_SECRET, MG_FIXTURE_UPSTREAM: upstream.url },
    }
    mf = new Miniflare({
      workers: [
        { name: 'app', ...worker, durableObjects: { MODEL_GATEWAY: 'ModelGatewayObject' } },
        // The same Worker deployed without its binding.
        { name: 'unbound', ...worker },
      ],
      handleRuntimeStdio(stdout, stderr) {
        for (const stream of [stdout, stderr]) stream.on('data', (data: Buffer) => (output += data.toString()))
      },
    })
    await mf.ready
    const namespace = (await mf.getDurableObjectNamespace('MODEL_GATEWAY', 'app')) as unknown as DurableObjectNamespaceLike
    const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
    nodeGateway = createGateway({
      secret: FIXTURE_SECRET,
      logger: false,
      storage: durableObjectStorage(namespace),
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up',
          baseURL: upstream.url,
          apiKey: 'sk-up',
          byokSupported: true,
          models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing }],
        }),
      ],
    })
    admin = nodeGateway.admin
  }, 10 * 60_000)
  afterAll(async () => {
    await nodeGateway?.close()
    await mf?.dispose()
    await upstream?.close()
  })

  it('builds a Worker whose main module exports the Durable Object class', () => {
    expect(built.modules[0].path).toBe('index.mjs')
    expect(new TextDecoder().decode(built.modules[0].contents)).toMatch(/export\s*\{[^}]*\bModelGatewayObject\b[^}]*\}/)
  })

  it('says at build time that nitroStorage is not used on Cloudflare (the fixture sets it for Node)', () => {
    // consola's fancy reporter prints `WARN` and drops the message's backticks; its basic one (under CI, no TTY)
    // prints `[warn]` and keeps them.
    expect(built.buildOutput).toMatch(
      /(?:WARN|\[warn\]) .*on Nitro's cloudflare-module preset the gateway's records and money are in the Durable Object bound as MODEL_GATEWAY: `?modelGateway\.nitroStorage`? is not used/,
    )
  })

  it('streams: the slow model’s chunks arrive as they are made, not buffered by Nitro or workerd', async () => {
    const res = await call('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${(await customer('1')).key}` },
      body: JSON.stringify({ model: SLOW_ECHO_MODEL, stream: true, messages: [{ role: 'user', content: 'one two three four five' }] }),
    })
    expect(res.status).toBe(200)
    const arrivals: number[] = []
    const started = Date.now()
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) if (bytes.length) arrivals.push(Date.now() - started)
    // Chunks SLOW_ECHO_DELAY_MS (150 ms) apart: a buffered answer would arrive at once, at the end.
    expect(arrivals.length).toBeGreaterThanOrEqual(3)
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThanOrEqual(3 * SLOW_ECHO_DELAY_MS)
  })

  it('serves a chat whole and streamed from the fake upstream, billed exactly in the Durable Object', async () => {
    const c = await customer('1')
    const whole = await chat(c.key)
    expect(whole.status).toBe(200)
    const body = await whole.json()
    expect(body.choices[0].message.content).toBe('Hello from gpt-test: hi')
    expect(toUnits(String(body.usage.cost_eur))).toBe(COST)
    const streamed = await chat(c.key, true)
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const { events } = await readSse(streamed)
    expect(events.at(-1)).toBe('[DONE]')
    expect(
      events
        .slice(0, -2)
        .map((event) => event.choices[0]?.delta?.content ?? '')
        .join(''),
    ).toBe('Hello from gpt-test: hi')
    expect(toUnits(String(events.at(-2).usage.cost_eur))).toBe(COST)
    expect(upstream.requests.filter((request) => request.path === '/v1/chat/completions').length).toBeGreaterThanOrEqual(2)
    const credits = await admin.getCredits(c.orgId)
    expect(toUnits(credits.balance)).toBe(toUnits('1') - 2n * COST)
    // The app's gateway logs through Nitro's consola: the requests, and no random secret (the env's was taken).
    expect(output).toContain('"path":"/api/v1/chat/completions"')
    expect(output).not.toMatch(/no secret given/)
  })

  it('BYOK: a provider key sealed by the Node instance is opened in the Worker (the same secret, from its env) and used upstream', async () => {
    const c = await customer('1')
    const saved = await nodeGateway.fetch(
      new Request('http://node.test/api/v1/byok', {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${c.key}` },
        body: JSON.stringify({ provider: 'up', key: 'sk-customer-own' }),
      }),
    )
    expect(saved.status).toBe(201)
    const before = upstream.requests.length
    expect((await chat(c.key)).status).toBe(200)
    expect(upstream.requests.slice(before).map((request) => request.headers.authorization)).toEqual(['Bearer sk-customer-own'])
  })

  it('the app’s own route answers through the in-process client of its signed-in user (useGatewayClient, session cookie)', async () => {
    const ask = await call('/api/host/ask', {
      method: 'POST',
      headers: { ...json, cookie: `host_user=cf-${crypto.randomUUID()}` },
      body: JSON.stringify({ text: 'from the edge' }),
    })
    expect(ask.status).toBe(200)
    const answer = await ask.json()
    expect(answer.choices[0].message.content).toBe('Echo: from the edge')
    expect(answer.usage.cost).toBeGreaterThan(0)
  })

  it('refuses a request without a key, and a key the object does not know, with the gateway’s envelope', async () => {
    const none = await call('/api/v1/chat/completions', { method: 'POST', headers: json, body: '{}' })
    expect(none.status).toBe(401)
    expect((await none.json()).error.code).toBe(401)
    expect((await chat('sk-mg-not-a-key')).status).toBe(401)
  })

  it('without the Durable Object bound, the API answers the error envelope naming the binding to add', async () => {
    const unbound = (await mf.getWorker('unbound')) as unknown as { fetch(url: string): Promise<Response> }
    const res = await unbound.fetch('http://app.test/api/v1/models')
    expect(res.status).toBe(500)
    const { error } = await res.json()
    expect(error.message).toContain('env.MODEL_GATEWAY is not a Durable Object binding')
    expect(error.message).toContain('ModelGatewayObject')
  })

  it('30 racing chats on credits for a few: served within the credits, the rest 402, the balance exact', async () => {
    const credits = '0.0001'
    const c = await customer(credits)
    const answers = await race(30, (i) => chat(c.key, i % 2 === 1))
    // 0.0001 EUR covers seven requests' cost at most.
    const served = servedOfRace(answers, 7)
    const balance = toUnits((await admin.getCredits(c.orgId)).balance)
    expect(balance).toBe(toUnits(credits) - COST * BigInt(served))
    expect(balance).toBeGreaterThanOrEqual(0n)
  })
})
