import type { Storage } from 'unstorage'
import type { Logger } from '../logger'
import { type Db0Database, isPostgresDriver } from './postgres'
import { isPgPool } from './pg-pool-shape'

/** Whether the PostgreSQL storage can still recover by itself (GET /health, docs/operations.md#health-and-readiness). */
export interface StorageLiveness {
  /** Why the storage cannot recover without a restart (GET /health answers it with 503), or undefined. */
  failure(): string | undefined
  /** Stops logging through this gateway's logger (close()); the listeners that keep the process alive stay. */
  stop(): void
}

/** What GET /health answers once a connection for life has failed (never the driver's own message: it may hold a URL). */
export const DEAD_CONNECTION =
  "the PostgreSQL connection failed, and db0's postgresql connector never opens another: restart this process, and give the gateway a pool that reconnects by itself: postgresDriver({ url }) or createDatabase(postgresPool({ url })) (docs/operations.md#postgresql)"

// A connection's events, as pg's Client emits them.
interface PgEvents {
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'end', listener: () => void): unknown
}

/** One database as the gateways over it see it: its current instance, its failure, and the loggers to tell. */
interface Watched {
  database: Db0Database
  loggers: Set<Logger>
  instance?: unknown
  failure?: string
  checking?: Promise<void>
}

// One entry per database, however many gateways share it: listeners are added once per instance, never piled up.
const watched = new WeakMap<object, Watched>()

/**
 * Watches the PostgreSQL databases under the gateway's records (docs/operations.md#postgresql): a pool's connection
 * errors are logged (it opens new connections by itself); a connection for life (db0's `postgresql` connector) gets
 * the `error` listener it lacks, so that its failure no longer crashes the process, and is reported dead once it
 * failed or could not open, so that liveness fails and the orchestrator restarts the process.
 */
export function watchPostgres(storage: Storage, prefix: string, logger: Logger): StorageLiveness {
  const states = new Set<Watched>()
  for (const mount of storage.getMounts(`${prefix}:`, { parents: true })) {
    if (!isPostgresDriver(mount.driver)) continue
    const database = mount.driver.options.database
    let state = watched.get(database)
    if (!state) {
      state = { database, loggers: new Set() }
      watched.set(database, state)
      void check(state)
    }
    state.loggers.add(logger)
    states.add(state)
  }
  return {
    failure() {
      const failed = [...states].find((state) => state.failure)
      // A connector that does open another connection gets its chance at each probe (db0's never does).
      if (failed) void check(failed)
      return failed?.failure
    },
    stop() {
      for (const state of states) state.loggers.delete(logger)
    },
  }
}

/** Looks at the database's instance (one look at a time): at the start, and again at each probe after a failure. */
function check(state: Watched): Promise<void> {
  return (state.checking ??= attach(state).finally(() => {
    state.checking = undefined
  }))
}

/** Listens to the database's current instance: a pool's errors, or the failure of a connection for life. */
async function attach(state: Watched): Promise<void> {
  let instance: unknown
  try {
    instance = await state.database.getInstance?.()
  } catch (error) {
    dead(state, undefined, (error as Error).message)
    return
  }
  if (instance === state.instance) return
  state.instance = instance
  state.failure = undefined
  if (isPgPool(instance)) {
    instance.on('error', (error) => {
      for (const logger of state.loggers) logger.warn('PostgreSQL: a pooled connection failed; the pool opens another when needed', { error: error.message })
    })
  } else if (instance && typeof (instance as Partial<PgEvents>).on === 'function') {
    const connection = instance as PgEvents
    connection.on('error', (error) => dead(state, instance, error.message))
    connection.on('end', () => dead(state, instance, 'the connection was closed'))
  }
}

/** Marks the database dead (once), unless the instance that failed is no longer its current one. */
function dead(state: Watched, instance: unknown, reason: string): void {
  if (state.failure || (instance !== undefined && instance !== state.instance)) return
  state.failure = DEAD_CONNECTION
  for (const logger of state.loggers) logger.error(`storage: ${DEAD_CONNECTION}`, { error: reason })
}
