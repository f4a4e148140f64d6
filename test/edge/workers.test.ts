import { createHash, randomBytes } from 'node:crypto'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toUnits } from '../../src/billing/money'
import { decodeCall, encodeCall } from '../../src/stores/durable-object-protocol'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { readSse } from '../helpers/sse'
import { bundleWorker } from '../helpers/worker-bundle'
import { chatThrough } from '../helpers/edge-chat'
import { collectGarbage } from '../helpers/gc'
import { race, servedOfRace } from '../helpers/race'

/**
 * The test worker (test/edge/worker.ts) in workerd for the suite it is called in, its Durable Object bound, over a fake
 * upstream taking `apiKey` (`perOrg`: one object per org): started before the suite, stopped after it. Gives a request
 * to the Worker, the upstream, and the keys under `base` in the object named `name`, read from Node straight from that
 * object (one call of its protocol).
 */
function useWorkerd(apiKey: string | string[], perOrg: boolean) {
  let upstream: FakeOpenAI
  let mf: Miniflare
  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey, slowMs: 5 })
    const { code } = await bundleWorker('test/edge/worker.ts')
    mf = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.mjs', contents: code }],
      compatibilityDate: '2025-09-01',
      compatibilityFlags: ['nodejs_compat'],
      bindings: { UPSTREAM_URL: upstream.url, SECRET: 'test-secret-test-secret-test-secret-0123', PER_ORG: perOrg ? '1' : '0' },
      durableObjects: { MODEL_GATEWAY: 'ModelGatewayObject' },
    })
  }, 60_000)
  afterAll(async () => {
    await mf?.dispose()
    await upstream?.close()
  })
  return {
    upstream: () => upstream,
    call: (path: string, init?: RequestInit) => mf.dispatchFetch(`http://gateway.test${path}`, init as never) as unknown as Promise<Response>,
    objectKeys: async (name: string, base: string): Promise<string[]> => {
      const ns = (await mf.getDurableObjectNamespace('MODEL_GATEWAY')) as unknown as {
        idFromName(name: string): unknown
        get(id: unknown): { fetch(url: string, init: { method: string; body: string }): Promise<Response> }
      }
      const res = await ns.get(ns.idFromName(name)).fetch('https://model-gateway.do/', { method: 'POST', body: encodeCall({ op: 'getKeys', args: [base] }) })
      return decodeCall<{ result: string[] }>(await res.text()).result
    },
  }
}

// A chat below (one user message "hi", max_tokens 10): 8 prompt and 4 completion tokens upstream, 0.00001376 EUR.
const COST = toUnits('0.00001376')
const json = { 'content-type': 'application/json' }

type Customer = { key: string; user: { id: string; org_id: string } }

/**
 * The gateway in workerd (docs/edge.md#cloudflare-workers): test/edge/worker.ts bundled with esbuild, run by one
 * Miniflare, its records, counters and holds in the Durable Object (with `perOrg`, one object per org beside the global
 * one: docs/edge.md#one-object-per-org); the fake upstream runs here in Node.
 */
function describeWorkers(perOrg: boolean) {
  const { upstream, call, objectKeys } = useWorkerd(['sk-up', 'sk-customer-own'], perOrg)
  const customer = async (credits?: string, keyLimit?: string): Promise<Customer> =>
    (await call('/test/customer', { method: 'POST', body: JSON.stringify({ credits, keyLimit }) })).json()
  const chat = chatThrough(call)
  const balanceOf = async (c: Customer) => toUnits((await (await call(`/test/credits?org=${c.user.org_id}`)).json()).balance)
  const orgObject = (c: Customer) => `model-gateway:org:${c.user.org_id}`

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
    const before = upstream().requests.length
    expect((await chat(c.key)).status).toBe(200)
    const sent = upstream().requests.slice(before)
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

  it('a key’s spending (GET /api/v1/key), its user’s and the org’s balance read back exactly', async () => {
    const c = await customer('1', '0.5')
    for (const stream of [false, true, false]) {
      const res = await chat(c.key, stream)
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    }
    const key = await call('/api/v1/key', { headers: { authorization: `Bearer ${c.key}` } })
    expect(key.status).toBe(200)
    const { data } = await key.json()
    expect(toUnits(String(data.usage))).toBe(3n * COST)
    expect(toUnits(String(data.usage_daily))).toBe(3n * COST)
    expect(toUnits(String(data.limit_remaining))).toBe(toUnits('0.5') - 3n * COST)
    expect(toUnits(String(data.user_usage))).toBe(3n * COST)
    expect(await balanceOf(c)).toBe(toUnits('1') - 3n * COST)
    if (!perOrg) return
    // The key's and the user's counters live in the org's object (the directory's entries in the global one), not in the global.
    const hash = createHash('sha256').update(c.key).digest('hex')
    expect(await objectKeys(orgObject(c), `gateway:credits:key:${hash}:`)).toContain(`gateway:credits:key:${hash}:used`)
    expect(await objectKeys(orgObject(c), `gateway:credits:user:${c.user.id}:`)).toContain(`gateway:credits:user:${c.user.id}:used`)
    expect(await objectKeys('model-gateway', `gateway:credits:key:${hash}:`)).toEqual([])
    expect(await objectKeys('model-gateway', '$do-route:key:')).toContain(`$do-route:key:${hash}`)
  })

  if (perOrg)
    it('two orgs racing land in two objects: each org’s counters, holds and records in its own, none in the global one', async () => {
      const credits = ['0.0001', '0.00005']
      const orgs = await Promise.all(credits.map((c) => customer(c)))
      const answers = await race(40, (i) => chat(orgs[i % 2].key, i % 4 < 2))
      const served = [0, 0]
      for (const [o, c] of orgs.entries()) {
        served[o] = servedOfRace(
          answers.filter((_, i) => i % 2 === o),
          o === 0 ? 7 : 3,
        )
        expect(await balanceOf(c)).toBe(toUnits(credits[o]) - COST * BigInt(served[o]))
        const other = orgs[1 - o].user.org_id
        const own = await objectKeys(orgObject(c), 'gateway:')
        expect(own).toEqual(expect.arrayContaining([`gateway:credits:${c.user.org_id}:granted`, `gateway:credits:${c.user.org_id}:used`]))
        expect(own.filter((k) => k.startsWith('gateway:usage:')).length).toBe(served[o])
        expect(own.filter((k) => k.includes(other))).toEqual([])
      }
      // The global object lists both orgs' objects, and holds none of their money.
      const listed = await objectKeys('model-gateway', '$do-orgs:')
      expect(listed).toEqual(expect.arrayContaining(orgs.map((c) => `$do-orgs:${c.user.org_id}`)))
      const global = await objectKeys('model-gateway', 'gateway:')
      expect(global.filter((k) => /^gateway:(credits|holds|usage|ledger|generation-ids):/.test(k))).toEqual([])
      // A listing across orgs answers from every object: each org's usage records, all of them.
      const listedUsage = (await (await call('/test/keys?base=gateway:usage')).json()) as string[]
      for (const [o, c] of orgs.entries()) expect(listedUsage.filter((k) => k.startsWith(`gateway:usage:${c.user.org_id}:`)).length).toBe(served[o])
    })
}

it('the edge entry bundles for a neutral platform with no import left (no node:, no pg)', async () => {
  const { imports } = await bundleWorker('src/edge.ts')
  expect(imports).toEqual([])
})

describe('Cloudflare Workers: the gateway in workerd with the Durable Object engine', () => describeWorkers(false))
describe('Cloudflare Workers: the gateway in workerd with one Durable Object per org', () => describeWorkers(true))

/**
 * A gateway that ran with one Durable Object moved to one object per org (docs/edge.md#moving-a-deployment-to-one-object-per-org):
 * the one-object gateway serves two orgs, `migrateToPerOrg` runs in the Worker, and the per-org gateway over the same
 * objects (the Worker's `/per-org/` paths) reads every balance, key's spending and usage record as before, and bills
 * the next chat exactly.
 */
describe('Cloudflare Workers: a one-object deployment moved to one object per org (migrateToPerOrg)', () => {
  const { call, objectKeys } = useWorkerd('sk-up', false)
  const perOrgCall = (path: string, init?: RequestInit) => call(`/per-org${path}`, init)
  // What a gateway answers of an org's money: its credits, its key's spending (GET /api/v1/key), its usage records.
  const snapshot = async (through: typeof call, c: Customer) => {
    const credits = await (await through(`/test/credits?org=${c.user.org_id}`)).json()
    const key = (await (await through('/api/v1/key', { headers: { authorization: `Bearer ${c.key}` } })).json()).data
    const records = ((await (await through(`/test/usage?org=${c.user.org_id}`)).json()) as { id: string }[]).sort((x, y) => x.id.localeCompare(y.id))
    return { credits, key: { usage: key.usage, limit_remaining: key.limit_remaining, user_usage: key.user_usage }, records }
  }

  it('moves every org’s money into its object: balances, key spending and usage records read back exactly, the next chat billed exactly', async () => {
    const customer = async (credits: string, keyLimit: string): Promise<Customer> =>
      (await call('/test/customer', { method: 'POST', body: JSON.stringify({ credits, keyLimit }) })).json()
    const orgs = [await customer('1', '0.5'), await customer('0.25', '0.1')]
    const chat = chatThrough(call)
    for (const c of orgs)
      for (const stream of [false, true, false]) {
        const res = await chat(c.key, stream)
        expect(res.status).toBe(200)
      }
    const before = await Promise.all(orgs.map((c) => snapshot(call, c)))
    for (const [o, c] of orgs.entries()) {
      expect(toUnits(before[o].credits.balance)).toBe(toUnits(['1', '0.25'][o]) - 3n * COST)
      expect(toUnits(String(before[o].key.usage))).toBe(3n * COST)
      expect(before[o].records.length).toBe(3)
      expect(await objectKeys(`model-gateway:org:${c.user.org_id}`, '')).toEqual([])
    }

    const moved = await (await call('/test/migrate', { method: 'POST' })).json()
    // Two orgs' objects; a directory entry for each org's key and user (their counters named only the hash, the id).
    expect(moved).toMatchObject({ orgs: 2, directory: 4 })
    expect(moved.moved).toBeGreaterThan(0)
    // Again: nothing left to move (safe to run twice).
    expect(await (await call('/test/migrate', { method: 'POST' })).json()).toEqual({ ...moved, moved: 0, orgs: 0, directory: 0 })

    // The per-org gateway reads exactly what the one-object gateway answered.
    expect(await Promise.all(orgs.map((c) => snapshot(perOrgCall, c)))).toEqual(before)
    for (const c of orgs) {
      const own = await objectKeys(`model-gateway:org:${c.user.org_id}`, 'gateway:')
      expect(own).toEqual(expect.arrayContaining([`gateway:credits:${c.user.org_id}:granted`, `gateway:credits:${c.user.org_id}:used`]))
      expect(own.filter((k) => k.startsWith(`gateway:usage:${c.user.org_id}:`)).length).toBe(3)
      const hash = createHash('sha256').update(c.key).digest('hex')
      expect(own).toContain(`gateway:credits:key:${hash}:used`)
      expect(own).toContain(`gateway:credits:user:${c.user.id}:used`)
    }
    const global = await objectKeys('model-gateway', 'gateway:')
    expect(global.filter((k) => /^gateway:(credits|holds|usage|ledger|generation-ids):/.test(k))).toEqual([])
    expect(global).toEqual(expect.arrayContaining(orgs.map((c) => `gateway:keys:${createHash('sha256').update(c.key).digest('hex')}`)))

    // A further chat per org, served and billed by the per-org gateway in the org's object.
    const perOrgChat = chatThrough(perOrgCall)
    for (const [o, c] of orgs.entries()) {
      const res = await perOrgChat(c.key, o === 1)
      expect(res.status).toBe(200)
      const after = await snapshot(perOrgCall, c)
      expect(toUnits(after.credits.balance)).toBe(toUnits(before[o].credits.balance) - COST)
      expect(toUnits(String(after.key.usage))).toBe(4n * COST)
      expect(toUnits(String(after.key.user_usage))).toBe(4n * COST)
      expect(after.records.length).toBe(4)
      expect((await objectKeys(`model-gateway:org:${c.user.org_id}`, `gateway:usage:${c.user.org_id}:`)).length).toBe(4)
    }
  })
})
