import type { Storage } from 'unstorage'
import { requireNodeBuiltin } from '../runtime/node-builtin'
import type { Logger } from '../logger'
import { customEngineOf, engineKindOf } from '../stores/engine-kind'
import type { AtomicOption } from '../stores/engine-types'
import type { GatewayMetrics } from '../metrics/gateway-metrics'
import { fromUnits } from './money'
import { type KeptSettlement, openSettlementJournal, type SettleInput, type SettlementJournal } from './settlement-journal'

/** The first retry of a kept settlement comes this long after it failed; each round that lands nothing doubles it. */
export const SETTLEMENT_RETRY_BASE_MS = 500
/** The longest wait between two rounds of retries. */
export const SETTLEMENT_RETRY_MAX_MS = 10_000
/** While close() waits for kept settlements, rounds come at least this often (the storage may be back any moment). */
const CLOSING_RETRY_MAX_MS = 1_000
/** Kept settlements tried at once in a round. */
const ROUND_SIZE = 16
/** A storage still failing is logged at most this often. */
const STILL_FAILING_LOG_MS = 60_000
/** Readiness fails once this share of `maxPending` is pending (docs/operations.md#settlements-that-fail). */
const NOT_READY_SHARE = 0.9

/** The `settlementRetries` option (docs/operations.md#settlements-that-fail). */
export interface SettlementRetriesOptions {
  /** Kept settlements at most; past it the oldest is given up, logged at error level to charge by hand. Default 10000. */
  maxPending?: number
  /**
   * A file (its folder must exist) where kept settlements are written until they land, so that a process that dies
   * with some pending leaves them to the next start with the same file. One file per gateway. Default: none.
   */
  journal?: string
}

/** The `settlementRetries` option with its defaults; throws a TypeError naming what is wrong. */
export function resolveSettlementRetries(option: SettlementRetriesOptions = {}): { maxPending: number; journal?: string } {
  const maxPending = option.maxPending ?? 10_000
  if (!Number.isSafeInteger(maxPending) || maxPending < 1)
    throw new TypeError('model-gateway: `settlementRetries.maxPending` must be a whole number of at least 1')
  if (option.journal !== undefined && (typeof option.journal !== 'string' || !option.journal.trim()))
    throw new TypeError('model-gateway: `settlementRetries.journal` must be a file path')
  return { maxPending, ...(option.journal ? { journal: requireNodeBuiltin('node:path', 'settlementRetries.journal').resolve(option.journal) } : {}) }
}

/**
 * True when the holds of the gateway's records run a settlement as one step that a second run with its `once` leaves
 * alone (Redis scripts, PostgreSQL functions): a failed charge may then be tried again.
 */
export function chargesOnceOn(storage: Storage, prefix: string, atomic: AtomicOption | undefined): boolean {
  if (customEngineOf(atomic)) return false
  const kind = engineKindOf(storage.getMount(prefix ? `${prefix}:` : '').driver, atomic)
  return kind === 'redis' || kind === 'postgres'
}

/** What GET /health/ready says of kept settlements. */
export interface SettlementStatus {
  ok: boolean
  pending: number
  /** The journal: `ok`, or `failing` when a write failed (pending settlements may be missing from it). */
  journal?: 'ok' | 'failing'
  error?: string
}

/**
 * The settlements of one gateway that failed because the storage did not answer, kept and tried again until they
 * land (docs/operations.md#settlements-that-fail).
 */
export interface SettlementRetries {
  /** Whether a failed settlement of this kind may be tried again on this gateway's engine. */
  retries(kind: KeptSettlement['kind']): boolean
  /** Keeps a settlement that failed, to try it again until it lands; resolves once it is kept (and in the journal). */
  keep(settlement: Omit<KeptSettlement, 'since'>, error: unknown): Promise<void>
  /** Settlements kept and not landed yet. */
  readonly pending: number
  /** Their state, for GET /health/ready. */
  status(): SettlementStatus
  /**
   * Tries what is pending until it lands or `waitMs` passed, then stops: what is left stays in the journal, or without
   * one is logged at error level to charge by hand.
   */
  close(waitMs: number): Promise<void>
}

/** What a settlement given up says, for charging it (or removing its hold) by hand. */
function handFacts(kept: KeptSettlement) {
  return {
    hold_id: kept.id,
    org_id: kept.org_id,
    kind: kept.kind,
    charge_eur: fromUnits(kept.input.charges[0] ?? 0n),
    kept_since: new Date(kept.since).toISOString(),
    once: kept.input.once,
    records: kept.input.records,
  }
}

/** A settlement that changes no money: no charge, no counter, no record (a hold released, or removed after a failed place). */
export function isRelease(input: SettleInput): boolean {
  return input.charges.every((c) => c === 0n) && !input.counters?.some((c) => c.units !== 0n) && !input.records?.length
}

/**
 * The retry queue of one gateway's settlements. `settle` runs one settlement (HoldOps.settle); `chargesOnce` says
 * that the engine runs a settlement as one step that a second run with its `once` leaves alone (Redis, PostgreSQL),
 * so a charge may be tried again; releases change no money and are tried again on every engine. With `journal`
 * (only where charges are tried again), pending settlements are written there and those a former process left are
 * tried at once.
 */
export function createSettlementRetries(input: {
  settle: (input: SettleInput) => Promise<void>
  chargesOnce: boolean
  options: Required<Pick<SettlementRetriesOptions, 'maxPending'>> & Pick<SettlementRetriesOptions, 'journal'>
  logger: Logger
  now: () => number
  metrics?: GatewayMetrics
}): SettlementRetries {
  const { settle, chargesOnce, logger, now, metrics } = input
  const { maxPending } = input.options
  // Oldest first; a settlement that fails again goes to the back, so that one that never lands blocks no other.
  const pending = new Map<string, KeptSettlement>()
  const trying = new Set<string>()
  let journal: SettlementJournal | undefined
  if (input.options.journal && !chargesOnce) {
    logger.warn(
      'settlementRetries.journal is not used: this storage is served by the in-process engine, whose failed charges are not tried again (docs/operations.md#settlements-that-fail)',
    )
  } else if (input.options.journal) {
    const opened = openSettlementJournal(input.options.journal, pending, logger)
    journal = opened.journal
    for (const kept of opened.pending) {
      pending.set(kept.id, kept)
      metrics?.settlement('kept', kept.kind)
    }
    if (opened.pending.length)
      logger.warn(`${opened.pending.length} settlement(s) a former process left pending in ${journal.path} are tried again now`, {
        hold_ids: opened.pending.slice(0, 20).map((k) => k.id),
      })
  }

  let delay = SETTLEMENT_RETRY_BASE_MS
  let timer: ReturnType<typeof setTimeout> | undefined
  let wake: (() => void) | undefined
  let running: Promise<void> | undefined
  let closing = false
  let stopped = false
  let lastError: string | undefined
  let loggedFailingAt = Number.NEGATIVE_INFINITY
  let emptied: (() => void)[] = []

  const giveUp = (kept: KeptSettlement, reason: 'bound' | 'closed') => {
    pending.delete(kept.id)
    if (reason === 'bound' && journal) void journal.done(kept.id)
    metrics?.settlement('given_up', kept.kind, reason)
    const why = reason === 'bound' ? `more than settlementRetries.maxPending (${maxPending}) settlements were pending` : 'the gateway closed before it landed'
    if (kept.kind === 'release') logger.warn(`a hold's release was given up (${why}); the hold expires by itself after holdTtlSeconds`, handFacts(kept))
    else
      logger.error(
        `a settlement was given up (${why}): charge this request by hand, unless GET /generation finds its usage record's id (then it was charged)`,
        handFacts(kept),
      )
  }

  // Rounds of retries until nothing is pending: a round that lands something is followed at once by the next; one
  // that lands nothing (the storage still fails) waits, twice as long each time up to SETTLEMENT_RETRY_MAX_MS.
  const run = async () => {
    while (pending.size && !stopped) {
      const round = [...pending.values()].filter((kept) => !trying.has(kept.id)).slice(0, ROUND_SIZE)
      let landed = 0
      await Promise.all(
        round.map(async (kept) => {
          trying.add(kept.id)
          metrics?.settlement('retried', kept.kind)
          try {
            await settle(kept.input)
            landed++
            pending.delete(kept.id)
            metrics?.settlement('landed', kept.kind)
            logger.info('a kept settlement landed', { hold_id: kept.id, org_id: kept.org_id, kind: kept.kind, pending_ms: now() - kept.since })
            if (journal) await journal.done(kept.id)
          } catch (error) {
            lastError = (error as Error)?.message ?? String(error)
            if (pending.delete(kept.id)) pending.set(kept.id, kept)
          } finally {
            trying.delete(kept.id)
          }
        }),
      )
      if (!pending.size) {
        delay = SETTLEMENT_RETRY_BASE_MS
        const waiting = emptied
        emptied = []
        for (const done of waiting) done()
      }
      if (landed) {
        delay = SETTLEMENT_RETRY_BASE_MS
        continue
      }
      if (!pending.size || stopped) break
      if (now() - loggedFailingAt >= STILL_FAILING_LOG_MS) {
        loggedFailingAt = now()
        logger.warn(`${pending.size} settlement(s) pending: the storage still fails; tried again in ${delay} ms`, { error: lastError })
      }
      await new Promise<void>((resolve) => {
        wake = resolve
        const t = setTimeout(resolve, closing ? Math.min(delay, CLOSING_RETRY_MAX_MS) : delay)
        t.unref?.()
      })
      wake = undefined
      delay = Math.min(delay * 2, SETTLEMENT_RETRY_MAX_MS)
    }
  }
  const start = () => {
    if (running || stopped) return
    running = run().finally(() => {
      running = undefined
      // Kept while the last round ended: a round of its own.
      if (pending.size && !stopped) schedule(delay)
    })
  }
  const schedule = (ms: number) => {
    if (timer || running || stopped) return
    timer = setTimeout(() => {
      timer = undefined
      start()
    }, ms)
    timer.unref?.()
  }
  if (pending.size) schedule(0)

  return {
    retries: (kind) => !stopped && (kind === 'release' || chargesOnce),
    async keep(settlement, error) {
      const kept: KeptSettlement = { ...settlement, since: now() }
      // Closed: nothing would try it again (a release left by a placement that failed during the shutdown).
      if (stopped) return giveUp(kept, 'closed')
      pending.set(kept.id, kept)
      metrics?.settlement('kept', kept.kind)
      // With what a process that dies before it lands (and has no journal) leaves to charge by hand.
      logger.warn(`a settlement failed; it is kept and tried again until it lands (${pending.size} pending)`, {
        ...handFacts(kept),
        error: (error as Error)?.message ?? String(error),
      })
      // Past the bound, the oldest that is not being tried is given up (this one when every other is).
      if (pending.size > maxPending) {
        for (const oldest of pending.values()) {
          if (trying.has(oldest.id)) continue
          giveUp(oldest, 'bound')
          break
        }
      }
      if (pending.has(kept.id) && journal) await journal.keep(kept)
      schedule(SETTLEMENT_RETRY_BASE_MS)
    },
    get pending() {
      return pending.size
    },
    status() {
      const full = pending.size >= Math.ceil(maxPending * NOT_READY_SHARE)
      const failing = journal?.failing ?? false
      return {
        ok: !full && !failing,
        pending: pending.size,
        ...(journal ? { journal: failing ? ('failing' as const) : ('ok' as const) } : {}),
        ...(full ? { error: 'too many settlements pending' } : failing ? { error: 'the settlement journal cannot be written' } : {}),
      }
    },
    async close(waitMs) {
      closing = true
      wake?.()
      if (pending.size) {
        if (timer) clearTimeout(timer)
        timer = undefined
        start()
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.max(0, waitMs))
          emptied.push(() => {
            clearTimeout(t)
            resolve()
          })
        })
      }
      stopped = true
      if (timer) clearTimeout(timer)
      wake?.()
      const left = [...pending.values()]
      if (left.length && journal)
        logger.warn(
          `${left.length} settlement(s) still pending at close are left in ${journal.path}: they are tried again when a gateway starts with this journal`,
          { hold_ids: left.slice(0, 20).map((k) => k.id) },
        )
      else for (const kept of left) giveUp(kept, 'closed')
      await journal?.close()
    },
  }
}
