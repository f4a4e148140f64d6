import type { Storage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listKeys } from '../../src/stores/list-keys'
import { CUSTOMER_KEY, startByokPair, type ByokPair } from '../helpers/byok-pair'
import { hasRedisServer, useRedisCluster } from '../helpers/redis-cluster'
import { fsKind, memoryKind, postgresKind, redisClusterKind, redisKind, type StorageKind } from '../helpers/storages'

const ROUNDS = 20

/** Concurrent BYOK changes through two gateway instances over one storage (docs/byok.md): every change is atomic. */
function describeRaces(makeKind: () => StorageKind) {
  let kind: StorageKind
  let pair: ByokPair
  let observer: Storage // a third opening, to look at what is stored
  beforeAll(async () => {
    kind = makeKind()
    pair = await startByokPair(kind)
    observer = kind.open()
  })
  afterAll(async () => {
    await pair.close()
    await kind.cleanup()
  })

  const create = async (i: number, auth: Record<string, string>, body: Record<string, unknown> = {}) => {
    const res = await pair.byok(i, auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha', ...body })
    expect(res.status).toBe(201)
    return (await res.json()).data as { id: string }
  }
  const totals = async (auth: Record<string, string>) =>
    Promise.all([0, 1].map(async (i) => (await (await pair.byok(i, auth, 'GET', '')).json()).total_count as number))
  /** The ids of the org's records in the storage, whatever the index says. */
  const stored = async (orgId: string) => {
    // listKeys: unstorage's getKeys scans one node of a Redis Cluster only
    const keys = await listKeys(observer, `gateway:byok:${orgId}:`)
    return keys.map((k) => k.split(':').at(-1)!).sort()
  }

  it(`delete × delete: exactly one 200 and one 404, ${ROUNDS} rounds`, async () => {
    const c = await pair.customer()
    for (let round = 0; round < ROUNDS; round++) {
      const { id } = await create(round, c.auth)
      const statuses = await Promise.all(
        [pair.byok(round, c.auth, 'DELETE', `/${id}`), pair.byok(round + 1, c.auth, 'DELETE', `/${id}`)].map(async (p) => (await p).status),
      )
      expect(statuses.sort(), `round ${round}`).toEqual([200, 404])
    }
    expect(await totals(c.auth)).toEqual([0, 0])
    expect(await stored(c.user.org_id)).toEqual([])
  })

  it(`patch × delete: the credential stays deleted, ${ROUNDS} rounds`, async () => {
    const c = await pair.customer()
    for (let round = 0; round < ROUNDS; round++) {
      const { id } = await create(round, c.auth)
      const [patched, deleted] = await Promise.all([
        pair.byok(round, c.auth, 'PATCH', `/${id}`, { name: `renamed ${round}`, key: `${CUSTOMER_KEY}-${round}` }),
        pair.byok(round + 1, c.auth, 'DELETE', `/${id}`),
      ])
      expect(deleted.status, `round ${round}`).toBe(200)
      expect([200, 404], `round ${round}`).toContain(patched.status)
      for (const i of [0, 1]) expect((await pair.byok(i, c.auth, 'GET', `/${id}`)).status, `round ${round}`).toBe(404)
      expect((await pair.byok(round, c.auth, 'PATCH', `/${id}`, { disabled: true })).status).toBe(404)
    }
    expect(await totals(c.auth)).toEqual([0, 0])
    expect(await stored(c.user.org_id)).toEqual([])
  })

  it('last_used of a credential deleted meanwhile leaves nothing behind', async () => {
    const c = await pair.customer()
    const { id } = await create(0, c.auth)
    const [record] = await pair.instances[0].gateway.context.byok.records(c.user.org_id)
    expect((await pair.byok(1, c.auth, 'DELETE', `/${id}`)).status).toBe(200)
    await pair.instances[0].gateway.context.byok.touch(record)
    expect(await observer.hasItem(`gateway:byok-used:${id}`)).toBe(false)
    expect(await pair.instances[0].gateway.context.byok.records(c.user.org_id)).toEqual([])
  })

  it('create × delete: the count stays exact, and the list shows exactly what exists', async () => {
    const c = await pair.customer()
    const first = await Promise.all(Array.from({ length: 12 }, (_, i) => create(i, c.auth)))
    // Each of the first twelve deleted twice (once through each instance) while twelve more are created.
    const results = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) => pair.byok(i, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha', name: `second ${i}` })),
      ...first.flatMap(({ id }, i) => [pair.byok(i, c.auth, 'DELETE', `/${id}`), pair.byok(i + 1, c.auth, 'DELETE', `/${id}`)]),
    ])
    expect(results.map((r) => r.status).sort()).toEqual([...Array(12).fill(200), ...Array(12).fill(201), ...Array(12).fill(404)])
    const kept = (await Promise.all(results.slice(0, 12).map(async (r) => (await r.json()).data.id as string))).sort()
    expect(await totals(c.auth)).toEqual([12, 12])
    expect(await stored(c.user.org_id)).toEqual(kept)
    for (const { gateway } of pair.instances) expect((await gateway.context.byok.records(c.user.org_id)).map((r) => r.id).sort()).toEqual(kept)
  })

  it('caps credentials per org atomically: 60 concurrent creates end with exactly 50', async () => {
    const c = await pair.customer()
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => pair.byok(i, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha' })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(50)
    expect(statuses.filter((s) => s === 400)).toHaveLength(10)
    const refused = await results[statuses.indexOf(400)].json()
    expect(refused.error).toMatchObject({
      code: 400,
      type: 'invalid_request',
      message: expect.stringContaining('at most 50'),
      metadata: { max_credentials: 50 },
    })
    expect(await totals(c.auth)).toEqual([50, 50])
    expect(await stored(c.user.org_id)).toHaveLength(50)
    // One delete makes room for exactly one more.
    const some = (await (await pair.byok(0, c.auth, 'GET', '?limit=1')).json()).data[0].id
    expect((await pair.byok(1, c.auth, 'DELETE', `/${some}`)).status).toBe(200)
    const again = await Promise.all([0, 1].map((i) => pair.byok(i, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha' })))
    expect(again.map((r) => r.status).sort()).toEqual([201, 400])
  })

  it('after all the races, a new always_use credential is listed and serves chat on both instances', async () => {
    const c = await pair.customer()
    // Churn on this org first: the kind of history that used to leave the count below zero.
    for (let round = 0; round < 5; round++) {
      const { id } = await create(round, c.auth)
      await Promise.all([
        pair.byok(round, c.auth, 'DELETE', `/${id}`),
        pair.byok(round + 1, c.auth, 'DELETE', `/${id}`),
        pair.byok(round, c.auth, 'PATCH', `/${id}`, { disabled: true }),
      ])
    }
    const { id } = await create(0, c.auth, { always_use: true })
    for (const i of [0, 1]) {
      const list = await (await pair.byok(i, c.auth, 'GET', '')).json()
      expect(list).toMatchObject({ total_count: 1, data: [{ id, always_use: true }] })
      const { status, body } = await pair.chat(i, c.auth)
      expect([status, body.usage.is_byok]).toEqual([200, true])
      expect(pair.upstream.requests.at(-1)!.headers.authorization).toBe(`Bearer ${CUSTOMER_KEY}`)
    }
  })
}

describe('BYOK races: memory', () => describeRaces(memoryKind))
describe('BYOK races: fs', () => describeRaces(fsKind))
describe.skipIf(!process.env.REDIS_URL)('BYOK races: redis (REDIS_URL)', () => describeRaces(() => redisKind(process.env.REDIS_URL!)))
describe.skipIf(!process.env.DATABASE_URL)('BYOK races: postgres (DATABASE_URL)', () => describeRaces(() => postgresKind(process.env.DATABASE_URL!)))
describe.skipIf(!hasRedisServer())('BYOK races: redis cluster (three primaries started here)', () => {
  const nodes = useRedisCluster()
  describeRaces(() => redisClusterKind(nodes()))
})
