import { createDatabase } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { demo } from '../../src/index'
import { postgresDriver } from '../../src/stores/postgres-driver'
import { version } from '../../src/version'
import { startGateway } from '../helpers/server'
import { dropPostgresTable } from '../helpers/storages'

// A storage whose reads fail with a message holding a secret, or never answer.
const failing = defineDriver(() => ({
  ...memoryDriver(),
  name: 'failing',
  getItem: () => Promise.reject(new Error('connect ECONNREFUSED redis://ops:hunter2@10.0.0.9')),
}))
const hanging = defineDriver(() => ({ ...memoryDriver(), name: 'hanging', getItem: () => new Promise<null>(() => {}) }))

describe('GET /health and /health/ready (docs/operations.md#health-and-readiness)', () => {
  it('answers liveness without a key, and readiness with each check when all is well', async () => {
    const t = await startGateway({ providers: [demo()] })
    try {
      const live = await t.request('/api/v1/health')
      expect(live.status).toBe(200)
      expect(await live.json()).toEqual({ status: 'ok', version })
      const ready = await t.request('/api/v1/health/ready')
      expect(ready.status).toBe(200)
      expect(ready.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/)
      const body = await ready.json()
      expect(body).toMatchObject({ status: 'ready', checks: { storage: { ok: true }, providers: { ok: true, count: 1 } } })
      expect(body.checks.storage.latency_ms).toBeTypeOf('number')
      expect(body.checks.storage.latency_ms).toBeGreaterThanOrEqual(0)
      expect(body.checks.storage.latency_ms).toBeLessThan(2000)
    } finally {
      await t.close()
    }
  })

  it('is not ready without a provider', async () => {
    const t = await startGateway({ providers: [] })
    try {
      const res = await t.request('/api/v1/health/ready')
      expect(res.status).toBe(503)
      expect(await res.json()).toMatchObject({
        status: 'not_ready',
        checks: { storage: { ok: true }, providers: { ok: false, count: 0, error: 'no provider is configured' } },
      })
      expect((await t.request('/api/v1/health')).status).toBe(200)
    } finally {
      await t.close()
    }
  })

  it('is not ready when the storage fails, and names the failure without its message (which holds a secret)', async () => {
    const warned: unknown[] = []
    const logger = { debug() {}, info() {}, warn: (message: string, fields?: unknown) => void warned.push([message, fields]), error() {} }
    const t = await startGateway({ providers: [demo()], storage: createStorage({ driver: failing() }), atomic: 'local', logger })
    try {
      const res = await t.request('/api/v1/health/ready')
      expect(res.status).toBe(503)
      const text = await res.text()
      expect(JSON.parse(text)).toMatchObject({ status: 'not_ready', checks: { storage: { ok: false, error: 'unreachable' }, providers: { ok: true } } })
      expect(text).not.toContain('hunter2')
      expect(warned).toContainEqual(['readiness: the storage did not answer', expect.objectContaining({ error: expect.stringContaining('ECONNREFUSED') })])
    } finally {
      await t.close()
    }
  })

  it('is not ready when the storage does not answer within 2 s', async () => {
    const t = await startGateway({ providers: [demo()], storage: createStorage({ driver: hanging() }), atomic: 'local' })
    try {
      const started = Date.now()
      const res = await t.request('/api/v1/health/ready')
      expect(res.status).toBe(503)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900)
      expect(await res.json()).toMatchObject({ checks: { storage: { ok: false, error: 'timeout' } } })
    } finally {
      await t.close()
    }
  }, 10_000)

  it.skipIf(!process.env.DATABASE_URL)('is ready on PostgreSQL once its schema is set up (DATABASE_URL)', async () => {
    const table = `mg_health_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    const database = createDatabase(postgresql({ url: process.env.DATABASE_URL! }))
    const t = await startGateway({ providers: [demo()], storage: createStorage({ driver: postgresDriver({ database, tableName: table }) }) })
    try {
      const res = await t.request('/api/v1/health/ready')
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ status: 'ready', checks: { storage: { ok: true } } })
    } finally {
      await t.close()
      await dropPostgresTable(database, table)
      await database.dispose()
    }
  })
})
