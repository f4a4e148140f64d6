/**
 * When the Redis under the gateway fails (docs/operations.md#when-the-storage-fails), over real HTTP, with a TCP proxy
 * between the gateway and Redis that injects the faults: a reply lost after Redis ran the hold or the settlement (the
 * client library sends the command again on its new connection). Each case ends with balance = Σ usage = Σ ledger,
 * exactly one usage record per served request, and no hold left.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { budgetsOf } from '../../src/billing/holds'
import { HOLD_SCRIPTS } from '../../src/stores/holds-redis'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy'
import { fakeUpProvider } from '../helpers/providers'
import { expectReconciled } from '../helpers/outage'

const REDIS_URL = process.env.REDIS_URL
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
// What only the hold's and the settlement's commands carry: the script's text (EVAL, the first time a server sees it)
// or its SHA-1 (EVALSHA, every other time: docs/operations.md#several-instances).
const markersOf = (script: string, text: string) => {
  if (!script.includes(text)) throw new Error(`the script no longer says ${text}`)
  return [text, createHash('sha1').update(script).digest('hex')]
}
const PLACE_SCRIPT = markersOf(HOLD_SCRIPTS.place, "redis.call('HSET', holds, id, placed[i][2])")
const SETTLE_SCRIPT = markersOf(HOLD_SCRIPTS.settle, "redis.call('HDEL', holds, id)")

describe.skipIf(!REDIS_URL)('Redis replies lost mid-command (REDIS_URL, through a TCP proxy)', () => {
  let proxy: TcpProxy
  let upstream: FakeOpenAI
  let t: TestGateway
  const base = `mg-faults-${process.pid}-${Math.random().toString(36).slice(2, 8)}`

  beforeAll(async () => {
    const target = new URL(REDIS_URL!)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) })
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    const storage = createStorage({ driver: redisDriver({ url: `redis://127.0.0.1:${proxy.port}`, base }) })
    t = await startGateway({
      storage,
      providers: [fakeUpProvider(upstream, pricing)],
    })
  })
  afterAll(async () => {
    await t?.gateway.internals.storage.clear().catch(() => undefined)
    await t?.close()
    await upstream?.close()
    await proxy?.close()
  })

  const chat = (customer: { auth: Record<string, string> }, stream: boolean) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'fake/gpt-test', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
    })

  for (const stream of [false, true]) {
    it(`${stream ? 'a stream' : 'a whole request'} whose client left during a storage stall is never sent upstream, nor billed`, async () => {
      const customer = await createCustomer(t.gateway, { credits: '5' })
      // The key is read once (and cached), so that the stall catches the request at its hold.
      const warm = await t.request('/api/v1/credits', { headers: customer.auth })
      expect(warm.status).toBe(200)
      await warm.json()
      const sent = upstream.requests.length
      const client = new AbortController()
      proxy.stalled = true
      const res = t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        body: JSON.stringify({ model: 'fake/gpt-test', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
        signal: client.signal,
      })
      await new Promise((resolve) => setTimeout(resolve, 300))
      client.abort()
      await expect(res).rejects.toThrow()
      await new Promise((resolve) => setTimeout(resolve, 100))
      proxy.stalled = false
      // The hold lands once the stall ends, then is released: no provider call, no charge.
      const principal = (await t.gateway.admin.findUserByKey(customer.key))!
      const orgBudget = budgetsOf(t.gateway.context, principal).budgets[0]
      await new Promise((resolve) => setTimeout(resolve, 1000))
      await expect.poll(() => t.gateway.context.holds.held(orgBudget, Date.now()), { timeout: 5000 }).toBe(0n)
      expect(upstream.requests.length).toBe(sent)
      expect(await t.gateway.admin.usage(customer.user.org_id)).toEqual([])
      expect((await t.gateway.admin.getCredits(customer.user.org_id)).total_usage).toBe('0')
    })

    it(`${stream ? 'a stream' : 'a whole request'}: the settlement's reply is lost and the command sent again: charged once`, async () => {
      const customer = await createCustomer(t.gateway, { credits: '5' })
      const lost = proxy.loseReplyTo(SETTLE_SCRIPT)
      const res = await chat(customer, stream)
      expect(res.status).toBe(200)
      if (stream) await readSse(res)
      else await res.json()
      await lost
      // The resent command has run by the time the settlement's promise settled; give the new connection a moment.
      await expect.poll(async () => (await t.gateway.admin.usage(customer.user.org_id)).length, { timeout: 5000 }).toBe(1)
      await expectReconciled(t.gateway, customer, 1)
    })

    it(`${stream ? 'a stream' : 'a whole request'}: the hold's reply is lost and the command sent again: served, charged once, nothing left held`, async () => {
      // Credits for one hold and a half (the hold: 14 prompt tokens × 0.00000086 + 50 completion tokens × 0.00000172
      // = 0.00009804 EUR): a command sent again that counted its own hold as another request's would be refused.
      const customer = await createCustomer(t.gateway, { credits: '0.00015' })
      const lost = proxy.loseReplyTo(PLACE_SCRIPT)
      const res = await chat(customer, stream)
      await lost
      expect(res.status).toBe(200)
      if (stream) await readSse(res)
      else await res.json()
      await expectReconciled(t.gateway, customer, 1)
      // The org's next request is served as usual.
      const next = await chat(customer, false)
      expect(next.status).toBe(200)
      await next.json()
      await expectReconciled(t.gateway, customer, 2)
    })
  }
})
