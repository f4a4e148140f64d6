import type { Driver, Storage } from 'unstorage'
import { isPgPool } from './pg-pool-shape'
import { POSTGRES_SCHEMA_VERSION, POSTGRES_STEPS, recordsTableSql, SCHEMA_TABLE_SQL } from './postgres-schema'

/** The part of a db0 database the PostgreSQL engine uses (db0's `createDatabase(postgresql(…))`). */
export interface Db0Database {
  dialect: string
  exec(sql: string): Promise<unknown>
  prepare(sql: string): { all(...params: unknown[]): Promise<unknown[]> }
  /** The connector's client: a pool (postgresPool), or db0's one connection. */
  getInstance?(): unknown
}

/** The db0 driver as mounted: its options hold the database and the table. */
export interface Db0Driver extends Driver {
  options: { tableName?: string; database: Db0Database }
}

/** True when a mounted unstorage driver is the db0 driver over a PostgreSQL database. */
export function isPostgresDriver(driver: Driver): driver is Db0Driver {
  const database = (driver as Partial<Db0Driver>)?.options?.database
  return driver?.name === 'db0' && database?.dialect === 'postgresql' && typeof database.prepare === 'function'
}

/** The records table's name (db0's default `unstorage`), checked to be a plain identifier (it is written into SQL). */
export function tableNameOf(name: string | undefined): string {
  const table = name || 'unstorage'
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table))
    throw new TypeError(`model-gateway: the PostgreSQL table name ${JSON.stringify(table)} is not a plain identifier`)
  return table
}

/** One records table of a PostgreSQL database, its schema set up once, and its keys as the db0 driver writes them. */
export interface PostgresTable {
  /** The table's name (the db0 driver's `tableName`, default `unstorage`). */
  table: string
  /** The key the db0 driver stores for a full storage key (the key within its mount). */
  keyOf(key: string): string
  /** Runs a statement with `$1`-style parameters once the schema is ready; resolves to its rows. */
  query(sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]>
}

// One set-up per database and table in this process (several gateways may share them).
const ready = new WeakMap<Db0Database, Map<string, Promise<void>>>()

/** The records table behind a db0 PostgreSQL driver mounted in `storage`, with the engine's schema set up (docs/operations.md#postgresql). */
export function postgresTable(storage: Storage, driver: Db0Driver): PostgresTable {
  const database = driver.options.database
  const table = tableNameOf(driver.options.tableName)
  return {
    table,
    keyOf: (key) => key.slice(storage.getMount(key).base.length),
    async query(sql, ...params) {
      // Set up once; a set-up that failed (the database was down) is tried again by the next statement.
      await ensurePostgresSchema(database, table)
      return (await database.prepare(sql).all(...params)) as Record<string, unknown>[]
    },
  }
}

/** Sets up the records table and the engine's functions once per database and table in this process (a failed set-up is tried again at the next call). */
export function ensurePostgresSchema(database: Db0Database, table: string): Promise<void> {
  let tables = ready.get(database)
  if (!tables) ready.set(database, (tables = new Map()))
  let setUp = tables.get(table)
  if (!setUp) {
    const started = setUpSchema(database, table)
    tables.set(table, started)
    started.catch(() => tables.delete(table))
    setUp = started
  }
  return setUp
}

// An arbitrary constant for the session advisory lock that serialises schema set-ups.
const SETUP_LOCK = 7_263_514_201

/**
 * Runs `work` on one connection: the set-up's session lock must be taken and released on the same one. A pool lends
 * one, closed afterwards rather than given back, so no lock can outlive the set-up; db0's connector has only one.
 */
async function inOneSession(database: Db0Database, work: (session: Db0Database) => Promise<void>): Promise<void> {
  const instance = await database.getInstance?.()
  if (!isPgPool(instance)) return work(database)
  const client = await instance.connect()
  // Its error (PostgreSQL terminated it) fails the statement running; unheard, it would crash the process.
  const ignore = () => {}
  client.on('error', ignore)
  try {
    await work({
      dialect: 'postgresql',
      exec: (sql) => client.query(sql),
      prepare: (sql) => ({ all: async (...params) => (await client.query(sql, params)).rows }),
    })
  } finally {
    client.removeListener('error', ignore)
    client.release(true)
  }
}

/** Creates the records table and the schema table, then runs the steps the table's recorded version lacks. */
function setUpSchema(database: Db0Database, table: string): Promise<void> {
  return inOneSession(database, (session) => setUpOn(session, table))
}

async function setUpOn(database: Db0Database, table: string): Promise<void> {
  await database.prepare('SELECT pg_advisory_lock($1)').all(SETUP_LOCK)
  try {
    await createTable(database, recordsTableSql(table))
    await createTable(database, SCHEMA_TABLE_SQL)
    const rows = (await database.prepare('SELECT version FROM model_gateway_schema WHERE records_table = $1').all(table)) as { version: unknown }[]
    const current = rows.length ? Number(rows[0].version) : 0
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new Error(
        `model-gateway: the PostgreSQL table ${table} was set up by a newer version (schema ${current}, this one knows ${POSTGRES_SCHEMA_VERSION}): upgrade this instance`,
      )
    }
    for (let version = current + 1; version <= POSTGRES_SCHEMA_VERSION; version++) {
      for (const statement of POSTGRES_STEPS[version - 1]) await database.exec(statement)
      await database
        .prepare(
          `INSERT INTO model_gateway_schema (records_table, version) VALUES ($1, $2)
           ON CONFLICT (records_table) DO UPDATE SET version = EXCLUDED.version, updated_at = CURRENT_TIMESTAMP`,
        )
        .all(table, version)
    }
  } finally {
    await database.prepare('SELECT pg_advisory_unlock($1)').all(SETUP_LOCK)
  }
}

// CREATE TABLE IF NOT EXISTS is not safe against itself: a connection outside the lock (the db0 driver creating its
// table at its first call) may create the table meanwhile, and this one then fails on the catalogue's unique index.
async function createTable(database: Db0Database, sql: string): Promise<void> {
  try {
    await database.exec(sql)
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code !== '23505' && code !== '42P07') throw error
  }
}
