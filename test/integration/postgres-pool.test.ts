/**
 * postgresPool and postgresDriver({ url }) (docs/operations.md#postgresql): the db0 connector over pg's Pool, as db0's
 * createDatabase and unstorage's db0 driver use it, its schema set-up on one connection that it then closes, and the
 * pool closed with the storage.
 */
import { createDatabase } from 'db0'
import { createStorage } from 'unstorage'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresDriver } from '../../src/index'
import { type PgPool, postgresPool } from '../../src/stores/postgres-pool'
import { eventually } from '../helpers/eventually'
import { dropPostgresTable } from '../helpers/storages'

const DATABASE_URL = process.env.DATABASE_URL

describe('postgresDriver options', () => {
  it('refuses a driver given neither a URL nor a database, naming both', () => {
    expect(() => postgresDriver({})).toThrow(
      'model-gateway: postgresDriver needs a URL ({ url: process.env.DATABASE_URL }) or a db0 database ({ database }) (docs/operations.md#postgresql)',
    )
    expect(() => postgresDriver({ database: { dialect: 'sqlite' } as never })).toThrow(
      /needs a URL \(\{ url \}\) or a db0 database with a PostgreSQL connector/,
    )
  })
})

describe.skipIf(!DATABASE_URL)('postgresPool (DATABASE_URL)', () => {
  const table = `mg_pool_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const otherTable = `${table}_b`
  const app = `mg-pool-${process.pid}`
  const admin = createDatabase(postgresPool({ url: DATABASE_URL, application_name: 'mg-pool-admin', max: 1 }))
  afterAll(async () => {
    await dropPostgresTable(admin, table)
    await dropPostgresTable(admin, otherTable)
    await admin.dispose()
  })
  const connections = async () =>
    Number(((await admin.prepare('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ?').get(app)) as { n: number }).n)
  // A closed connection leaves pg_stat_activity a moment after the client closed it.
  const closed = () => eventually(connections, (n) => n === 0, 2000)

  it("serves db0's calls: ? placeholders, bind, all, get, run, sql and exec", async () => {
    const database = createDatabase(postgresPool({ url: DATABASE_URL, application_name: app, max: 2 }))
    try {
      expect(await database.prepare('SELECT ?::int + ?::int AS n').all(2, 3)).toEqual([{ n: 5 }])
      expect(await database.prepare('SELECT $1::text AS t').bind('bound').get()).toEqual({ t: 'bound' })
      expect(await database.prepare('SELECT 1 AS one').run()).toMatchObject({ success: true, rowCount: 1 })
      expect((await database.sql`SELECT ${'x'}::text || ${'y'}::text AS xy`).rows).toEqual([{ xy: 'xy' }])
      await database.exec('SELECT 1; SELECT 2')
      expect(await connections()).toBeGreaterThanOrEqual(1)
    } finally {
      await database.dispose()
    }
    expect(await closed()).toBe(0)
  })

  it('postgresDriver({ url }): closes its pool with the storage', async () => {
    const storage = createStorage({ driver: postgresDriver({ url: DATABASE_URL, tableName: table, application_name: app, max: 2 }) })
    await storage.setItem('gateway:probe', { ok: 1 })
    expect(await storage.getItem('gateway:probe')).toEqual({ ok: 1 })
    expect(await connections()).toBeGreaterThanOrEqual(1)
    await storage.dispose()
    expect(await closed()).toBe(0)
  })

  it('sets the schema up on one connection of the pool, then closes it: no session lock is left, however the pool hands out its connections', async () => {
    // A pool that gives each statement to the next of three connections (as a busy pool may).
    const pools = await Promise.all([0, 1, 2].map(() => postgresPool({ url: DATABASE_URL, application_name: app, max: 1 }).getInstance()))
    let next = 0
    const rotating: PgPool = {
      query: (text, values) => pools[next++ % pools.length].query(text, values),
      connect: () => pools[0].connect(),
      on: (event, listener) => {
        for (const pool of pools) pool.on(event, listener)
      },
      end: async () => void (await Promise.all(pools.map((pool) => pool.end()))),
      get totalCount() {
        return pools.reduce((sum, pool) => sum + pool.totalCount, 0)
      },
    }
    const storage = createStorage({ driver: postgresDriver({ pool: rotating, tableName: otherTable }) })
    try {
      await storage.setItem('gateway:probe', { ok: 2 })
      expect(await storage.getItem('gateway:probe')).toEqual({ ok: 2 })
      const locks = await admin
        .prepare("SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.application_name = ? AND l.locktype = 'advisory'")
        .get(app)
      expect(locks).toEqual({ n: 0 })
    } finally {
      await storage.dispose()
      await rotating.end()
    }
  })

  it('leaves a pool of the host’s own open when the storage is disposed', async () => {
    const own = postgresPool({ url: DATABASE_URL, application_name: app, max: 1 })
    const pool = await own.getInstance()
    const storage = createStorage({ driver: postgresDriver({ pool, tableName: table }) })
    expect(await storage.getItem('gateway:probe')).toEqual({ ok: 1 })
    await storage.dispose()
    expect(await pool.query('SELECT 1 AS one')).toMatchObject({ rows: [{ one: 1 }] })
    await own.dispose()
    expect(await closed()).toBe(0)
  })
})
