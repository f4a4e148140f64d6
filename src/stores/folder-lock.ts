import { sha256Hex } from '../crypto/hash'
import { requireNodeBuiltin } from '../runtime/node-builtin'

// Files and folders are Node's: a runtime without them (the edge) has no file drivers to lock.
const path = () => requireNodeBuiltin('node:path', 'file storage')
// Loaded through a name rather than a literal, so that bundlers for the edge leave proper-lockfile (Node's fs) out.
const PROPER_LOCKFILE = 'proper-lockfile'

/** Runs `work` while this process holds the lock of `key` in a folder, which every process over the folder takes too. */
export type FolderLock = <T>(key: string, work: () => Promise<T>) => Promise<T>

/** The folder, inside the storage's, where the locks are (one empty directory per key while it is held). */
export const LOCKS_FOLDER = '.model-gateway-locks'
/** A lock its holder stopped refreshing (a killed process) is taken over after this long. */
export const STALE_MS = 10_000
/** How long an operation waits for a lock before it fails, naming the fix. */
export const WAIT_MS = 30_000

type Lockfile = typeof import('proper-lockfile')
let loaded: Promise<Lockfile> | undefined
// Loaded on the first lock only: gateways over memory, Redis or PostgreSQL never load it.
const lockfile = () => (loaded ??= load())

/**
 * Loads proper-lockfile, whose signal-exit listens to the signals so that the locks held are removed when the
 * process exits. Its listeners are moved first: after a host's `process.once('SIGTERM', drain)` (docs/operations.md)
 * one of them would find itself alone (the host's is removed as it is called), take the signal for unhandled and
 * kill the process in the middle of its drain.
 */
async function load(): Promise<Lockfile> {
  const signals = Object.keys(requireNodeBuiltin('node:os', 'file storage').constants.signals)
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal as NodeJS.Signals))]))
  const mod = (await import(PROPER_LOCKFILE)) as Lockfile & { default?: Lockfile }
  for (const signal of signals as NodeJS.Signals[]) {
    for (const listener of process.listeners(signal)) {
      if (before.get(signal)!.has(listener)) continue
      process.removeListener(signal, listener)
      process.prependListener(signal, listener)
    }
  }
  return mod.default ?? mod
}

const FILE_DRIVERS = new Set(['fs', 'fs-lite', 'fsLite'])

/** The folder of a driver whose records are files other processes may open too (unstorage's fs and fs-lite), else undefined. */
export function sharedFolderOf(driver: { name?: string; options?: unknown } | undefined): string | undefined {
  const base = (driver?.options as { base?: unknown } | undefined)?.base
  return driver && FILE_DRIVERS.has(driver.name ?? '') && typeof base === 'string' && base ? path().resolve(base) : undefined
}

const folders = new Map<string, FolderLock>()

/**
 * The lock every process takes, per key, on the records in `folder` (docs/operations.md#several-instances): a lock
 * directory made with proper-lockfile (making a directory is atomic), kept fresh while held, taken over once
 * STALE_MS old (its holder was killed). A process waits for a held lock, for `waitMs` at most.
 */
export function folderLock(folder: string, waitMs = WAIT_MS): FolderLock {
  const locks = path().join(path().resolve(folder), LOCKS_FOLDER)
  let lock = folders.get(`${waitMs} ${locks}`)
  if (!lock) folders.set(`${waitMs} ${locks}`, (lock = createFolderLock(locks, waitMs)))
  return lock
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

function createFolderLock(locks: string, waitMs: number): FolderLock {
  return async (key, work) => {
    const release = await acquire(await lockfile(), locks, path().join(locks, sha256Hex(key).slice(0, 40)), waitMs)
    try {
      return await work()
    } finally {
      // Already released: taken over by another process after this one stalled for STALE_MS (nothing left to undo).
      await release().catch(() => undefined)
    }
  }
}

async function acquire(lockfile: Lockfile, locks: string, file: string, waitMs: number): Promise<() => Promise<void>> {
  const deadline = Date.now() + waitMs
  for (let attempt = 0; ; attempt++) {
    try {
      // The lock is the directory `${file}.lock`; `file` itself is never written. A lock lost by a holder that stalled
      // (onCompromised) cannot be undone: it is left to the process that took it over.
      return await lockfile.lock(file, { realpath: false, stale: STALE_MS, retries: 0, onCompromised: () => undefined })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ELOCKED' && code !== 'ENOENT') throw error
      if (Date.now() >= deadline) {
        throw new Error(
          `model-gateway: storage: a process that uses the records in ${path().resolve(locks, '..')} has held the lock of one of them for more than ${waitMs / 1000} s ` +
            `(${file}.lock) and is still running (a killed process's lock is taken over after ${STALE_MS / 1000} s): restart it. ` +
            'Processes that share a folder take turns for every change; for several busy instances use Redis or PostgreSQL (docs/operations.md#several-instances)',
        )
      }
      if (code === 'ENOENT') await requireNodeBuiltin('node:fs/promises', 'file storage').mkdir(locks, { recursive: true })
      // Short, growing, jittered waits: a change holds its lock for a few milliseconds.
      else await sleep(Math.min(50, 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()))
    }
  }
}
