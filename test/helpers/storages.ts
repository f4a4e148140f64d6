import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import memoryDriver from 'unstorage/drivers/memory'
import redisDriver from 'unstorage/drivers/redis'
import { createDatabase } from 'db0'
import type { Pool as NeonPool } from '@neondatabase/serverless'
import { durableObjectStorage, type DurableObjectNamespaceLike } from '../../src/stores/durable-object-engine'
import { listKeys } from '../../src/stores/list-keys'
import { postgresDriver } from '../../src/stores/postgres-driver'
import { postgresPool } from '../../src/stores/postgres-pool'
import { neonPoolThrough } from './neon'
import type { WebSocketBridge } from './websocket-bridge'

/** A storage kind under test: `open()` gives one more Storage over the same data (as a second gateway instance would). */
export interface StorageKind {
  name: string
  /** True when the kind is shared by gateway instances in other processes too. */
  shared: boolean
  open(): Storage
  cleanup(): Promise<void>
  /** Gateway options the kind needs under the conformance cases' load (the Durable Object's storage bound); none for most. */
  gatewayOptions?: { storageTimeoutMs?: number }
}

/** In-memory: every opening is the same Storage. */
export function memoryKind(): StorageKind {
  const storage = createStorage({ driver: memoryDriver() })
  return { name: 'memory', shared: false, open: () => storage, cleanup: () => storage.dispose() }
}

/** fs: each opening is a new Storage over one temporary folder. */
export function fsKind(): StorageKind {
  const dir = mkdtempSync(join(tmpdir(), 'mg-fs-'))
  const opened: Storage[] = []
  return {
    name: 'fs',
    shared: false,
    open: () => {
      const storage = createStorage({ driver: fsDriver({ base: dir }) })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      await Promise.all(opened.map((s) => s.dispose()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Redis at REDIS_URL: each opening is a new client, all under one random base. */
export function redisKind(url: string): StorageKind {
  const base = `mg-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const opened: Storage[] = []
  return {
    name: 'redis',
    shared: true,
    open: () => {
      const storage = createStorage({ driver: redisDriver({ url, base }) })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      if (opened[0]) await opened[0].clear()
      await Promise.all(opened.map((s) => s.dispose()))
    },
  }
}

/**
 * PostgreSQL at DATABASE_URL through postgresDriver({ url }) (its pool that reconnects): each opening is a new pool
 * (as another instance's), all on one table of this run's own, dropped at the end with its schema row.
 */
export function postgresKind(url: string): StorageKind {
  const table = `mg_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const opened: Storage[] = []
  return {
    name: 'postgres',
    shared: true,
    open: () => {
      // A few connections each: the suites open many instances, on a server other suites share.
      const storage = createStorage({ driver: postgresDriver({ url, tableName: table, max: 4 }) })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      const database = createDatabase(postgresPool({ url, max: 1 }))
      await dropPostgresTable(database, table)
      await database.dispose()
      await Promise.all(opened.map((s) => s.dispose()))
    },
  }
}

/**
 * PostgreSQL at DATABASE_URL through Neon's serverless driver (docs/edge.md#postgresql-over-neons-serverless-driver):
 * its Pool speaks the wire protocol over WebSocket, here through `bridge()` (./neon.ts, ./websocket-bridge.ts) to the
 * local server, given to postgresDriver({ pool }). Each opening is a new Pool (as another instance's), all on one table
 * of this run's own, dropped at the end with its schema row.
 */
export function neonKind(url: string, bridge: () => WebSocketBridge): StorageKind {
  const table = `mg_test_neon_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const pools: NeonPool[] = []
  const opened: Storage[] = []
  return {
    name: 'postgres-neon',
    shared: true,
    open: () => {
      // A statement costs about twice TCP's through the bridge: twice postgresKind's connections, so that 800 at once
      // (storage.test.ts) each end within the storage bound (5 s) on a loaded machine; closed after 1 s idle, since
      // the suites open many instances on a server (100 connections) other suites share.
      const pool = neonPoolThrough(url, bridge, 8)
      pools.push(pool)
      const storage = createStorage({ driver: postgresDriver({ pool, tableName: table }) })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      const database = createDatabase(postgresPool({ url, max: 1 }))
      await dropPostgresTable(database, table)
      await database.dispose()
      await Promise.all(opened.map((s) => s.dispose()))
      await Promise.all(pools.map((pool) => pool.end()))
    },
  }
}

/**
 * A Redis Cluster (test/helpers/redis-cluster.ts) through unstorage's redis driver: each opening is a new cluster
 * client, all under one base whose hash tag puts every key of the gateway in one slot (docs/operations.md#redis-cluster).
 */
export function redisClusterKind(nodes: { host: string; port: number }[]): StorageKind {
  const base = `{mg-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}}`
  const opened: Storage[] = []
  return {
    name: 'redis-cluster',
    shared: true,
    open: () => {
      const storage = createStorage({ driver: redisDriver({ cluster: nodes, base }) })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      if (opened[0]) for (const key of await listKeys(opened[0], '')) await opened[0].removeItem(key)
      await Promise.all(opened.map((s) => s.dispose()))
    },
  }
}

/**
 * Cloudflare Durable Objects (docs/edge.md#the-durable-object-engine): each opening is a new durableObjectStorage over
 * `namespace()` (test/helpers/durable-objects.ts: every call runs in workerd), as another isolate's would be, all on an
 * object name of this run's own; its driver brings the Durable Object engine. With `perOrg`, one object per org beside
 * that one (docs/edge.md#one-object-per-org).
 */
export function durableObjectKind(namespace: () => DurableObjectNamespaceLike, options: { perOrg?: boolean } = {}): StorageKind {
  const name = `mg-test-${Math.random().toString(36).slice(2, 8)}`
  const opened: Storage[] = []
  return {
    name: 'durable-object',
    shared: true,
    // Every call is served one at a time by workerd (ModelGatewayObject), a few ms each here, and a gateway's storage
    // wait counts the calls queued before it: with 200 operations at once (storage.test.ts) a wait queues behind up to
    // ~200 calls, measured 0.8 s on an idle machine and 1.9 s at a load of 4 on two cores, past the default 5 s at ~10.
    // The bound is an outage's, not what the cases check (exact money under concurrency): 30 s here.
    gatewayOptions: { storageTimeoutMs: 30_000 },
    open: () => {
      const storage = durableObjectStorage(namespace(), { name, perOrg: options.perOrg })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      if (opened[0]) await opened[0].clear()
      await Promise.all(opened.map((s) => s.dispose()))
    },
  }
}

/** Drops a test's PostgreSQL records table and its schema row (the schema table is absent when nothing ran). */
export async function dropPostgresTable(database: { exec(sql: string): Promise<unknown> }, table: string): Promise<void> {
  await database.exec(`DROP TABLE IF EXISTS "${table}"`)
  await database.exec(`DELETE FROM model_gateway_schema WHERE records_table = '${table}'`).catch(() => undefined)
}
