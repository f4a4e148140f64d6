import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GatewayError, openaiCompatible, type SessionOptions } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { userUsage } from '../../src/billing/spend-limits'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
// The chat below ("hi", max_tokens 10): 8 prompt tokens and 4 completion tokens upstream, 0.00001376 EUR.
const COST = toUnits('0.00001376')
const RACERS = 50
const messages = [{ role: 'user', content: 'hi' }]

// The host's session: a cookie `host_user=<id>`.
const session: SessionOptions = {
  user: (event) => /(?:^|;\s*)host_user=([\w-]+)/.exec(event.req.headers.get('cookie') ?? '')?.[1] ?? null,
  onNewUser: () => ({ credits: '5' }),
}

/**
 * 50 racing calls of one signed-in user, half over HTTP with its session cookie and half through the in-process
 * client, spread over two gateway instances sharing one storage (docs/first-party.md): the user's credit limit holds
 * (never passed by more than one request's estimation error, here none: the fake reports its usage), and the usage
 * records, the org's credits and the user's counters reconcile exactly, with no hold left.
 */
function describeRaces(name: string, makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway
  const options = () => ({
    storage: kind.open(),
    session,
    requestTimeoutMs: 30_000,
    providers: [
      openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing }] }),
    ],
  })

  beforeAll(async () => {
    kind = makeKind()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    a = await startGateway(options())
    b = await startGateway(options())
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await upstream?.close()
    await kind?.cleanup()
  })

  // One call as the user: over HTTP with its cookie, or in process, on one instance; its status once read to the end.
  const call = async (g: TestGateway, hostUser: string, inProcess: boolean, stream: boolean): Promise<number> => {
    const body = { model: 'fake/gpt-test', max_tokens: 10, messages, ...(stream ? { stream: true } : {}) }
    if (inProcess) {
      try {
        const answer = await g.gateway.client({ user: hostUser }).chat.completions.create(body)
        if (stream) for await (const _chunk of answer as AsyncIterable<unknown>);
        return 200
      } catch (error) {
        if (error instanceof GatewayError) return error.status
        throw error
      }
    }
    const res = await g.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...json, cookie: `host_user=${hostUser}` },
      body: JSON.stringify(body),
    })
    if (res.status === 200) await (stream ? readSse(res) : res.json())
    else await res.json()
    return res.status
  }

  it(`${name}: HTTP and in-process calls of one user on two instances stay within its credit limit and reconcile exactly`, async () => {
    const hostUser = `racer-${name}-${Date.now()}`
    // Created on first use, at once by both instances: one user, one grant.
    const [first, second] = await Promise.all([a.gateway.client({ user: hostUser }).identity(), b.gateway.client({ user: hostUser }).identity()])
    expect(second.user_id).toBe(first.user_id)
    const limit = COST * 10n
    await a.gateway.admin.setUserLimits(first.user_id, { credit_limit: '0.0001376', limit_reset: 'daily' })

    // The other instance sees the change within its authentication cache's epoch poll (docs/keys.md#the-authentication-cache).
    await expect.poll(async () => (await b.gateway.context.sessions.ofHostUser(hostUser)).user.credit_limit, { timeout: 5000 }).toBe('0.0001376')
    // Request i: instance i % 2, in process when ⌊i / 2⌋ is odd, streamed every third time.
    const statuses = await Promise.all(Array.from({ length: RACERS }, (_, i) => call(i % 2 ? b : a, hostUser, Math.floor(i / 2) % 2 === 1, i % 3 === 0)))
    const served = statuses.filter((s) => s === 200).length
    expect(served + statuses.filter((s) => s === 402).length).toBe(RACERS)
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served).toBeLessThan(10)

    // Then one at a time, alternating paths and instances, until the limit refuses: never past it.
    let more = served
    while ((await call(more % 2 ? b : a, hostUser, more % 4 >= 2, false)) === 200) more++

    const ctx = a.gateway.context
    const principal = await ctx.sessions.ofHostUser(hostUser)
    const records = await ctx.usage.list(first.org_id)
    expect(records.length).toBe(more)
    expect(records.every((r) => toUnits(r.cost_eur) === COST && r.user_id === first.user_id && r.via === 'session')).toBe(true)
    const recorded = COST * BigInt(more)
    expect(recorded).toBeLessThanOrEqual(limit)
    expect(limit - recorded).toBeLessThan(COST * 2n) // spent down to less than one request's hold
    expect(toUnits((await a.gateway.admin.getCredits(first.org_id)).total_usage)).toBe(recorded)
    expect(toUnits((await a.gateway.admin.getCredits(first.org_id)).total_credits)).toBe(toUnits('5'))
    const used = await userUsage(ctx, principal.user, ctx.now())
    expect([used.usage, used.usage_daily]).toEqual([recorded, recorded])
    for (const budget of budgetsOf(ctx, principal, ctx.now()).budgets) expect(await ctx.holds.held(budget, ctx.now())).toBe(0n)
  })
}

describe('first-party races: memory (two instances on one storage)', () => describeRaces('memory', memoryKind))
describe.skipIf(!process.env.REDIS_URL)('first-party races: redis (REDIS_URL; two instances)', () =>
  describeRaces('redis', () => redisKind(process.env.REDIS_URL!)),
)
describe.skipIf(!process.env.DATABASE_URL)('first-party races: postgres (DATABASE_URL; two instances)', () =>
  describeRaces('postgres', () => postgresKind(process.env.DATABASE_URL!)),
)
