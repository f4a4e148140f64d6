import type { Driver } from 'unstorage'
import db0Driver from 'unstorage/drivers/db0'
import { type Db0Database, ensurePostgresSchema, tableNameOf } from './postgres'

// The driver's calls that reach the table.
const TABLE_CALLS = ['hasItem', 'getItem', 'getItemRaw', 'setItem', 'setItemRaw', 'removeItem', 'getMeta', 'getKeys', 'clear'] as const

/**
 * unstorage's db0 driver over a PostgreSQL database, for several gateway instances (docs/operations.md#postgresql):
 * its first call waits for the gateway's schema set-up, which creates the records table under an advisory lock. (The
 * db0 driver creates its table on its own first call with CREATE TABLE IF NOT EXISTS, which two connections starting
 * together can both run: one then fails, and that driver keeps failing.) Pass a db0 database:
 * `postgresDriver({ database: createDatabase(postgresql({ url })) })`.
 */
export function postgresDriver(options: { database: Db0Database; tableName?: string }): Driver {
  const table = tableNameOf(options.tableName)
  if (options.database?.dialect !== 'postgresql') throw new TypeError("model-gateway: postgresDriver needs a db0 database with db0's postgresql connector")
  const inner = db0Driver({ ...options, tableName: table } as never) as Driver
  const driver: Driver = { ...inner }
  for (const call of TABLE_CALLS) {
    const method = inner[call] as ((...args: unknown[]) => unknown) | undefined
    if (typeof method !== 'function') continue
    ;(driver as unknown as Record<string, unknown>)[call] = async (...args: unknown[]) => {
      await ensurePostgresSchema(options.database, table)
      return method(...args)
    }
  }
  return driver
}
