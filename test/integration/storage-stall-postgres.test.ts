/**
 * A PostgreSQL that stops answering (docs/operations.md#when-the-storage-fails), over real HTTP: the gateway's records
 * table locked (`LOCK TABLE … IN ACCESS EXCLUSIVE MODE` from an admin connection, as a migration or a VACUUM FULL
 * does), under two gateway instances, for longer than `requestTimeoutMs`. Every request answers within
 * `storageTimeoutMs` and a margin, a 503 naming the storage and the bound; requests already served end while their
 * settlement waits; once the lock is gone the gateways serve again by themselves and the money reconciles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { createDatabase, type Database } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { postgresDriver } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { expectReconciled, expectStorageTimeout, type TimedAnswer, timed } from '../helpers/outage'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { dropPostgresTable } from '../helpers/storages'
import { fakeUpProvider } from '../helpers/providers'

const DATABASE_URL = process.env.DATABASE_URL
const BOUND_MS = 2000
// What an answer may take past the bound: the event loop, the HTTP round trip, a busy 2-core machine.
const MARGIN_MS = 1500
const LOCK_MS = 12_000
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.skipIf(!DATABASE_URL)('a stalled PostgreSQL (its records table locked; DATABASE_URL)', () => {
  const table = `mg_stall_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const databases: Database[] = []
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway

  // One gateway instance with a connection of its own to the table.
  const instance = () => {
    const database = createDatabase(postgresql({ url: DATABASE_URL! }))
    databases.push(database)
    return startGateway({
      storage: createStorage({ driver: postgresDriver({ database, tableName: table }) }),
      storageTimeoutMs: BOUND_MS,
      requestTimeoutMs: 8000,
      byok: { settlementIntervalSeconds: 0 },
      retention: { sweepIntervalSeconds: 0 },
      providers: [fakeUpProvider(upstream, pricing)],
    })
  }

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    a = await instance()
    b = await instance()
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    if (databases[0]) await dropPostgresTable(databases[0], table)
    await Promise.all(databases.map((database) => database.dispose?.()))
    await upstream?.close()
  })

  const chat = (t: TestGateway, customer: { auth: Record<string, string> }, stream: boolean) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'fake/gpt-test', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
    })
  const expectStorage503 = (answer: TimedAnswer) =>
    expectStorageTimeout(answer, {
      name: 'postgres',
      label: 'PostgreSQL',
      boundMs: BOUND_MS,
      marginMs: MARGIN_MS,
      port: Number(new URL(DATABASE_URL!).port || 5432),
    })

  it(`locked ${LOCK_MS / 1000} s (requestTimeoutMs 8 s, storageTimeoutMs 2 s): every request answers within the bound, then the gateways serve again and the money reconciles`, async () => {
    const customer = await createCustomer(a.gateway, { credits: '5' })
    for (const t of [a, b]) expect((await timed(() => chat(t, customer, false))).status).toBe(200)

    // Requests in flight when the table is locked: held already, their provider answers in 1 s, their settlement waits.
    upstream.latencyMs = 1000
    const arrived = upstream.requests.length
    const inFlight = [chat(a, customer, false), chat(a, customer, true), chat(b, customer, false), chat(b, customer, true)].map((sent) => timed(() => sent))
    await expect.poll(() => upstream.requests.length - arrived, { interval: 10 }).toBe(4)
    const admin = createDatabase(postgresql({ url: DATABASE_URL! }))
    await admin.exec('BEGIN')
    await admin.exec(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`)
    const lockedAt = performance.now()
    let unlocked: Promise<void> | undefined
    const unlock = () => (unlocked ??= admin.exec('ROLLBACK').then(() => admin.dispose?.()))
    const unlockAnyway = setTimeout(() => void unlock(), LOCK_MS + 5000)
    try {
      const wave = () =>
        Promise.all(
          [a, b].flatMap((t) => [
            timed(() => chat(t, customer, false)),
            timed(() => chat(t, customer, true)),
            timed(() => t.request('/api/v1/me', { headers: customer.auth })),
            timed(() => t.request('/api/v1/credits', { headers: customer.auth })),
          ]),
        )
      for (const answer of await wave()) expectStorage503(answer)
      for (const answer of await Promise.all(inFlight)) {
        expect(answer.status).toBe(200)
        expect(answer.ms).toBeLessThan(1000 + BOUND_MS + MARGIN_MS + 500)
        if (Array.isArray(answer.body.events)) {
          expect(answer.body.events.at(-1)).toBe('[DONE]')
          expect(answer.body.events.at(-2).usage.cost_eur).toBeGreaterThan(0)
        } else expect(answer.body.choices[0].message.content).toContain('hello there')
      }
      // Past requestTimeoutMs into the lock, the same.
      await sleep(9000 - (performance.now() - lockedAt))
      for (const answer of await wave()) expectStorage503(answer)
      expect(upstream.requests.length - arrived).toBe(4)
      await sleep(LOCK_MS - (performance.now() - lockedAt))
    } finally {
      clearTimeout(unlockAnyway)
      await unlock()
      upstream.latencyMs = 0
    }

    const unlockedAt = performance.now()
    for (const t of [a, b]) {
      await expect.poll(async () => (await timed(() => chat(t, customer, false))).status, { timeout: 5000, interval: 100 }).toBe(200)
    }
    expect(performance.now() - unlockedAt).toBeLessThan(5000)
    // 2 before the lock, 4 in flight, 2 after; the money reconciles once the statements that waited ran.
    await expect.poll(() => expectReconciled(a.gateway, customer, 8).then(() => true), { timeout: 15_000, interval: 200 }).toBe(true)
    await expectReconciled(b.gateway, customer, 8)
  }, 60_000)
})
