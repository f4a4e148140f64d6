import { createDatabase } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import redisDriver from 'unstorage/drivers/redis'
import db0Driver from 'unstorage/drivers/db0'
import { afterAll, describe, expect, it } from 'vitest'
import { type AtomicEngine, createGateway, demo } from '../../src/index'
import { toUnits } from '../../src/billing/money'
import { createLocalAtomic } from '../../src/stores/atomic-local'
import { createLocalHolds } from '../../src/stores/holds-local'
import { createAtomicOps } from '../../src/stores/atomic'
import { durableObjectStorage } from '../../src/stores/durable-object-engine'
import { createHoldOps } from '../../src/stores/holds'
import { postgresDriver } from '../../src/stores/postgres-driver'
import { POSTGRES_SCHEMA_VERSION } from '../../src/stores/postgres-schema'
import { createCustomer, startGateway, TEST_SECRET } from '../helpers/server'
import { neonPoolThrough } from '../helpers/neon'
import { dropPostgresTable } from '../helpers/storages'
import { useDurableObjects } from '../helpers/durable-objects'
import { useWebSocketBridge } from '../helpers/websocket-bridge'

// A driver other processes could share (its name is not one of the in-process ones), over memory for the test.
const shareable = defineDriver(() => ({ ...memoryDriver(), name: 'mongodb' }))

describe('atomic engines: which storage a gateway accepts (docs/operations.md#several-instances)', () => {
  it('refuses a shareable storage without an atomic engine, saying what to do', () => {
    const create = () => createGateway({ secret: TEST_SECRET, storage: createStorage({ driver: shareable() }) })
    expect(create).toThrow(TypeError)
    expect(create).toThrow(/the mongodb driver may be shared by other processes, and the gateway has no atomic engine for it/)
    expect(create).toThrow(/Use Redis .* or PostgreSQL .* or pass atomic: 'local'/)
  })

  it('refuses it on any mount, not only the root', () => {
    const storage = createStorage()
    storage.mount('gateway:usage', shareable())
    expect(() => createGateway({ secret: TEST_SECRET, storage })).toThrow(/mongodb driver may be shared/)
  })

  it("accepts it with atomic: 'local', and serves its counters with the in-process engine", async () => {
    const storage = createStorage({ driver: shareable() })
    const gateway = createGateway({ secret: TEST_SECRET, storage, atomic: 'local' })
    try {
      const user = await gateway.admin.createUser({ email: 'local@example.com' })
      await gateway.admin.addCredits(user.org_id, '2.5')
      expect((await gateway.admin.getCredits(user.org_id)).balance).toBe('2.5')
      expect(createAtomicOps(storage, 'local').engineFor('gateway:x').kind).toBe('local')
    } finally {
      await gateway.close()
    }
  })

  it('refuses a Redis Cluster whose base has no hash tag, and accepts one that has', () => {
    const cluster = (base: string) => createStorage({ driver: redisDriver({ cluster: [{ host: '127.0.0.1', port: 1 }], base, lazyConnect: true } as never) })
    expect(() => createGateway({ secret: TEST_SECRET, storage: cluster('mg') })).toThrow(
      /talks to a Redis Cluster, and its base \("mg"\) has no hash tag: .* such as base: '\{mg\}'/,
    )
    expect(createAtomicOps(cluster('{mg}')).engineFor('gateway:x').kind).toBe('redis')
  })

  it('refuses an unknown atomic option, and an engine without its parts', () => {
    expect(() => createGateway({ secret: TEST_SECRET, atomic: 'distributed' as never })).toThrow(/atomic must be 'auto', 'local' or an engine/)
    expect(() => createGateway({ secret: TEST_SECRET, atomic: { name: 'half' } as never })).toThrow(/needs name, atomic\(storage\) and holds\(storage\)/)
  })

  it('serves every key with an engine of the host’s own: its holds and counters, on a driver it would refuse otherwise', async () => {
    const calls: string[] = []
    const engine: AtomicEngine = {
      name: 'audited',
      atomic(storage) {
        const local = createLocalAtomic(storage, 'gateway')
        return {
          ...local,
          kind: 'audited',
          addUnits: (key, delta, window) => {
            calls.push(`addUnits ${key.split(':')[1]}`)
            return local.addUnits(key, delta, window)
          },
        }
      },
      holds(storage) {
        const local = createLocalHolds(storage, createLocalAtomic(storage, 'gateway'))
        return {
          ...local,
          kind: 'audited',
          place: (input) => {
            calls.push('place')
            return local.place(input)
          },
          settle: (input) => {
            calls.push('settle')
            return local.settle(input)
          },
        }
      },
    }
    const t = await startGateway({ storage: createStorage({ driver: shareable() }), atomic: engine, providers: [demo()] })
    try {
      const { auth, user } = await createCustomer(t.gateway, { credits: '1' })
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello engine' }] }),
      })
      expect(res.status).toBe(200)
      const cost = (await res.json()).usage.cost_eur as number
      expect(calls).toContain('place')
      expect(calls).toContain('settle')
      expect(calls).toContain('addUnits credits')
      expect(t.gateway.context.holds.kind).toBe('audited')
      const credits = await t.gateway.admin.getCredits(user.org_id)
      expect(toUnits(credits.total_usage)).toBe(toUnits(String(cost)))
    } finally {
      await t.close()
    }
  })

  it('picks the in-process engine for memory and files, Redis scripts for Redis', () => {
    expect(createAtomicOps(createStorage()).engineFor('gateway:x').kind).toBe('local')
  })
})

describe.skipIf(!process.env.DATABASE_URL)('atomic engines: PostgreSQL schema (DATABASE_URL)', () => {
  const url = process.env.DATABASE_URL!
  const table = `mg_schema_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const database = createDatabase(postgresql({ url }))
  afterAll(async () => {
    await dropPostgresTable(database, table)
    await database.dispose()
  })

  it("sets up the records table and records its schema version; also behind unstorage's plain db0 driver", async () => {
    const atomic = createAtomicOps(createStorage({ driver: db0Driver({ database, tableName: table }) }))
    expect(atomic.engineFor('gateway:x').kind).toBe('postgres')
    expect(await atomic.addUnits('gateway:credits:o:granted', 5_000_000_000_000n)).toBe(5_000_000_000_000n)
    const rows = await database.prepare('SELECT version FROM model_gateway_schema WHERE records_table = $1').all(table)
    expect(rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }])
    const stored = await database.prepare(`SELECT value FROM "${table}" WHERE key = $1`).all('gateway:credits:o:granted')
    expect(JSON.parse((stored[0] as { value: string }).value)).toEqual({ units: '5000000000000' })
  })

  it('refuses a table set up by a newer version, naming both versions', async () => {
    const newer = `${table}_newer`
    await database.exec(
      `CREATE TABLE IF NOT EXISTS model_gateway_schema (records_table TEXT PRIMARY KEY, version INTEGER NOT NULL, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
    )
    await database.prepare('INSERT INTO model_gateway_schema (records_table, version) VALUES ($1, $2)').run(newer, POSTGRES_SCHEMA_VERSION + 1)
    try {
      const atomic = createAtomicOps(createStorage({ driver: db0Driver({ database, tableName: newer }) }))
      await expect(atomic.getUnits('gateway:x')).rejects.toThrow(
        new RegExp(`table ${newer} was set up by a newer version \\(schema ${POSTGRES_SCHEMA_VERSION + 1}, this one knows ${POSTGRES_SCHEMA_VERSION}\\)`),
      )
    } finally {
      await dropPostgresTable(database, newer)
    }
  })
})

describe.skipIf(!process.env.DATABASE_URL)("atomic engines: PostgreSQL over Neon's serverless driver (DATABASE_URL through a WebSocket bridge)", () => {
  const url = process.env.DATABASE_URL!
  const bridge = useWebSocketBridge()
  const table = `mg_schema_neon_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const database = createDatabase(postgresql({ url }))
  afterAll(async () => {
    await dropPostgresTable(database, table)
    await database.dispose()
  })

  it('picks the PostgreSQL engine for postgresDriver({ pool }) with its Pool, and sets the schema up over WebSocket', async () => {
    const pool = neonPoolThrough(url, bridge, 2)
    const before = bridge().connections
    try {
      const atomic = createAtomicOps(createStorage({ driver: postgresDriver({ pool, tableName: table }) }))
      expect(atomic.engineFor('gateway:x').kind).toBe('postgres')
      expect(await atomic.addUnits('gateway:credits:o:granted', 7_000_000_000_000n)).toBe(7_000_000_000_000n)
      expect(await atomic.addUnits('gateway:credits:o:granted', -2_500_000_000_000n)).toBe(4_500_000_000_000n)
      // The set-up's session lock ran on a connection of its own, closed after it; the statements went through the bridge.
      expect(bridge().connections - before).toBeGreaterThanOrEqual(2)
      const rows = await database.prepare('SELECT version FROM model_gateway_schema WHERE records_table = $1').all(table)
      expect(rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }])
    } finally {
      await pool.end()
    }
  })
})

describe('atomic engines: Cloudflare Durable Object (ModelGatewayObject in workerd through Miniflare)', () => {
  const namespace = useDurableObjects()

  it('picks the Durable Object engine for durableObjectStorage with no atomic option, and bills a chat in the object', async () => {
    const storage = durableObjectStorage(namespace(), { name: `engines-${Date.now()}` })
    expect(createAtomicOps(storage).engineFor('gateway:x').kind).toBe('durable-object')
    expect(createHoldOps(storage).kind).toBe('durable-object')
    const t = await startGateway({ storage, providers: [demo()] })
    try {
      const { auth, user } = await createCustomer(t.gateway, { credits: '1' })
      const before = namespace().calls
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello object' }] }),
      })
      expect(res.status).toBe(200)
      const cost = toUnits(String((await res.json()).usage.cost_eur))
      expect(cost > 0n).toBe(true)
      expect(namespace().calls).toBeGreaterThan(before)
      // Read back through another opening, as another isolate would: the object kept the charge and its record.
      const other = createGateway({
        secret: TEST_SECRET,
        logger: false,
        storage: durableObjectStorage(namespace(), { name: storage.getMount('').driver.options.name }),
      })
      expect(toUnits((await other.admin.getCredits(user.org_id)).balance)).toBe(toUnits('1') - cost)
      expect(await other.context.usage.list(user.org_id)).toHaveLength(1)
    } finally {
      await t.close()
    }
  })

  it('answers 503 when the object fails, and refuses a durable-object driver without a namespace as any shareable one', async () => {
    const failing = { idFromName: (name: string) => name, get: () => ({ fetch: async () => new Response('{"error":"gone"}', { status: 500 }) }) }
    await expect(createAtomicOps(durableObjectStorage(failing)).getUnits('gateway:x')).rejects.toMatchObject({ status: 503, message: /failed: gone/ })
    const named = defineDriver(() => ({ ...memoryDriver(), name: 'durable-object' }))
    expect(() => createGateway({ secret: TEST_SECRET, storage: createStorage({ driver: named() }) })).toThrow(/the durable-object driver may be shared/)
  })
})
