import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromUnits, toUnits } from '../../src/billing/money'
import type { Gateway } from '../../src/index'
import { CUSTOMER_KEY, startByokPair, type ByokPair } from '../helpers/byok-pair'
import { fsKind, memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

type Failure = 'before' | 'after'

/**
 * Makes the charge step of a gateway's settlement fail as planned, one plan entry per call: `before` throws without
 * running it (storage unreachable), `after` runs it and then throws (the reply lost). Covers the claim-and-charge
 * operation and, for the org's used-credits counter, a plain addUnits. Returns the restore function.
 */
function failCharges(gateway: Gateway, orgId: string, plan: Failure[]): () => void {
  const atomic = gateway.internals.atomic
  const original = { claimAndAddUnits: atomic.claimAndAddUnits, addUnits: atomic.addUnits }
  const usedKey = gateway.internals.kv.key('credits', orgId, 'used')
  const failing = async <T>(run: () => Promise<T>): Promise<T> => {
    const mode = plan.shift()
    if (mode === 'before') throw new Error('injected: storage unavailable')
    const result = await run()
    if (mode === 'after') throw new Error('injected: reply lost')
    return result
  }
  atomic.claimAndAddUnits = (claimKey, claim, counterKey, delta) => failing(() => original.claimAndAddUnits(claimKey, claim, counterKey, delta))
  atomic.addUnits = (key, delta) => (key === usedKey ? failing(() => original.addUnits(key, delta)) : original.addUnits(key, delta))
  return () => Object.assign(atomic, original)
}

/** Settlement charges each BYOK fee exactly once (docs/byok.md), through storage failures and two instances settling at once. */
function describeSettlement(makeKind: () => StorageKind, engine: 'local' | 'shared') {
  let kind: StorageKind
  let pair: ByokPair
  beforeAll(async () => {
    kind = makeKind()
    pair = await startByokPair(kind, { freeRequestAllowance: 0 }) // every request owes a fee
  })
  afterAll(async () => {
    await pair.close()
    await kind.cleanup()
  })

  const gateways = () => pair.instances.map((t) => t.gateway) as [Gateway, Gateway]
  /** A customer with a BYOK credential and `requests` BYOK chat requests, alternately on both instances. */
  const customerWithFees = async (requests: number) => {
    const c = await pair.customer()
    expect((await pair.byok(0, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha', always_use: true })).status).toBe(201)
    await chats(c.auth, requests)
    return c
  }
  const chats = async (auth: Record<string, string>, requests: number) => {
    for (let i = 0; i < requests; i++) {
      const { status, body } = await pair.chat(i, auth)
      expect([status, body.usage.is_byok]).toEqual([200, true])
    }
  }
  /** The BYOK figures on both instances (they agree), checked to reconcile with each other and with the credits charged. */
  const reconciled = async (c: Awaited<ReturnType<typeof customerWithFees>>) => {
    const [first, second] = await Promise.all([0, 1].map(async (i) => (await (await pair.byok(i, c.auth, 'GET', '/usage')).json()).data))
    expect(second).toEqual(first)
    const u = first
    expect(u.settled_requests + u.pending_settlement_requests).toBe(u.successful_requests)
    expect(fromUnits(toUnits(u.service_platform_fee_charged_eur) + toUnits(u.service_platform_fee_pending_eur))).toBe(u.service_platform_fee_eur)
    // What the figures call charged is exactly what the credits were charged, and what the ledger says.
    const [a] = gateways()
    expect((await a.admin.getCredits(c.user.org_id)).total_usage).toBe(u.service_platform_fee_charged_eur)
    const ledger = (await a.admin.ledger(c.user.org_id)).filter((e) => e.note === 'BYOK platform fees')
    expect(fromUnits(ledger.reduce((sum, e) => sum + toUnits(e.amount), 0n))).toBe(u.service_platform_fee_charged_eur)
    return u
  }

  it('a settlement stopped by failed charge steps, then retried on both instances at once, charges every fee once', async () => {
    const c = await customerWithFees(6)
    const [a, b] = gateways()
    const before = await reconciled(c)
    expect(before).toMatchObject({ successful_requests: 6, settled_requests: 0, pending_settlement_requests: 6, service_platform_fee_charged_eur: '0' })
    expect(toUnits(before.service_platform_fee_eur)).toBeGreaterThan(0n)

    // The first charge step runs but its reply is lost; the second never runs: the settlement stops there.
    const restore = failCharges(a, c.user.org_id, ['after', 'before'])
    try {
      await expect(a.admin.settleByokFees(c.user.org_id)).rejects.toThrow('injected: storage unavailable')
    } finally {
      restore()
    }
    const stopped = await reconciled(c)
    expect(stopped).toMatchObject({ settled_requests: 1, pending_settlement_requests: 5 })

    const retried = await Promise.all([a.admin.settleByokFees(c.user.org_id), b.admin.settleByokFees(), a.admin.settleByokFees(c.user.org_id)])
    expect(retried.reduce((n, r) => n + r.settled_requests, 0)).toBe(5)
    const after = await reconciled(c)
    expect(after).toMatchObject({
      settled_requests: 6,
      pending_settlement_requests: 0,
      service_platform_fee_pending_eur: '0',
      service_platform_fee_charged_eur: before.service_platform_fee_eur,
    })
    expect(await b.admin.settleByokFees(c.user.org_id)).toEqual({ settled_requests: 0, charged_eur: '0' })
    await reconciled(c)
  })

  it('two instances settling at once while both fail now and then still charge every fee once', async () => {
    const c = await customerWithFees(8)
    const [a, b] = gateways()
    const fee = (await reconciled(c)).service_platform_fee_eur
    const restores = [failCharges(a, c.user.org_id, ['after', 'before']), failCharges(b, c.user.org_id, ['before', 'after', 'after'])]
    try {
      await Promise.allSettled([
        a.admin.settleByokFees(c.user.org_id),
        b.admin.settleByokFees(c.user.org_id),
        a.admin.settleByokFees(),
        b.admin.settleByokFees(),
      ])
    } finally {
      for (const restore of restores) restore()
    }
    await reconciled(c)
    await Promise.all([a.admin.settleByokFees(c.user.org_id), b.admin.settleByokFees(c.user.org_id)])
    expect(await reconciled(c)).toMatchObject({ settled_requests: 8, pending_settlement_requests: 0, service_platform_fee_charged_eur: fee })
  })

  it('a request whose free allowance cannot be counted (storage failing) is served, recorded within the allowance, and owes no fee', async () => {
    const c = await pair.customer()
    expect((await pair.byok(0, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha', always_use: true })).status).toBe(201)
    const [a] = gateways()
    const atomic = a.internals.atomic
    const increment = atomic.increment
    atomic.increment = (key, ...rest) => (key.includes('byok-requests') ? Promise.reject(new Error('injected: storage down')) : increment(key, ...rest))
    let answer: { status: number; body: any }
    try {
      answer = await pair.chat(0, c.auth)
    } finally {
      atomic.increment = increment
    }
    expect(answer.status).toBe(200)
    expect(answer.body.usage).toMatchObject({ is_byok: true, cost_eur: 0 })
    const [record] = await a.admin.usage(c.user.org_id)
    expect(record).toMatchObject({ id: answer.body.id, is_byok: true, byok_counted: true, byok_free: true, cost_eur: '0' })
    expect(await reconciled(c)).toMatchObject({ successful_requests: 1, allowance_used: 1, service_platform_fee_eur: '0' })
  })

  if (engine === 'shared')
    it("a request's pending fee is written by its settlement's own atomic step (a separate write, which could be lost, is never made)", async () => {
      const c = await pair.customer()
      expect((await pair.byok(0, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha', always_use: true })).status).toBe(201)
      // Every write of a pending fee through the storage fails, as a process killed after its settlement would lose it.
      const storages = gateways().map((g) => g.internals.storage)
      const restores = storages.map((storage) => {
        const setItem = storage.setItem
        storage.setItem = (async (key: string, value: never, opts?: never) => {
          if (key.includes('byok-pending') || key.includes('byok-orgs')) throw new Error('injected: process killed')
          return setItem.call(storage, key, value, opts)
        }) as typeof setItem
        return () => {
          storage.setItem = setItem
        }
      })
      try {
        await chats(c.auth, 4)
      } finally {
        for (const restore of restores) restore()
      }
      const noted = await reconciled(c)
      expect(noted).toMatchObject({ successful_requests: 4, settled_requests: 0, pending_settlement_requests: 4 })
      const [a] = gateways()
      expect(await a.admin.settleByokFees(c.user.org_id)).toEqual({ settled_requests: 4, charged_eur: noted.service_platform_fee_eur })
      expect(await reconciled(c)).toMatchObject({ pending_settlement_requests: 0, service_platform_fee_charged_eur: noted.service_platform_fee_eur })
    })

  if (engine === 'local')
    it('a storage write failing between the claim and the charge takes the claim back (local engines)', async () => {
      const c = await customerWithFees(3)
      const [a, b] = gateways()
      const fee = (await reconciled(c)).service_platform_fee_eur
      const storage = a.internals.storage
      const usedKey = a.internals.kv.key('credits', c.user.org_id, 'used')
      const setItem = storage.setItem
      let failed = 0
      storage.setItem = (async (key: string, value: never, opts?: never) => {
        if (key === usedKey && failed++ === 0) throw new Error('injected: disk full')
        return setItem.call(storage, key, value, opts)
      }) as typeof setItem
      try {
        await expect(a.admin.settleByokFees(c.user.org_id)).rejects.toThrow('injected: disk full')
      } finally {
        storage.setItem = setItem
      }
      expect(await reconciled(c)).toMatchObject({ settled_requests: 0, pending_settlement_requests: 3 })
      await Promise.all([a.admin.settleByokFees(c.user.org_id), b.admin.settleByokFees(c.user.org_id)])
      expect(await reconciled(c)).toMatchObject({ settled_requests: 3, service_platform_fee_charged_eur: fee })
    })
}

describe('BYOK settlement: memory', () => describeSettlement(memoryKind, 'local'))
describe('BYOK settlement: fs', () => describeSettlement(fsKind, 'local'))
describe.skipIf(!process.env.REDIS_URL)('BYOK settlement: redis (REDIS_URL)', () => describeSettlement(() => redisKind(process.env.REDIS_URL!), 'shared'))
describe.skipIf(!process.env.DATABASE_URL)('BYOK settlement: postgres (DATABASE_URL)', () =>
  describeSettlement(() => postgresKind(process.env.DATABASE_URL!), 'shared'),
)
