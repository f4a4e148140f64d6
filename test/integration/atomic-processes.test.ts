import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDatabase } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import redisDriver from 'unstorage/drivers/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAtomicOps } from '../../src/stores/atomic'
import { createHoldOps } from '../../src/stores/holds'
import { listKeys } from '../../src/stores/list-keys'
import { postgresDriver } from '../../src/stores/postgres-driver'
import { hasRedisServer, useRedisCluster } from '../helpers/redis-cluster'
import { dropPostgresTable } from '../helpers/storages'

const WORKERS = 3
const ROUNDS = 100
const worker = fileURLToPath(new URL('../helpers/atomic-worker.ts', import.meta.url))

interface Seen {
  created: number
  claimed: number
  placed: string[]
}
// Runs the worker in WORKERS processes at once over the storage `spec` describes: each one opens its storage and says
// so, and all start together once every one is ready (their start-up times differ by more than their work takes).
function runWorkers(spec: object): Promise<Seen[]> {
  let ready = 0
  const children: ReturnType<typeof fork>[] = []
  return Promise.all(
    Array.from(
      { length: WORKERS },
      (_, i) =>
        new Promise<Seen>((resolve, reject) => {
          const child = fork(worker, [], {
            execArgv: ['--import', 'tsx'],
            env: { ...process.env, WORKER_STORAGE: JSON.stringify(spec), WORKER_INDEX: String(i), WORKER_ROUNDS: String(ROUNDS) },
            stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
          })
          children.push(child)
          child.once('message', () => {
            if (++ready === WORKERS) for (const each of children) each.send('go')
          })
          let out = ''
          child.stdout!.setEncoding('utf8')
          child.stdout!.on('data', (text: string) => (out += text))
          child.once('exit', (code) =>
            code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`worker ${i} exited ${code}: ${out}`)),
          )
        }),
    ),
  )
}

/**
 * The conformance suite across processes: three processes, each with its own connection, run counters, windowed
 * counters, exactly-once creates and claims, read-modify-writes and holds on the same keys at once.
 */
function describeAcrossProcesses(open: () => { spec: object; storage: Storage; cleanup(): Promise<void> }) {
  let opened: ReturnType<typeof open>
  beforeAll(() => {
    opened = open()
  })
  afterAll(() => opened?.cleanup())

  it(`${WORKERS} processes at once: every counter exact, every claim once, holds never past the budget`, async () => {
    const atomic = createAtomicOps(opened.storage)
    // A budget of 50 units for 90 holds of one unit across the processes.
    await atomic.addUnits('gateway:mp:granted', 50_000_000_000_000n)
    const seen = await runWorkers(opened.spec)
    const sum = (field: 'created' | 'claimed') => seen.reduce((n, s) => n + s[field], 0)
    expect(await atomic.getUnits('gateway:mp:counter')).toBe(BigInt(WORKERS * ROUNDS) * 100_000_000_000n)
    expect(await atomic.increment('gateway:mp:window', 0)).toBe(WORKERS * ROUNDS)
    expect(sum('created')).toBe(20)
    expect(sum('claimed')).toBe(20)
    expect(await atomic.getUnits('gateway:mp:claimed-units')).toBe(140n)
    expect(await atomic.read('gateway:mp:record')).toEqual({ n: WORKERS * 30 })
    // Exactly the budget's 50 of the 90 holds, whichever processes won them; then settled: half charged, half released.
    const placed = seen.flatMap((s) => s.placed)
    expect(placed).toHaveLength(50)
    const holds = createHoldOps(opened.storage)
    const budget = { usedKey: 'gateway:mp:used', holdsKey: 'gateway:mp:holds', limit: { key: 'gateway:mp:granted' } }
    expect(await holds.held(budget, Date.now())).toBe(50_000_000_000_000n)
    await Promise.all(placed.map((id, n) => holds.settle({ id, budgets: [budget], charges: [n % 2 === 0 ? 1_000_000_000_000n : 0n] })))
    expect(await atomic.getUnits('gateway:mp:used')).toBe(25_000_000_000_000n)
    expect(await holds.held(budget, Date.now())).toBe(0n)
  }, 60_000)
}

// Files: every process takes the folder's lock per key (docs/operations.md#several-instances).
describe('atomic operations across processes: files in one folder', () => {
  describeAcrossProcesses(() => {
    const base = mkdtempSync(join(tmpdir(), 'mg-mp-fs-'))
    const storage = createStorage({ driver: fsDriver({ base }) })
    return {
      spec: { kind: 'fs', base },
      storage,
      async cleanup() {
        await storage.dispose()
        rmSync(base, { recursive: true, force: true })
      },
    }
  })
})

describe.skipIf(!process.env.REDIS_URL)('atomic operations across processes: redis (REDIS_URL)', () => {
  describeAcrossProcesses(() => {
    const url = process.env.REDIS_URL!
    const base = `mg-mp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
    const storage = createStorage({ driver: redisDriver({ url, base }) })
    const cleanup = async () => {
      await storage.clear()
      await storage.dispose()
    }
    return { spec: { kind: 'redis', url, base }, storage, cleanup }
  })
})

describe.skipIf(!process.env.DATABASE_URL)('atomic operations across processes: postgres (DATABASE_URL)', () => {
  describeAcrossProcesses(() => {
    const url = process.env.DATABASE_URL!
    const table = `mg_mp_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    const database = createDatabase(postgresql({ url }))
    const storage = createStorage({ driver: postgresDriver({ database, tableName: table }) })
    return {
      spec: { kind: 'postgres', url, table },
      storage,
      async cleanup() {
        await dropPostgresTable(database, table)
        await storage.dispose()
        await database.dispose()
      },
    }
  })
})

describe.skipIf(!hasRedisServer())('atomic operations across processes: redis cluster (three primaries started here)', () => {
  const nodes = useRedisCluster()
  describeAcrossProcesses(() => {
    const base = `{mg-mp-${process.pid}}`
    const storage = createStorage({ driver: redisDriver({ cluster: nodes(), base }) })
    return {
      spec: { kind: 'redis-cluster', nodes: nodes(), base },
      storage,
      async cleanup() {
        for (const key of await listKeys(storage, '')) await storage.removeItem(key)
        await storage.dispose()
      },
    }
  })
})
