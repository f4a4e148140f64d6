import { createHash, randomBytes } from 'node:crypto'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { readSse } from '../helpers/sse'
import { bundleWorker } from '../helpers/worker-bundle'
import { chatThrough } from '../helpers/edge-chat'
import { collectGarbage } from '../helpers/gc'
import { race, servedOfRace } from '../helpers/race'

// A chat below (one user message "hi", max_tokens 10): 8 prompt and 4 completion tokens upstream, 0.00001376 EUR.
const COST = toUnits('0.00001376')
const json = { 'content-type': 'application/json' }

/**
 * The gateway in workerd (docs/edge.md#cloudflare-workers): test/edge/worker.ts bundled with esbuild, run by one
 * Miniflare, its records, counters and holds in the Durable Object; the fake upstream runs here in Node.
 */
describe('Cloudflare Workers: the gateway in workerd with the Durable Object engine', () => {
  let upstream: FakeOpenAI
  let mf: Miniflare
  const call = (path: string, init?: RequestInit) => mf.dispatchFetch(`http://gateway.test${path}`, init as never) as unknown as Promise<Response>
  const customer = async (credits?: string): Promise<{ key: string; user: { id: string; org_id: string } }> =>
    (await call('/test/customer', { method: 'POST', body: JSON.stringify({ credits }) })).json()
  const chat = chatThrough(call)

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: ['sk-up', 'sk-customer-own'], slowMs: 5 })
    const { code } = await bundleWorker('test/edge/worker.ts')
    mf = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.mjs', contents: code }],
      compatibilityDate: '2025-09-01',
      compatibilityFlags: ['nodejs_compat'],
      bindings: { UPSTREAM_URL: upstream.url, SECRET: 'test-secret-test-secret-test-secret-0123' },
      durableObjects: { MODEL_GATEWAY: 'ModelGatewayObject' },
    })
  }, 60_000)
  afterAll(async () => {
    await mf?.dispose()
    await upstream?.close()
  })

  it('the edge entry bundles for a neutral platform with no import left (no node:, no pg)', async () => {
    const { imports } = await bundleWorker('src/edge.ts')
    expect(imports).toEqual([])
  })

  it('serves a chat whole and streamed, billed exactly in the Durable Object', async () => {
    const c = await customer('1')
    const whole = await chat(c.key)
    expect(whole.status).toBe(200)
    const body = await whole.json()
    expect(body.choices[0].message.content).toBe('Hello from gpt-test: hi')
    expect(toUnits(String(body.usage.cost_eur))).toBe(COST)
    const streamed = await chat(c.key, true)
    expect(streamed.status).toBe(200)
    const { events } = await readSse(streamed)
    expect(events.at(-1)).toBe('[DONE]')
    expect(toUnits(String(events.at(-2).usage.cost_eur))).toBe(COST)
    const credits = await (await call(`/test/credits?org=${c.user.org_id}`)).json()
    expect(toUnits(credits.balance)).toBe(toUnits('1') - 2n * COST)
    expect((await (await call(`/test/usage?org=${c.user.org_id}`)).json()).length).toBe(2)
  })

  it('issues a key by PKCE: a code for the calling key, exchanged with its verifier, once', async () => {
    const c = await customer('1')
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const code = await call('/api/v1/auth/keys/code', {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${c.key}` },
      body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: challenge, code_challenge_method: 'S256' }),
    })
    expect(code.status).toBe(200)
    const { code: issued } = await code.json()
    const exchange = () => call('/api/v1/auth/keys', { method: 'POST', headers: json, body: JSON.stringify({ code: issued, code_verifier: verifier }) })
    const answers = await Promise.all([exchange(), exchange()])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 403])
    const key = (await answers.find((a) => a.status === 200)!.json()).key as string
    expect((await chat(key)).status).toBe(200)
  })

  it('BYOK: a provider key saved by the org is sealed in the Durable Object and used for its requests', async () => {
    const c = await customer('1')
    const saved = await call('/api/v1/byok', {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${c.key}` },
      body: JSON.stringify({ provider: 'up', key: 'sk-customer-own' }),
    })
    expect(saved.status).toBe(201)
    const before = upstream.requests.length
    expect((await chat(c.key)).status).toBe(200)
    const sent = upstream.requests.slice(before)
    expect(sent.map((r) => r.headers.authorization)).toEqual(['Bearer sk-customer-own'])
  })

  it('50 racing chats on credits for a few: served within the credits, the rest 402, records equal the charge', async () => {
    const credits = '0.0001'
    const c = await customer(credits)
    const answers = await race(50, (i) => chat(c.key, i % 2 === 1))
    // 0.0001 EUR covers seven requests' cost at most.
    const served = servedOfRace(answers, 7)
    const records = (await (await call(`/test/usage?org=${c.user.org_id}`)).json()) as { cost_eur: string }[]
    expect(records.length).toBe(served)
    const balance = toUnits((await (await call(`/test/credits?org=${c.user.org_id}`)).json()).balance)
    expect(balance).toBe(toUnits(credits) - COST * BigInt(served))
    expect(balance).toBeGreaterThanOrEqual(0n)
  })

  it('racing answers stay readable while garbage is collected every few milliseconds (each read as it arrives)', async () => {
    // Miniflare drops undici's Response of each answer and keeps its body stream, which undici cancels when that
    // Response is collected: answers read only once all came fail here with "Body is unusable" (test/helpers/race.ts).
    const c = await customer('1')
    const collecting = setInterval(collectGarbage(), 10)
    try {
      const answers = await race(10, (i) => chat(c.key, i % 2 === 1))
      expect(servedOfRace(answers, 10)).toBe(10)
    } finally {
      clearInterval(collecting)
    }
  })

  it('two orgs racing at once, 25 chats each on credits for a few: each org billed exactly, neither spending the other’s', async () => {
    const credits = ['0.0001', '0.00005']
    const orgs = await Promise.all(credits.map((c) => customer(c)))
    const answers = await race(50, (i) => chat(orgs[i % 2].key, i % 4 < 2))
    for (const [o, c] of orgs.entries()) {
      // 0.0001 EUR covers seven requests' cost at most, 0.00005 three.
      const served = servedOfRace(
        answers.filter((_, i) => i % 2 === o),
        o === 0 ? 7 : 3,
      )
      expect((await (await call(`/test/usage?org=${c.user.org_id}`)).json()).length).toBe(served)
      const balance = toUnits((await (await call(`/test/credits?org=${c.user.org_id}`)).json()).balance)
      expect(balance).toBe(toUnits(credits[o]) - COST * BigInt(served))
      expect(balance).toBeGreaterThanOrEqual(0n)
    }
  })
})
