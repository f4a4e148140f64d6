import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromUnits, toUnits } from '../../src/billing/money'
import { createAtomicOps } from '../../src/stores/atomic'
import { useDurableObjects } from '../helpers/durable-objects'
import { hasRedisServer, useRedisCluster } from '../helpers/redis-cluster'
import { durableObjectKind, fsKind, memoryKind, neonKind, postgresKind, redisClusterKind, redisKind, type StorageKind } from '../helpers/storages'
import { useWebSocketBridge } from '../helpers/websocket-bridge'

/** The keys the cases use: records, claims and the counter the claims add to. */
interface RecordKeys {
  record(name: string): string
  claim(id: string): string
  counter: string
}
const TEST_KEYS: RecordKeys = { record: (name) => `gateway:test:${name}`, claim: (id) => `gateway:test:${id}`, counter: 'gateway:test:claimed-counter' }

/**
 * The atomic record operations (read, update, claimAndAddUnits) on every engine, two openings of the storage racing,
 * on `keys` (an org's records, BYOK fee claims and the org's used credits for one object per org).
 */
function describeRecords(makeKind: () => StorageKind, keys: RecordKeys = TEST_KEYS) {
  let kind: StorageKind
  beforeAll(() => {
    kind = makeKind()
  })
  afterAll(() => kind.cleanup())

  it('update: 100 concurrent read-modify-writes from two openings lose none', async () => {
    const [a, b] = [createAtomicOps(kind.open()), createAtomicOps(kind.open())]
    const key = keys.record('record-list')
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).update<{ items: number[] }>(key, (current) => ({ items: [...(current?.items ?? []), i] }))),
    )
    const stored = await a.read<{ items: number[] }>(key)
    expect([...stored!.items].sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect(await kind.open().getItem(key)).toEqual(stored) // the same JSON record the storage reads
  })

  it('update: undefined leaves the record, null deletes it, a throw aborts, and an absent record is never written back', async () => {
    const atomic = createAtomicOps(kind.open())
    const key = keys.record('record-one')
    expect(await atomic.update(key, () => undefined)).toBeNull()
    expect(await atomic.update(key, (current) => current ?? { n: 1 })).toEqual({ n: 1 })
    expect(await atomic.update(key, () => undefined)).toEqual({ n: 1 })
    await expect(
      atomic.update(key, () => {
        throw new Error('no')
      }),
    ).rejects.toThrow('no')
    expect(await atomic.read(key)).toEqual({ n: 1 })
    // A delete racing updates that only change a present record: once taken, it stays gone.
    const results = await Promise.all([
      ...Array.from({ length: 10 }, () => atomic.update<{ n: number }>(key, (current) => (current ? { n: current.n + 1 } : undefined))),
      atomic.take(key),
    ])
    expect(results.filter((r) => r !== null).length).toBeGreaterThanOrEqual(1)
    expect(await atomic.read(key)).toBeNull()
    expect(await atomic.update(key, () => null)).toBeNull()
  })

  it('claimAndAddUnits: of 20 concurrent claims of one key, one adds its units, once', async () => {
    const [a, b] = [createAtomicOps(kind.open()), createAtomicOps(kind.open())]
    const counter = keys.counter
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claimAndAddUnits(keys.claim('claim-1'), { by: i }, counter, toUnits('0.3'))),
    )
    expect(claims.filter(Boolean)).toHaveLength(1)
    expect(await a.read(keys.claim('claim-1'))).toEqual({ by: claims.indexOf(true) })
    expect(await kind.open().hasItem(keys.claim('claim-1'))).toBe(true)
    expect(await b.claimAndAddUnits(keys.claim('claim-2'), { by: 'x' }, counter, toUnits('0.700000000001'))).toBe(true)
    expect(fromUnits(await a.getUnits(counter))).toBe('1.000000000001')
    expect(() => a.claimAndAddUnits(counter, {}, counter, 1n)).toThrow(/two keys/)
  })
}

describe('atomic records: memory', () => describeRecords(memoryKind))
describe('atomic records: fs', () => describeRecords(fsKind))
describe.skipIf(!process.env.REDIS_URL)('atomic records: redis (REDIS_URL)', () => describeRecords(() => redisKind(process.env.REDIS_URL!)))
describe.skipIf(!process.env.DATABASE_URL)('atomic records: postgres (DATABASE_URL)', () => describeRecords(() => postgresKind(process.env.DATABASE_URL!)))
describe.skipIf(!process.env.DATABASE_URL)("atomic records: postgres over Neon's serverless driver (DATABASE_URL through a WebSocket bridge)", () => {
  const bridge = useWebSocketBridge()
  describeRecords(() => neonKind(process.env.DATABASE_URL!, bridge))
})
describe.skipIf(!hasRedisServer())('atomic records: redis cluster (three primaries started here)', () => {
  const nodes = useRedisCluster()
  describeRecords(() => redisClusterKind(nodes()))
})
describe('atomic records: Cloudflare Durable Object (ModelGatewayObject in workerd through Miniflare)', () => {
  const namespace = useDurableObjects()
  describeRecords(() => durableObjectKind(namespace))
  // An org's records (its object), BYOK fee claims (the directory) and the org's used credits they add to.
  const orgKeys: RecordKeys = {
    record: (name) => `gateway:rollups:org-records:${name}`,
    claim: (id) => `gateway:byok-settled:${id}`,
    counter: 'gateway:credits:org-records:used',
  }
  describe('one object per org (docs/edge.md#one-object-per-org)', () => describeRecords(() => durableObjectKind(namespace, { perOrg: true }), orgKeys))
})
