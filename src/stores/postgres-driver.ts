import type { Driver } from 'unstorage'
import db0Driver from 'unstorage/drivers/db0'
import { type Db0Database, ensurePostgresSchema, tableNameOf } from './postgres'
import { type PostgresPoolConnector, type PostgresPoolOptions, postgresPool } from './postgres-pool'

// The driver's calls that reach the table.
const TABLE_CALLS = ['hasItem', 'getItem', 'getItemRaw', 'setItem', 'setItemRaw', 'removeItem', 'getMeta', 'getKeys', 'clear'] as const

/** Options of postgresDriver: a URL (and the pool's options), or a db0 database of the host's own; `tableName` in both. */
export type PostgresDriverOptions = { database: Db0Database; tableName?: string } | (PostgresPoolOptions & { database?: undefined; tableName?: string })

/**
 * unstorage's db0 driver over a PostgreSQL database, for several gateway instances (docs/operations.md#postgresql):
 * `postgresDriver({ url })` opens a pool that reconnects by itself (postgresPool; its options too), which the storage's
 * dispose() ends; `postgresDriver({ database })` takes a db0 database of the host's own. Its first call waits for the
 * gateway's schema set-up, which creates the records table under an advisory lock. (The db0 driver creates its table
 * on its own first call with CREATE TABLE IF NOT EXISTS, which two connections starting together can both run: one
 * then fails, and that driver keeps failing.)
 */
export function postgresDriver(options: PostgresDriverOptions): Driver {
  const { tableName, database: given, ...rest } = options
  const poolOptions = rest as PostgresPoolOptions
  const table = tableNameOf(tableName)
  if (!given && !poolOptions.url && !poolOptions.connectionString && !poolOptions.pool && !poolOptions.host)
    throw new TypeError(
      'model-gateway: postgresDriver needs a URL ({ url: process.env.DATABASE_URL }) or a db0 database ({ database }) (docs/operations.md#postgresql)',
    )
  const owned = given ? undefined : databaseOver(postgresPool(poolOptions))
  const database: Db0Database = given ?? owned!
  if (database?.dialect !== 'postgresql')
    throw new TypeError("model-gateway: postgresDriver needs a URL ({ url }) or a db0 database with a PostgreSQL connector (postgresPool, or db0's postgresql)")
  const inner = db0Driver({ database, tableName: table } as never) as Driver
  const driver: Driver = { ...inner }
  for (const call of TABLE_CALLS) {
    const method = inner[call] as ((...args: unknown[]) => unknown) | undefined
    if (typeof method !== 'function') continue
    ;(driver as unknown as Record<string, unknown>)[call] = async (...args: unknown[]) => {
      await ensurePostgresSchema(database, table)
      return method(...args)
    }
  }
  // The pool the driver opened is closed with the storage (a database the host passed stays the host's to close).
  if (owned) driver.dispose = () => owned.dispose()
  return driver
}

/** A db0 database over the pool: statements go to the connector; db0 itself is loaded for the db0 driver's `sql` tag only. */
function databaseOver(connector: PostgresPoolConnector) {
  let db0: Promise<{ sql(strings: TemplateStringsArray, ...values: unknown[]): Promise<unknown> }> | undefined
  const viaDb0 = () =>
    (db0 ??= import('db0').then(
      (mod) => mod.createDatabase(connector as never),
      (error: Error) => {
        db0 = undefined
        throw new Error(`model-gateway: postgresDriver needs db0 (npm install db0 pg): ${error.message}`)
      },
    ))
  return {
    dialect: 'postgresql' as const,
    getInstance: () => connector.getInstance(),
    exec: (sql: string) => connector.exec(sql),
    prepare: (sql: string) => connector.prepare(sql),
    sql: async (strings: TemplateStringsArray, ...values: unknown[]) => (await viaDb0()).sql(strings, ...values),
    dispose: () => connector.dispose(),
  }
}
