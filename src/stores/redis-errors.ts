import type { Storage } from 'unstorage'
import type { Logger } from '../logger'
import { isRedisDriver } from './atomic-redis'

/** At most one log line per this many ms about a Redis client's connection errors (docs/operations.md#when-the-storage-fails). */
export const REDIS_ERROR_REPORT_MS = 10_000

/** The part of an ioredis client (or Cluster) the reporter uses: its `error` events. */
interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'error', listener: (error: Error) => void): unknown
}

const isEmitter = (value: unknown): value is ErrorEmitter =>
  !!value && typeof (value as ErrorEmitter).on === 'function' && typeof (value as ErrorEmitter).off === 'function'

// One listener per client, however many gateways share it (each closed gateway stops its own report): so that
// gateways created over one storage never pile listeners onto its client.
const reports = new WeakMap<ErrorEmitter, { listener: (error: Error) => void; reporters: Set<(error: Error) => void> }>()

function listen(client: ErrorEmitter, report: (error: Error) => void): () => void {
  let entry = reports.get(client)
  if (!entry) {
    const reporters = new Set<(error: Error) => void>()
    const listener = (error: Error) => {
      for (const reporter of reporters) reporter(error)
    }
    entry = { listener, reporters }
    reports.set(client, entry)
    client.on('error', listener)
  }
  const own = entry
  own.reporters.add(report)
  return () => {
    own.reporters.delete(report)
    if (own.reporters.size || reports.get(client) !== own) return
    reports.delete(client)
    client.off('error', own.listener)
  }
}

/**
 * Listens to the `error` events of the Redis clients (a server or a Cluster) of the unstorage redis drivers the
 * gateway's records are on, and reports them through the gateway's logger: the first at once, then at most one line
 * per REDIS_ERROR_REPORT_MS with how many came meanwhile. ioredis writes `[ioredis] Unhandled error event` to stderr
 * when a client has no listener, past any logger (and with `logger: false`). Returns what stops listening.
 */
export function reportRedisErrors(storage: Storage, prefix: string, logger: Logger, now: () => number = performance.now.bind(performance)): () => void {
  const stops: (() => void)[] = []
  const seen = new Set<unknown>()
  for (const mount of storage.getMounts(`${prefix}:`, { parents: true })) {
    if (!isRedisDriver(mount.driver)) continue
    // The driver creates its client on first use; it has no error yet (events come from its connection, later).
    const client: unknown = mount.driver.getInstance()
    if (!isEmitter(client) || seen.has(client)) continue
    seen.add(client)
    let lastReport = Number.NEGATIVE_INFINITY
    let unreported = 0
    stops.push(
      listen(client, (error) => {
        const at = now()
        if (at - lastReport < REDIS_ERROR_REPORT_MS) {
          unreported++
          return
        }
        const more = unreported
        lastReport = at
        unreported = 0
        logger.error('the Redis connection failed; its client reconnects by itself', {
          error: error?.message ?? String(error),
          ...(more ? { errors_since_last_report: more } : {}),
        })
      }),
    )
  }
  return () => {
    for (const stop of stops.splice(0)) stop()
  }
}
