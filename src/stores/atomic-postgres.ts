import type { Storage } from 'unstorage'
import type { AtomicOps } from './engine-types'
import { type Db0Driver, postgresTable } from './postgres'

// A ledger-unit amount as PostgreSQL reads it back: NUMERIC comes as text, whole units only.
const units = (value: unknown): bigint => BigInt(String(value ?? '0').replace(/\.0+$/, ''))
const json = (text: unknown): unknown => (text === null || text === undefined ? null : JSON.parse(String(text)))

/**
 * Atomic operations on PostgreSQL through unstorage's db0 driver (docs/operations.md#postgresql): each one a single
 * statement (a function of src/stores/postgres-schema.ts, or an INSERT … ON CONFLICT, DELETE … RETURNING, or a
 * compare-and-set UPDATE), so it is atomic across every connection and instance.
 */
export function createPostgresAtomic(storage: Storage, driver: Db0Driver): AtomicOps {
  const pg = postgresTable(storage, driver)
  const t = pg.table
  const k = pg.keyOf
  const ops: AtomicOps = {
    kind: 'postgres',
    async addUnits(key, delta, window) {
      const rows = await pg.query(
        'SELECT mg_add_units($1, $2, $3::NUMERIC, $4::BIGINT)::TEXT AS units',
        t,
        k(key),
        delta.toString(),
        window ? window.start : null,
      )
      return units(rows[0].units)
    },
    async addUnitsMany(changes) {
      if (!changes.length) return
      const list = changes.map((change) => ({ key: k(change.key), delta: change.delta.toString() }))
      await pg.query('SELECT mg_add_units_many($1, $2::JSONB)', t, JSON.stringify(list))
    },
    async getUnits(key, windowStart) {
      const rows = await pg.query('SELECT mg_units($1, $2, $3::BIGINT)::TEXT AS units', t, k(key), windowStart ?? null)
      return units(rows[0].units)
    },
    async increment(key, by = 1, ttlSeconds) {
      const rows = await pg.query('SELECT mg_increment($1, $2, $3, $4, $5) AS n', t, k(key), by, ttlSeconds ? ttlSeconds * 1000 : 0, Date.now())
      return Number(rows[0].n)
    },
    async setIfAbsent(key, value) {
      const rows = await pg.query(
        `INSERT INTO "${t}" (key, value, created_at, updated_at) VALUES ($1, $2, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP) ON CONFLICT (key) DO NOTHING RETURNING key`,
        k(key),
        JSON.stringify(value),
      )
      return rows.length === 1
    },
    async take<T>(key: string) {
      const rows = await pg.query(`DELETE FROM "${t}" WHERE key = $1 RETURNING value`, k(key))
      return (rows.length ? json(rows[0].value) : null) as T | null
    },
    async read<T>(key: string) {
      const rows = await pg.query(`SELECT value FROM "${t}" WHERE key = $1`, k(key))
      return (rows.length ? json(rows[0].value) : null) as T | null
    },
    // Compare-and-set on the stored text: `fn` runs again when another writer changed the record meanwhile.
    async update<T>(key: string, fn: (current: T | null) => T | null | undefined) {
      const id = k(key)
      for (;;) {
        const rows = await pg.query(`SELECT value FROM "${t}" WHERE key = $1`, id)
        const text = rows.length ? (rows[0].value as string | null) : null
        const current = json(text) as T | null
        const next = fn(current)
        if (next === undefined) return current
        if (next === null) {
          if (text === null) return null
          const removed = await pg.query(`DELETE FROM "${t}" WHERE key = $1 AND value = $2 RETURNING key`, id, text)
          if (removed.length) return null
          continue
        }
        const written =
          text === null
            ? await pg.query(
                `INSERT INTO "${t}" (key, value, created_at, updated_at) VALUES ($1, $2, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP) ON CONFLICT (key) DO NOTHING RETURNING key`,
                id,
                JSON.stringify(next),
              )
            : await pg.query(
                `UPDATE "${t}" SET value = $3, updated_at = CURRENT_TIMESTAMP WHERE key = $1 AND value = $2 RETURNING key`,
                id,
                text,
                JSON.stringify(next),
              )
        if (written.length) return next
      }
    },
    async claimAndAddUnits(claimKey, claim, counterKey, delta) {
      const rows = await pg.query(
        'SELECT mg_claim_and_add_units($1, $2, $3::JSONB, $4, $5::NUMERIC) AS claimed',
        t,
        k(claimKey),
        JSON.stringify(claim),
        k(counterKey),
        delta.toString(),
      )
      return rows[0].claimed === true
    },
  }
  return ops
}
