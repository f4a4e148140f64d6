// One process of the multi-process conformance test (test/integration/atomic-processes.test.ts): opens the storage
// WORKER_STORAGE describes ({"kind":"redis","url","base"} | {"kind":"redis-cluster","nodes","base"} |
// {"kind":"postgres","url","table"} | {"kind":"fs","base"}), once every process is ready runs the same operations as the others at once, and prints what it
// saw as one JSON line.
import { createDatabase } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import redisDriver from 'unstorage/drivers/redis'
import { createAtomicOps } from '../../src/stores/atomic'
import { createHoldOps } from '../../src/stores/holds'
import { postgresDriver } from '../../src/stores/postgres-driver'

const spec = JSON.parse(process.env.WORKER_STORAGE!) as
  | { kind: 'redis'; url: string; base: string }
  | { kind: 'redis-cluster'; nodes: { host: string; port: number }[]; base: string }
  | { kind: 'postgres'; url: string; table: string }
  | { kind: 'fs'; base: string }
const worker = Number(process.env.WORKER_INDEX)
let storage: Storage
let database: ReturnType<typeof createDatabase> | undefined
if (spec.kind === 'postgres') {
  database = createDatabase(postgresql({ url: spec.url }))
  storage = createStorage({ driver: postgresDriver({ database, tableName: spec.table }) })
} else if (spec.kind === 'fs') storage = createStorage({ driver: fsDriver({ base: spec.base }) })
else if (spec.kind === 'redis') storage = createStorage({ driver: redisDriver({ url: spec.url, base: spec.base }) })
else storage = createStorage({ driver: redisDriver({ cluster: spec.nodes, base: spec.base }) })

const atomic = createAtomicOps(storage)
const holds = createHoldOps(storage)
const ROUNDS = Number(process.env.WORKER_ROUNDS || 100)
// Ready: wait for the others, so that every process runs its operations at the same time.
await new Promise((go) => {
  process.once('message', go)
  process.send!('ready')
})
const start = Date.now()
const budget = { usedKey: 'gateway:mp:used', holdsKey: 'gateway:mp:holds', limit: { key: 'gateway:mp:granted' } }

// All at once, in this process and the others: counters, windowed counters, claims, read-modify-writes, holds (placed
// only: a hold settled while others still place would free its units for them).
const [claims, claimed, placed] = await Promise.all([
  Promise.all(Array.from({ length: 20 }, (_, i) => atomic.setIfAbsent(`gateway:mp:once:${i}`, { worker }))),
  Promise.all(Array.from({ length: 20 }, (_, i) => atomic.claimAndAddUnits(`gateway:mp:claim:${i}`, { worker }, 'gateway:mp:claimed-units', 7n))),
  Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      holds.place({ id: `w${worker}-${i}`, units: 1_000_000_000_000n, expiresAt: Date.now() + 60_000, now: Date.now(), budgets: [budget] }),
    ),
  ),
  Promise.all(Array.from({ length: ROUNDS }, () => atomic.addUnits('gateway:mp:counter', 100_000_000_000n))),
  Promise.all(Array.from({ length: ROUNDS }, () => atomic.increment('gateway:mp:window', 1, 60))),
  Promise.all(Array.from({ length: 30 }, () => atomic.update<{ n: number }>('gateway:mp:record', (current) => ({ n: (current?.n ?? 0) + 1 })))),
])
const mine = placed.map((result, i) => (result.ok ? `w${worker}-${i}` : '')).filter(Boolean)
process.stdout.write(
  `${JSON.stringify({ created: claims.filter(Boolean).length, claimed: claimed.filter(Boolean).length, placed: mine, ms: Date.now() - start })}\n`,
)
await storage.dispose()
await database?.dispose()
process.exit(0)
