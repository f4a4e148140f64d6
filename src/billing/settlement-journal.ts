import type { FileHandle } from 'node:fs/promises'
import { requireNodeBuiltin } from '../runtime/node-builtin'
import type { Logger } from '../logger'
import type { Budget, CounterCharge, HoldOps } from '../stores/engine-types'

// Node's file system, read when a journal is opened: a runtime without it (the edge) fails naming the option.
const fs = () => requireNodeBuiltin('node:fs', 'settlementRetries.journal')
const files = () => requireNodeBuiltin('node:fs/promises', 'settlementRetries.journal')
const paths = () => requireNodeBuiltin('node:path', 'settlementRetries.journal')

/** What HoldOps.settle is given: a kept settlement is tried again with exactly this. */
export type SettleInput = Parameters<HoldOps['settle']>[0]

/** A settlement that failed and is kept until it lands (docs/operations.md#settlements-that-fail). */
export interface KeptSettlement {
  /** The hold's id: one settlement per hold. */
  id: string
  /** `charge`: a served request's charge and its records; `release`: the hold removed without charge. */
  kind: 'charge' | 'release'
  org_id: string
  /** When it was first kept (epoch ms). */
  since: number
  /** What HoldOps.settle is given at every try, unchanged (its `once` makes a second run a no-op). */
  input: SettleInput
}

/** A settlement as a journal line holds it: every bigint as a decimal string. */
type Encoded = Omit<KeptSettlement, 'input'> & {
  input: {
    id: string
    budgets: (Omit<Budget, 'limit' | 'units'> & { limit: { key: string } | { units: string }; units?: string })[]
    charges: string[]
    counters?: (Omit<CounterCharge, 'units'> & { units: string })[]
    records?: { key: string; value: unknown }[]
    once?: string
  }
}

/** A kept settlement as JSON (bigints as strings). */
export function encodeSettlement(kept: KeptSettlement): Encoded {
  const { input } = kept
  return {
    ...kept,
    input: {
      id: input.id,
      budgets: input.budgets.map(({ limit, units, ...rest }) => ({
        ...rest,
        limit: 'units' in limit ? { units: limit.units.toString() } : { key: limit.key },
        ...(units === undefined ? {} : { units: units.toString() }),
      })),
      charges: input.charges.map(String),
      ...(input.counters ? { counters: input.counters.map((c) => ({ ...c, units: c.units.toString() })) } : {}),
      ...(input.records ? { records: input.records } : {}),
      ...(input.once === undefined ? {} : { once: input.once }),
    },
  }
}

/** A kept settlement read back from its JSON; throws a TypeError when the JSON is not one. */
export function decodeSettlement(value: unknown): KeptSettlement {
  const encoded = value as Encoded
  const input = encoded?.input
  if (typeof encoded?.id !== 'string' || typeof encoded.org_id !== 'string' || !input || !Array.isArray(input.budgets) || !Array.isArray(input.charges))
    throw new TypeError('not a kept settlement')
  if (encoded.kind !== 'charge' && encoded.kind !== 'release') throw new TypeError(`unknown settlement kind ${JSON.stringify(encoded.kind)}`)
  return {
    id: encoded.id,
    kind: encoded.kind,
    org_id: encoded.org_id,
    since: Number(encoded.since) || 0,
    input: {
      id: input.id,
      budgets: input.budgets.map(({ limit, units, ...rest }) => ({
        ...rest,
        limit: 'units' in limit ? { units: BigInt(limit.units) } : { key: limit.key },
        ...(units === undefined ? {} : { units: BigInt(units) }),
      })),
      charges: input.charges.map((c) => BigInt(c)),
      ...(input.counters ? { counters: input.counters.map((c) => ({ ...c, units: BigInt(c.units) })) } : {}),
      ...(input.records ? { records: input.records } : {}),
      ...(input.once === undefined ? {} : { once: input.once }),
    },
  }
}

/** A journal line: a settlement kept, or one done with (landed, or given up and logged). */
type Line = { op: 'keep'; settlement: Encoded } | { op: 'done'; id: string }

/**
 * The local journal of kept settlements (docs/operations.md#settlements-that-fail): JSON lines, a `keep` line per
 * settlement kept and a `done` line when it landed or was given up, so that a process killed with settlements pending
 * leaves them for the next start. A `keep` line is flushed to the disk (fdatasync) before the request goes on; a
 * `done` line is not (lost, the settlement is tried once more at the next start, where it does nothing). The file is
 * rewritten with what is pending when it has far more lines than that, and emptied when nothing is.
 */
export interface SettlementJournal {
  readonly path: string
  /** True while a write failed and the file may miss a kept settlement (readiness fails: docs/operations.md). */
  readonly failing: boolean
  /** Appends a kept settlement and flushes it to the disk. Never throws: a failure is logged and makes `failing` true. */
  keep(settlement: KeptSettlement): Promise<void>
  /** Appends that a settlement is done with (landed or given up); compacts the file when it is due. Never throws. */
  done(id: string): Promise<void>
  /** Waits for the writes under way, then closes the file (what is still pending stays in it). */
  close(): Promise<void>
}

// Journals open in this process: two gateways writing one file would rewrite each other's lines away.
const openPaths = new Set<string>()

/** The lines of a journal file, read at start: the settlements kept and not done, oldest first. */
function readPending(path: string, logger: Logger): KeptSettlement[] {
  let text: string
  try {
    text = fs().readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw new TypeError(`model-gateway: settlementRetries.journal: cannot read ${path}: ${(error as Error).message}`)
  }
  const pending = new Map<string, KeptSettlement>()
  let bad = 0
  for (const text_ of text.split('\n')) {
    if (!text_.trim()) continue
    try {
      const line = JSON.parse(text_) as Line
      if (line.op === 'keep') {
        const kept = decodeSettlement(line.settlement)
        pending.set(kept.id, kept)
      } else if (line.op === 'done' && typeof line.id === 'string') pending.delete(line.id)
      else bad++
    } catch {
      // A line cut short by a process killed while writing it (its settlement was then never acknowledged), or damage.
      bad++
    }
  }
  if (bad) logger.warn(`settlement journal ${path}: ${bad} line(s) could not be read and were skipped`)
  return [...pending.values()]
}

// Flushes a directory's entry of a renamed file (where the platform allows it).
function syncDirectory(path: string) {
  try {
    const fd = fs().openSync(paths().dirname(path), 'r')
    try {
      fs().fsyncSync(fd)
    } finally {
      fs().closeSync(fd)
    }
  } catch {
    // Not every platform or file system can sync a directory; the rename is still atomic.
  }
}

const keepLine = (settlement: KeptSettlement) => `${JSON.stringify({ op: 'keep', settlement: encodeSettlement(settlement) })}\n`

/**
 * Opens the journal at `path` (created if absent; its folder must exist): returns what it holds pending, and the
 * journal, rewritten with those alone. `pending` is the settlements pending at any time (by hold id), for the rewrites.
 * Throws a TypeError naming the option when the file cannot be read or written, or is already open in this process.
 */
export function openSettlementJournal(
  path: string,
  pending: ReadonlyMap<string, KeptSettlement>,
  logger: Logger,
): { journal: SettlementJournal; pending: KeptSettlement[] } {
  if (openPaths.has(path)) throw new TypeError(`model-gateway: settlementRetries.journal: ${path} is already the journal of another gateway in this process`)
  const found = readPending(path, logger)
  const tmp = `${path}.tmp`
  try {
    fs().writeFileSync(tmp, found.map(keepLine).join(''))
    const fd = fs().openSync(tmp, 'r+')
    fs().fsyncSync(fd)
    fs().closeSync(fd)
    fs().renameSync(tmp, path)
    syncDirectory(path)
  } catch (error) {
    throw new TypeError(`model-gateway: settlementRetries.journal: cannot write ${path}: ${(error as Error).message}`)
  }
  openPaths.add(path)

  let lines = found.length
  let failing = false
  let closed = false
  let handle: Promise<FileHandle> | undefined
  let queue: Promise<void> = Promise.resolve()
  const file = () => (handle ??= files().open(path, 'a'))
  // Every write in order, one at a time; a failure is logged, marks the journal failing and asks for a rewrite.
  const serial = (what: string, write: () => Promise<void>): Promise<void> =>
    (queue = queue.then(write).catch((error) => {
      failing = true
      logger.error(`settlement journal ${path}: ${what} failed; pending settlements are kept in memory and the file is rewritten at the next write`, {
        error: (error as Error).message,
      })
    }))
  // The file rewritten with the settlements pending now: a temporary file flushed, renamed over it.
  const rewrite = async () => {
    const list = [...pending.values()]
    const out = await files().open(tmp, 'w')
    try {
      await out.writeFile(list.map(keepLine).join(''))
      await out.datasync()
    } finally {
      await out.close()
    }
    const old = handle
    handle = undefined
    await old?.then((h) => h.close()).catch(() => undefined)
    await files().rename(tmp, path)
    syncDirectory(path)
    lines = list.length
    failing = false
  }
  const append = async (text: string, flush: boolean) => {
    const h = await file()
    await h.appendFile(text)
    if (flush) await h.datasync()
    lines++
  }

  const journal: SettlementJournal = {
    path,
    get failing() {
      return failing
    },
    keep: (settlement) =>
      serial('writing a kept settlement', async () => {
        if (closed) throw new Error('the journal is closed')
        if (failing) return rewrite()
        await append(keepLine(settlement), true)
      }),
    done: (id) =>
      serial('marking a settlement done', async () => {
        if (closed) return
        const left = pending.size
        // Nothing pending: the file is emptied; far more lines than pending settlements: rewritten with those.
        if (failing || left === 0 || lines > 2 * left + 1000) return rewrite()
        await append(`${JSON.stringify({ op: 'done', id })}\n`, false)
      }),
    async close() {
      closed = true
      await queue
      await handle?.then((h) => h.close()).catch(() => undefined)
      handle = undefined
      openPaths.delete(path)
    },
  }
  return { journal, pending: found }
}
