import type { Storage } from 'unstorage'
import { type Lock, lockFor } from './atomic-local'
import type { AtomicOps, Budget, CounterCharge, HoldOps } from './engine-types'
import { RecordNotWrittenError } from './record-not-written'
import { createRecords, parse } from './records'

/** The holds of one budget as stored: hold id → units (decimal string) and expiry (epoch ms). */
type HoldsRecord = Record<string, { units: string; expires: number }>

// True when a record holds any hold: its known count, else a look at its keys.
function hasHolds(record: HoldsRecord): boolean {
  const known = totals.get(record)
  if (known) return known.count > 0
  for (const _ in record) return true
  return false
}

/**
 * The live total, count and earliest expiry of a holds record kept as a live object (the gateway's own memory storage),
 * so that placing a hold does not add up every hold of the budget again. One table for the process, as the locks are:
 * two gateways over one memory storage change the same records. A record read afresh (files) has no entry.
 */
const totals = new WeakMap<HoldsRecord, { units: bigint; earliest: number; count: number }>()

/**
 * Holds for drivers without atomic operations of their own (memory, fs, …): every place and settle of a request runs
 * under the lock of its first budget (the org's, so every request of an org is serialised there), reading and adding
 * the counters through the local atomic operations. Exact within one process, and across the processes over one
 * folder of files (the lock is also the folder's: lockFor).
 */
export function createLocalHolds(storage: Storage, atomic: AtomicOps): HoldOps {
  const records = createRecords(storage)
  // One engine per mount, so one lock table for all its keys: looked up once.
  let lock: Lock | undefined
  const lockOf = (key: string): Lock => (lock ??= lockFor(storage, key))
  // Holds records are only read and written here: kept live (as objects) in the gateway's own memory storage.
  const read = async (key: string) => ((await records.get(key)) ?? {}) as HoldsRecord
  const write = async (key: string, record: HoldsRecord) => {
    if (hasHolds(record)) await records.setLive(key, record)
    else await records.remove(key)
  }
  // Live holds of a record in units; expired ones are dropped from `record` (the caller writes it back). While no hold
  // of a live record can have expired (its earliest expiry is ahead), its known total answers.
  const liveUnits = (record: HoldsRecord, now: number): { units: bigint; pruned: boolean } => {
    const known = totals.get(record)
    if (known && known.earliest > now) return { units: known.units, pruned: false }
    let units = 0n
    let earliest = Number.POSITIVE_INFINITY
    let count = 0
    let pruned = false
    for (const id in record) {
      const hold = record[id]
      if (hold.expires <= now) {
        delete record[id]
        pruned = true
      } else {
        units += BigInt(hold.units)
        count++
        if (hold.expires < earliest) earliest = hold.expires
      }
    }
    totals.set(record, { units, earliest, count })
    return { units, pruned }
  }
  // A hold added to, or removed from, a record: its known total follows (the earliest expiry stays a lower bound).
  const add = (record: HoldsRecord, id: string, units: bigint, expires: number) => {
    record[id] = { units: units.toString(), expires }
    const known = totals.get(record)
    if (known) {
      known.units += units
      known.count++
      if (expires < known.earliest) known.earliest = expires
    }
  }
  const remove = (record: HoldsRecord, id: string) => {
    const known = totals.get(record)
    if (known) {
      known.units -= BigInt(record[id].units)
      known.count--
    }
    delete record[id]
  }
  const ceiling = (budget: Budget) => ('units' in budget.limit ? Promise.resolve(budget.limit.units) : atomic.getUnits(budget.limit.key))
  // What was spent against a budget: its counter and any others that count too, in its window when it resets.
  const spent = async (budget: Budget) => {
    const counted = await Promise.all([budget.usedKey, ...(budget.alsoUsed ?? [])].map((key) => atomic.getUnits(key, budget.usedWindow)))
    return counted.reduce((sum, units) => sum + units, 0n)
  }

  // A holds record read at once from the gateway's own memory storage (a live object, or JSON text parsed).
  const holdsIn = (map: Map<string, unknown>, key: string): HoldsRecord => {
    const raw = map.get(key)
    return (raw === undefined || raw === null ? {} : parse(raw)) as HoldsRecord
  }
  const writeIn = (map: Map<string, unknown>, key: string, record: HoldsRecord) => {
    if (hasHolds(record)) map.set(key, record)
    else map.delete(key)
  }
  // The maps of `keys` when every one of them is in the gateway's own memory storage, else undefined.
  const mapsOf = (keys: string[]): Map<string, unknown>[] | undefined => {
    const maps: Map<string, unknown>[] = []
    for (const key of keys) {
      const map = records.directMap(key)
      if (!map) return undefined
      maps.push(map)
    }
    return maps
  }
  // A budget's ceiling minus what was spent, read at once; undefined when a counter cannot be.
  const leftNow = (budget: Budget): bigint | undefined => {
    const limit = 'units' in budget.limit ? budget.limit.units : atomic.unitsNow?.(budget.limit.key)
    if (limit === undefined) return undefined
    let left = limit
    const used = atomic.unitsNow?.(budget.usedKey, budget.usedWindow)
    if (used === undefined) return undefined
    left -= used
    for (const key of budget.alsoUsed ?? []) {
      const also = atomic.unitsNow?.(key, budget.usedWindow)
      if (also === undefined) return undefined
      left -= also
    }
    return left
  }
  // The org's lock idle and every record and counter of the step in the gateway's own memory storage, idle too: the
  // step runs at once, as one synchronous block (nothing else runs meanwhile: the same reads and writes as under the
  // lock, so their order within the block is not seen), with no lock and no promise of its own (docs/performance.md#where-the-time-goes).
  // Otherwise (files, a busy key) undefined, and the caller takes the lock.
  const placeNow = ({ id, units, expiresAt, now, budgets }: Parameters<HoldOps['place']>[0]) => {
    const first = budgets[0].holdsKey
    if (!lockOf(first).idle?.(first)) return undefined
    const maps = mapsOf(budgets.map((b) => b.holdsKey))
    if (!maps) return undefined
    const lefts: bigint[] = []
    for (const budget of budgets) {
      const left = leftNow(budget)
      if (left === undefined) return undefined
      lefts.push(left)
    }
    const held = budgets.map((b, i) => holdsIn(maps[i], b.holdsKey))
    if (id in held[0]) return { ok: true as const }
    for (let i = 0; i < budgets.length; i++) {
      const { units: live, pruned } = liveUnits(held[i], now)
      const available = lefts[i] - live
      if (available < (budgets[i].units ?? units)) {
        if (pruned) writeIn(maps[i], budgets[i].holdsKey, held[i])
        return { ok: false as const, index: i, available }
      }
    }
    for (let i = 0; i < budgets.length; i++) {
      add(held[i], id, budgets[i].units ?? units, expiresAt)
      writeIn(maps[i], budgets[i].holdsKey, held[i])
    }
    return { ok: true as const }
  }
  const settleNow = ({ id, budgets, charges, counters = [], records: written = [], once }: Parameters<HoldOps['settle']>[0]): boolean => {
    const first = budgets[0].holdsKey
    if (!lockOf(first).idle?.(first) || !atomic.addCountersAtOnce) return false
    const maps = mapsOf(budgets.map((b) => b.holdsKey))
    if (!maps) return false
    const onceMap = once === undefined ? undefined : records.directMap(once)
    if (once !== undefined && !onceMap) return false
    for (const record of written) if (typeof record.value !== 'object' || record.value === null || !records.directMap(record.key)) return false
    // Run already (the same settlement made again): its once record exists.
    const ran = onceMap?.get(once!)
    if (ran !== undefined && ran !== null) return true
    const changes: CounterCharge[] = []
    for (let i = 0; i < budgets.length; i++) if (charges[i]) changes.push({ key: budgets[i].usedKey, units: charges[i] })
    for (const c of counters) changes.push(c)
    // Every counter at once, or none (one is busy: the lock's path does the whole step).
    if (!atomic.addCountersAtOnce(changes)) return false
    for (let i = 0; i < budgets.length; i++) {
      const record = holdsIn(maps[i], budgets[i].holdsKey)
      if (id in record) {
        remove(record, id)
        writeIn(maps[i], budgets[i].holdsKey, record)
      }
    }
    let failure: unknown
    for (const record of written) {
      try {
        records.setNow(record.key, record.value as object)
      } catch (error) {
        failure ??= error
      }
    }
    if (failure !== undefined) throw new RecordNotWrittenError(failure)
    return true
  }

  return {
    kind: 'local',
    place: (input) => {
      const placed = placeNow(input)
      return placed ? Promise.resolve(placed) : placeLocked(input)
    },
    settle: (input) => {
      try {
        if (settleNow(input)) return Promise.resolve()
      } catch (error) {
        return Promise.reject(error)
      }
      return settleLocked(input)
    },
    renew: ({ id, budgets, expiresAt, now }) =>
      lockOf(budgets[0].holdsKey)(budgets[0].holdsKey, async () => {
        let renewed = 0
        for (const budget of budgets) {
          const record = await read(budget.holdsKey)
          const hold = record[id]
          if (!hold || hold.expires <= now) continue
          record[id] = { units: hold.units, expires: expiresAt } // later: the known earliest expiry stays a lower bound
          await write(budget.holdsKey, record)
          renewed++
        }
        return renewed
      }),
    held: async (budget, now) => liveUnits(await read(budget.holdsKey), now).units,
  }

  function placeLocked({ id, units, expiresAt, now, budgets }: Parameters<HoldOps['place']>[0]) {
    return lockOf(budgets[0].holdsKey)(budgets[0].holdsKey, async () => {
      const records = await Promise.all(budgets.map((b) => read(b.holdsKey)))
      // Placed already (the same call made again): placed, nothing changed.
      if (id in records[0]) return { ok: true as const }
      for (let i = 0; i < budgets.length; i++) {
        const budget = budgets[i]
        const [limit, used] = await Promise.all([ceiling(budget), spent(budget)])
        const { units: held, pruned } = liveUnits(records[i], now)
        const available = limit - used - held
        if (available < (budget.units ?? units)) {
          if (pruned) await write(budget.holdsKey, records[i])
          return { ok: false as const, index: i, available }
        }
      }
      // Added in place (the records were read under this lock; a copy per request costs as much as the holds it has).
      await Promise.all(
        budgets.map((b, i) => {
          add(records[i], id, b.units ?? units, expiresAt)
          return write(b.holdsKey, records[i])
        }),
      )
      return { ok: true as const }
    })
  }

  function settleLocked({ id, budgets, charges, counters = [], records: written = [], once }: Parameters<HoldOps['settle']>[0]) {
    return lockOf(budgets[0].holdsKey)(budgets[0].holdsKey, async () => {
      // Run already (the same settlement made again): its once record exists.
      if (once !== undefined && (await records.get(once)) !== null) return
      await Promise.all(
        budgets.map(async (b, i) => {
          const record = await read(b.holdsKey)
          if (id in record) {
            remove(record, id)
            await write(b.holdsKey, record)
          }
          if (charges[i]) await atomic.addUnits(b.usedKey, charges[i])
        }),
      )
      const counting = atomic.addCountersNow
        ? atomic.addCountersNow(counters)
        : Promise.all(counters.map((c) => (c.units ? atomic.addUnits(c.key, c.units, c.window) : undefined)))
      if (counting) await counting
      // Last, under the same lock: a failure here leaves the charge made, which the error says (the other records are
      // still written).
      let failure: unknown
      for (const record of written) await records.set(record.key, record.value).catch((error) => (failure ??= error))
      if (failure !== undefined) throw new RecordNotWrittenError(failure)
    })
  }
}
