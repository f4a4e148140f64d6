import { GatewayError, isGatewayError } from '../errors'

/** The default bound on one storage wait (`storageTimeoutMs`, docs/operations.md#when-the-storage-fails). */
export const DEFAULT_STORAGE_TIMEOUT_MS = 5000

/** The longest wait a timer can count (setTimeout fires at once past it). */
const MAX_TIMEOUT_MS = 2_147_483_647

/** Seconds a client refused because the storage did not answer is told to wait (`Retry-After`) before trying again. */
export const STORAGE_RETRY_AFTER_SECONDS = 5

/** The `metadata.error_type` of the 503 answered when the storage did not answer in time (docs/errors.md#statuses). */
export const STORAGE_UNAVAILABLE = 'storage_unavailable'

/**
 * The 503 of a storage wait that passed `storageTimeoutMs` (docs/operations.md#when-the-storage-fails): it names the
 * storage and the bound, never the storage's own error (which may hold a connection URL). The operation it waited for
 * may still run once the storage answers: a hold's placement or a settlement that timed out may have been done.
 */
export class StorageTimeoutError extends GatewayError {
  /** The storage that did not answer (`redis`, `postgres`, an engine's or a driver's name). */
  readonly storage: string
  /** The bound it passed, in ms. */
  readonly timeoutMs: number
  /** What it waited for (`holds.place`, `kv.get`, …): in the logs (its stack), never in the answer. */
  readonly operation?: string

  constructor(storage: { name: string; label: string }, timeoutMs: number, operation?: string) {
    super(503, `The gateway's storage (${storage.label}) did not answer within ${timeoutMs} ms: try again shortly`, {
      headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
      metadata: { error_type: STORAGE_UNAVAILABLE, storage: storage.name, timeout_ms: timeoutMs },
    })
    this.storage = storage.name
    this.timeoutMs = timeoutMs
    this.operation = operation
    // Thrown by a timer, its stack would say nothing of the wait: the log line says what was waited for instead.
    if (operation) this.stack = `StorageTimeoutError: ${this.message} (waiting for ${operation})`
  }
}

/**
 * The 503 of a storage operation that failed (a refused or cut connection, a client that gave up): the same answer as
 * a wait past the bound, naming the storage, never its own error (which may hold a connection URL: it is the cause,
 * logged). The operation may have run (a reply lost on a cut connection).
 */
export class StorageFailedError extends GatewayError {
  /** The storage that failed. */
  readonly storage: string
  /** What was asked of it (`holds.place`, `kv.get`, …): in the logs, never in the answer. */
  readonly operation?: string

  constructor(storage: { name: string; label: string }, cause: unknown, operation?: string) {
    super(503, `The gateway's storage (${storage.label}) failed to answer: try again shortly`, {
      cause,
      headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
      metadata: { error_type: STORAGE_UNAVAILABLE, storage: storage.name },
    })
    this.storage = storage.name
    this.operation = operation
  }
}

/** True for a StorageTimeoutError (also across bundled copies of the class). */
export function isStorageTimeout(error: unknown): error is StorageTimeoutError {
  return (
    error instanceof StorageTimeoutError ||
    (isGatewayError(error) && error.status === 503 && error.metadata?.error_type === STORAGE_UNAVAILABLE && error.metadata?.timeout_ms !== undefined)
  )
}

/** Checks the `storageTimeoutMs` option: a positive number of ms a timer can count. */
export function storageTimeoutOption(value: number | undefined): number {
  if (value === undefined) return DEFAULT_STORAGE_TIMEOUT_MS
  if (!(Number.isFinite(value) && value > 0 && value <= MAX_TIMEOUT_MS))
    throw new TypeError(`model-gateway: \`storageTimeoutMs\` must be a positive number of milliseconds, at most ${MAX_TIMEOUT_MS}`)
  return value
}

/** A bound on storage waits: `wait` resolves as the operation does, or rejects with StorageTimeoutError past `ms`. */
export interface StorageBound {
  /** The storage's name (metadata) and label (message). */
  readonly storage: { name: string; label: string }
  readonly ms: number
  /**
   * The operation's outcome, or StorageTimeoutError once `ms` passed first (the operation itself goes on), or
   * StorageFailedError when the storage failed; `name` says which operation, in the logs.
   */
  wait<T>(operation: Promise<T>, name?: string): Promise<T>
}

/** A bound of `ms` on the waits for `storage`. */
export function storageBound(storage: { name: string; label: string }, ms: number): StorageBound {
  return {
    storage,
    ms,
    wait<T>(operation: Promise<T>, name?: string): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new StorageTimeoutError(storage, ms, name)), ms)
        operation.then(
          (value) => {
            clearTimeout(timer)
            resolve(value)
          },
          (error: unknown) => {
            clearTimeout(timer)
            // The gateway's own errors (a 402, a refused key cap) pass; the storage's are its 503.
            reject(isGatewayError(error) ? error : new StorageFailedError(storage, error, name))
          },
        )
      })
    },
  }
}
