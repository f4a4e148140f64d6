/*
 * A db0 connector over pg's Pool (docs/operations.md#postgresql): every statement borrows a connection of the pool,
 * so a connection that PostgreSQL terminates (a failover, a restart, pg_terminate_backend) is dropped and the next
 * statement opens another. db0's own `postgresql` connector keeps one pg.Client for the life of the process, with no
 * `error` listener: a terminated connection crashes the process, and once that is avoided it never connects again.
 * pg is loaded at the first statement (an optional peer dependency: `npm install pg`).
 */

import type { PgPool, PgResult } from './pg-pool-shape'

export { isPgPool, type PgPool, type PgPoolClient, type PgResult } from './pg-pool-shape'

/** Options of postgresPool: pg's Pool options (ssl, host, user, password, …) with the defaults below, or a pool of the host's own. */
export interface PostgresPoolOptions {
  /** `postgres://user:password@host:port/database` (pg's `connectionString`). */
  url?: string
  /** The same as `url`, by pg's name. */
  connectionString?: string
  /** At most this many connections at once (10); statements beyond them wait for one. */
  max?: number
  /** A connection idle this long is closed (10,000 ms). */
  idleTimeoutMillis?: number
  /** Opening a connection gives up after this long (5,000 ms): the statement that needed it fails. */
  connectionTimeoutMillis?: number
  /** The name of the connections in pg_stat_activity (`model-gateway`). */
  application_name?: string
  /** TCP keep-alive on every connection (true), so that a server that vanished is noticed. */
  keepAlive?: boolean
  /** Idle connections do not keep the process alive (true): a script ends without closing the pool. */
  allowExitOnIdle?: boolean
  /** A pg Pool of the host's own, used as it is (the options above are then ignored; dispose leaves it open). */
  pool?: PgPool
  /** Told each error of an idle connection (the pool has dropped it already); the gateway also logs them through its logger. */
  onError?: (error: Error) => void
  /** Any other option of pg's Pool. */
  [option: string]: unknown
}

/** A prepared statement as db0 uses it: run with parameters, or bound to them first. */
export interface PoolStatement {
  bind(...params: unknown[]): BoundPoolStatement
  all(...params: unknown[]): Promise<unknown[]>
  run(...params: unknown[]): Promise<{ success: boolean }>
  get(...params: unknown[]): Promise<unknown>
}

/** A statement bound to its parameters (db0's `PreparedStatement`). */
export interface BoundPoolStatement {
  bind(...params: unknown[]): BoundPoolStatement
  all(): Promise<unknown[]>
  run(): Promise<{ success: boolean }>
  get(): Promise<unknown>
}

/** A db0 connector (db0's `Connector`): pass it to db0's `createDatabase`. */
export interface PostgresPoolConnector {
  name: 'postgresql-pool'
  dialect: 'postgresql'
  /** The pg Pool (created at the first call). */
  getInstance(): Promise<PgPool>
  exec(sql: string): Promise<PgResult>
  prepare(sql: string): PoolStatement
  /** Ends the pool (not a pool the host passed in). */
  dispose(): Promise<void>
}

/** The defaults the gateway gives pg's Pool. */
export const POSTGRES_POOL_DEFAULTS = {
  max: 10,
  idleTimeoutMillis: 10_000,
  connectionTimeoutMillis: 5_000,
  application_name: 'model-gateway',
  keepAlive: true,
  allowExitOnIdle: true,
} as const

type PgModule = { Pool: new (config: Record<string, unknown>) => PgPool }

/** Loads pg (an optional peer dependency), naming the fix when it is missing. */
async function loadPg(): Promise<PgModule> {
  try {
    // pg ships no types (the cast keeps TypeScript from looking for them; the import stays `import('pg')` for bundlers).
    const mod = (await import('pg' as string)) as Partial<PgModule> & { default?: PgModule }
    const pg = mod.Pool ? (mod as PgModule) : mod.default
    if (!pg?.Pool) throw new Error('the module has no Pool')
    return pg
  } catch (error) {
    throw new Error(`model-gateway: postgresPool needs pg (npm install pg): ${(error as Error).message}`)
  }
}

// As db0's connectors: `?` placeholders (the db0 unstorage driver writes them) become `$1`, `$2`, …
const normalizeParams = (sql: string) => {
  let i = 0
  return sql.replace(/\?/g, () => `$${++i}`)
}

/**
 * A db0 connector over a pg Pool that reconnects by itself (docs/operations.md#postgresql):
 * `createDatabase(postgresPool({ url }))`, or let `postgresDriver({ url })` build it. An idle connection's error is
 * told to `onError` (and to the gateway's logger), never thrown.
 */
export function postgresPool(options: PostgresPoolOptions = {}): PostgresPoolConnector {
  const { pool: given, onError, url, ...rest } = options
  let pool: Promise<PgPool> | undefined
  const poolOf = (): Promise<PgPool> => {
    if (!pool) {
      pool = (
        given
          ? Promise.resolve(given)
          : loadPg().then((pg) => new pg.Pool({ ...POSTGRES_POOL_DEFAULTS, ...rest, connectionString: url ?? rest.connectionString }))
      )
        .then((created) => {
          // Without a listener, an idle connection's error (PostgreSQL terminated it) would crash the process.
          created.on('error', (error) => onError?.(error))
          return created
        })
        .catch((error) => {
          pool = undefined
          throw error
        })
    }
    return pool
  }
  const query = async (sql: string, params?: unknown[]) => (await poolOf()).query(normalizeParams(sql), params)
  const prepare = (sql: string): PoolStatement => {
    const statement: PoolStatement = {
      bind: (...params) => ({
        bind: (...again) => statement.bind(...again),
        all: () => statement.all(...params),
        run: () => statement.run(...params),
        get: () => statement.get(...params),
      }),
      all: async (...params) => (await query(sql, params)).rows,
      run: async (...params) => ({ success: true, ...(await query(sql, params)) }),
      get: async (...params) => (await query(sql, params)).rows[0],
    }
    return statement
  }
  return {
    name: 'postgresql-pool',
    dialect: 'postgresql',
    getInstance: poolOf,
    exec: (sql) => query(sql),
    prepare,
    async dispose() {
      const ending = pool
      pool = undefined
      if (ending && !given) await (await ending.catch(() => undefined))?.end()
    },
  }
}
