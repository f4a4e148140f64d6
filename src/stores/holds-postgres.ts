import type { Storage } from 'unstorage'
import type { HoldOps } from './engine-types'
import { type Db0Driver, postgresTable } from './postgres'

/**
 * Holds on PostgreSQL through unstorage's db0 driver (docs/operations.md#postgresql): one function call places a
 * hold on every budget or none, one settles it with its charges, counters and ledger record; each runs in one
 * transaction under the first budget's advisory lock, so instances on one database never over-spend.
 */
export function createPostgresHolds(storage: Storage, driver: Db0Driver): HoldOps {
  const pg = postgresTable(storage, driver)
  const t = pg.table
  const k = pg.keyOf
  return {
    kind: 'postgres',
    async place({ id, units, expiresAt, now, budgets }) {
      const list = budgets.map((b) => ({
        holdsKey: k(b.holdsKey),
        usedKey: k(b.usedKey),
        usedWindow: b.usedWindow ?? null,
        alsoUsed: (b.alsoUsed ?? []).map(k),
        limitKey: 'key' in b.limit ? k(b.limit.key) : null,
        limitUnits: 'units' in b.limit ? b.limit.units.toString() : null,
        units: b.units === undefined ? null : b.units.toString(),
      }))
      const rows = await pg.query(
        'SELECT mg_place_hold_once($1, $2, $3::NUMERIC, $4::BIGINT, $5::BIGINT, $6::JSONB)::TEXT AS result',
        t,
        id,
        units.toString(),
        Math.ceil(expiresAt),
        Math.floor(now),
        JSON.stringify(list),
      )
      const result = JSON.parse(String(rows[0].result)) as { ok: boolean; index?: number; available?: string }
      return result.ok ? { ok: true } : { ok: false, index: result.index!, available: BigInt(result.available!.replace(/\.0+$/, '')) }
    },
    async settle({ id, budgets, charges, counters = [], records = [], once }) {
      const list = budgets.map((b) => ({ holdsKey: k(b.holdsKey), usedKey: k(b.usedKey) }))
      const charged = counters.map((c) => ({ key: k(c.key), units: c.units.toString(), windowStart: c.window ? c.window.start : null }))
      await pg.query(
        'SELECT mg_settle_hold_once($1, $2, $3::JSONB, $4::JSONB, $5::JSONB, $6::JSONB, $7)',
        t,
        id,
        JSON.stringify(list),
        JSON.stringify(charges.map(String)),
        JSON.stringify(charged),
        JSON.stringify(records.map((record) => ({ key: k(record.key), value: record.value }))),
        once === undefined ? null : k(once),
      )
    },
    async renew({ id, budgets, expiresAt, now }) {
      const keys = budgets.map((b) => k(b.holdsKey))
      const rows = await pg.query(
        'SELECT mg_renew_hold($1, $2, $3::BIGINT, $4::BIGINT, $5::JSONB) AS renewed',
        t,
        id,
        Math.ceil(expiresAt),
        Math.floor(now),
        JSON.stringify(keys),
      )
      return Number(rows[0].renewed)
    },
    async held(budget, now) {
      const rows = await pg.query(`SELECT value FROM "${t}" WHERE key = $1`, k(budget.holdsKey))
      const holds = rows.length && rows[0].value ? (JSON.parse(String(rows[0].value)) as Record<string, { units: string; expires: number }>) : {}
      let units = 0n
      for (const hold of Object.values(holds)) if (hold.expires > now) units += BigInt(hold.units)
      return units
    },
  }
}
