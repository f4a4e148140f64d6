import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromUnits, toUnits } from '../../src/billing/money'
import { createGateway, demo } from '../../src/index'
import { createAtomicOps } from '../../src/stores/atomic'
import { useDurableObjects } from '../helpers/durable-objects'
import { hasRedisServer, useRedisCluster } from '../helpers/redis-cluster'
import { durableObjectKind, fsKind, memoryKind, neonKind, postgresKind, redisClusterKind, redisKind, type StorageKind } from '../helpers/storages'
import { useWebSocketBridge } from '../helpers/websocket-bridge'
import { createCustomer, startGateway, TEST_SECRET } from '../helpers/server'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The storage conformance suite: every driver the gateway supports passes the same tests. */
function describeStorage(makeKind: () => StorageKind, expectedEngine: 'local' | 'redis' | 'postgres' | 'durable-object') {
  let kind: StorageKind
  beforeAll(() => {
    kind = makeKind()
  })
  afterAll(() => kind.cleanup())

  it(`runs its atomic operations on the ${expectedEngine} engine`, () => {
    expect(createAtomicOps(kind.open()).engineFor('gateway:x').kind).toBe(expectedEngine)
  })

  it('keeps decimal counters exact under 50 concurrent additions, with carries both ways', async () => {
    const atomic = createAtomicOps(kind.open())
    const key = 'gateway:test:counter-a'
    await Promise.all(Array.from({ length: 50 }, () => atomic.addUnits(key, toUnits('0.1'))))
    expect(fromUnits(await atomic.getUnits(key))).toBe('5')
    expect(fromUnits(await atomic.addUnits(key, toUnits('-5.3')))).toBe('-0.3')
    expect(fromUnits(await atomic.addUnits(key, toUnits('0.300000000001')))).toBe('0.000000000001')
    expect(fromUnits(await atomic.addUnits(key, toUnits('123456789012.999999999999')))).toBe('123456789013')
    expect(fromUnits(await atomic.getUnits('gateway:test:absent'))).toBe('0')
  })

  it('counts integer counters within a window that expires', async () => {
    const atomic = createAtomicOps(kind.open())
    const key = 'gateway:test:window'
    const counts = await Promise.all(Array.from({ length: 20 }, () => atomic.increment(key, 1, 1)))
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    await sleep(1100)
    expect(await atomic.increment(key, 5, 1)).toBe(5)
  })

  it('lets exactly one of concurrent callers create or take a record', async () => {
    const atomic = createAtomicOps(kind.open())
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => atomic.setIfAbsent('gateway:test:once', { winner: i })))
    expect(created.filter(Boolean)).toHaveLength(1)
    const winner = created.indexOf(true)
    const taken = await Promise.all(Array.from({ length: 20 }, () => atomic.take<{ winner: number }>('gateway:test:once')))
    expect(taken.filter((v) => v !== null)).toEqual([{ winner }])
    expect(await atomic.take('gateway:test:once')).toBeNull()
  })

  it('serves accounts and keys over HTTP: issue, /me, revoke', async () => {
    const t = await startGateway({ storage: kind.open() })
    try {
      const { key, user, auth } = await createCustomer(t.gateway, { credits: '3.25' })
      const me = await (await t.request('/api/v1/me', { headers: auth })).json()
      expect(me).toMatchObject({ user_id: user.id, credits: { balance: '3.25', total_credits: '3.25', total_usage: '0' } })
      await t.gateway.admin.revokeKey(key)
      expect((await t.request('/api/v1/me', { headers: auth })).status).toBe(401)
      expect((await t.gateway.admin.findUserByEmail(user.email))?.id).toBe(user.id)
      await expect(t.gateway.admin.createUser({ email: user.email.toUpperCase() })).rejects.toMatchObject({ status: 409 })
    } finally {
      await t.close()
    }
  })

  it('adds to several counters in one step, exactly, with carries both ways, under 30 concurrent steps', async () => {
    const atomic = createAtomicOps(kind.open())
    const keys = ['gateway:test:many-a', 'gateway:test:many-b', 'gateway:test:many-c']
    await Promise.all(
      Array.from({ length: 30 }, () =>
        atomic.addUnitsMany([
          { key: keys[0], delta: toUnits('0.7') },
          { key: keys[1], delta: toUnits('0.000000000001') },
          { key: keys[2], delta: toUnits('1.999999999999') },
        ]),
      ),
    )
    expect(await Promise.all(keys.map(async (key) => fromUnits(await atomic.getUnits(key))))).toEqual(['21', '0.00000000003', '59.99999999997'])
    await atomic.addUnitsMany([
      { key: keys[0], delta: toUnits('-21.3') },
      { key: keys[2], delta: toUnits('0.00000000003') },
    ])
    expect(fromUnits(await atomic.getUnits(keys[0]))).toBe('-0.3')
    expect(fromUnits(await atomic.getUnits(keys[2]))).toBe('60')
  })

  // 200 each; 50 on the Durable Object, whose every call crosses from Node into workerd (~3 ms a call here).
  const times = expectedEngine === 'durable-object' ? 50 : 200
  it(`keeps the balance exact when two gateway instances each add and charge ${times} times concurrently`, async () => {
    const a = createGateway({ storage: kind.open(), secret: TEST_SECRET, logger: false, ...kind.gatewayOptions })
    const b = createGateway({ storage: kind.open(), secret: TEST_SECRET, logger: false, ...kind.gatewayOptions })
    const user = await a.admin.createUser({ email: `pair-${Date.now()}@example.com` })
    const work = [a, b].flatMap((gateway) =>
      Array.from({ length: times }, (_, i) => [
        gateway.admin.addCredits(user.org_id, '0.1'),
        gateway.admin.chargeCredits(user.org_id, i % 2 ? '0.03' : '0.000000000007'),
      ]).flat(),
    )
    await Promise.all(work)
    // 2 × times × 0.1 added; per instance times/2 × 0.03 + times/2 × 0.000000000007 charged (200: 40, 6.0000000014).
    const granted = toUnits('0.1') * BigInt(2 * times)
    const used = toUnits('0.030000000007') * BigInt(times)
    expect(await b.admin.getCredits(user.org_id)).toEqual({
      balance: fromUnits(granted - used),
      total_credits: fromUnits(granted),
      total_usage: fromUnits(used),
    })
    if (times === 200) expect(fromUnits(granted - used)).toBe('33.9999999986')
    const ledger = await a.admin.ledger(user.org_id)
    expect(ledger.filter((e) => e.kind === 'grant')).toHaveLength(2 * times)
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(2 * times)
  })

  it('writes each request’s ledger entry in its settlement: 40 chats on two instances, 40 entries summing to the usage', async () => {
    const open = () => startGateway({ storage: kind.open(), providers: [demo()], ...kind.gatewayOptions })
    const [a, b] = [await open(), await open()]
    try {
      const { key, user } = await createCustomer(a.gateway, { credits: '1' })
      const ids = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const res = await [a, b][i % 2].request('/api/v1/chat/completions', {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'demo/echo', stream: i % 4 < 2, messages: [{ role: 'user', content: `Hello ${i}` }] }),
          })
          expect(res.status).toBe(200)
          await res.text()
          return res.headers.get('x-generation-id')
        }),
      )
      const charges = (await b.gateway.admin.ledger(user.org_id)).filter((e) => e.kind === 'charge')
      expect(charges.map((e) => e.generation_id).sort()).toEqual([...ids].sort())
      const sum = charges.reduce((total, e) => total + toUnits(e.amount), 0n)
      expect(fromUnits(sum)).toBe((await a.gateway.admin.getCredits(user.org_id)).total_usage)
    } finally {
      await a.close()
      await b.close()
    }
  })
}

describe('storage: memory', () => describeStorage(memoryKind, 'local'))
describe('storage: fs', () => describeStorage(fsKind, 'local'))
describe.skipIf(!process.env.REDIS_URL)('storage: redis (REDIS_URL)', () => describeStorage(() => redisKind(process.env.REDIS_URL!), 'redis'))
describe.skipIf(!process.env.DATABASE_URL)('storage: postgres (DATABASE_URL, db0)', () =>
  describeStorage(() => postgresKind(process.env.DATABASE_URL!), 'postgres'),
)
describe.skipIf(!process.env.DATABASE_URL)("storage: postgres over Neon's serverless driver (DATABASE_URL through a WebSocket bridge)", () => {
  const bridge = useWebSocketBridge()
  describeStorage(() => neonKind(process.env.DATABASE_URL!, bridge), 'postgres')
})
describe.skipIf(!hasRedisServer())('storage: redis cluster (three primaries started here)', () => {
  const nodes = useRedisCluster()
  describeStorage(() => redisClusterKind(nodes()), 'redis')
})
describe('storage: Cloudflare Durable Object (ModelGatewayObject in workerd through Miniflare)', () => {
  const namespace = useDurableObjects()
  describeStorage(() => durableObjectKind(namespace), 'durable-object')
  describe('one object per org (docs/edge.md#one-object-per-org)', () =>
    describeStorage(() => durableObjectKind(namespace, { perOrg: true }), 'durable-object'))
})
