/**
 * When the PostgreSQL under the gateway fails (docs/operations.md#postgresql), over real HTTP, with gateways in
 * processes of their own (so that a crash is an exit seen here): their connections terminated (pg_terminate_backend,
 * as a failover or a maintenance restart does) while idle and while whole and streamed chats are in flight; the
 * server stopped and started again; a gateway started while it is down; and db0's own single-client connector, whose
 * failure must not crash the process and must fail liveness. Each ends with balance = Σ usage = Σ ledger, each
 * answer served charged once, no hold left, and the gateways serving again by themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { createGateway, type Gateway, postgresDriver } from '../../src/index'
import { DEAD_CONNECTION } from '../../src/stores/postgres-liveness'
import { postgresPool } from '../../src/stores/postgres-pool'
import { version } from '../../src/version'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { FAULTS_MODEL, type GatewayProcess, type PostgresConnectorKind, postgresFaultOptions, startGatewayProcess } from '../helpers/postgres-gateway'
import { createPostgresServer, type PostgresServer, postgresBinaries } from '../helpers/postgres-server'
import { createCustomer } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { dropPostgresTable } from '../helpers/storages'

const DATABASE_URL = process.env.DATABASE_URL
const json = { 'content-type': 'application/json' }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const unique = () => `${process.pid}_${Math.random().toString(36).slice(2, 8)}`

type Customer = Awaited<ReturnType<typeof createCustomer>>

/** One chat, whole or streamed; `served` when the client got the whole answer (with its usage): its generation id. */
async function chat(url: string, customer: Customer, stream: boolean): Promise<{ status: number; served?: string }> {
  let res: Response
  try {
    res = await fetch(`${url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: FAULTS_MODEL, stream, max_tokens: 20, messages: [{ role: 'user', content: 'hello there' }] }),
      signal: AbortSignal.timeout(20_000),
    })
  } catch {
    return { status: 0 }
  }
  try {
    if (!stream) {
      const body = await res.json()
      return { status: res.status, served: res.status === 200 && body.usage ? body.id : undefined }
    }
    const { events } = await readSse(res)
    const whole = res.status === 200 && events.at(-1) === '[DONE]' && events.some((e) => e?.usage) && !events.some((e) => e?.error)
    return { status: res.status, served: whole ? events[0].id : undefined }
  } catch {
    return { status: res.status }
  }
}

/** An admin connection to the server (its own, never terminated): ends every connection named `app`; how many. */
async function adminOf(url: string) {
  const admin = postgresPool({ url, application_name: 'mg-faults-admin', max: 1 })
  const count = async (sql: string, app: string) => Number(((await admin.prepare(sql).get(app)) as { n: number }).n)
  return {
    terminate: (app: string) => count('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1', app),
    connections: (app: string) => count('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', app),
    exec: (sql: string) => admin.exec(sql),
    end: () => admin.dispose(),
  }
}

/**
 * Balance decrease = Σ usage records = Σ ledger charges; every answer served has exactly one usage record, and no
 * record is doubled; nothing is held. Settlements the storage failed are retried (docs/operations.md): waits for them.
 */
async function reconcile(auditor: Gateway, customer: Customer, served: string[]) {
  const org = customer.user.org_id
  const usage = async () => auditor.admin.usage(org)
  const until = performance.now() + 15_000
  let records = await usage()
  while (served.some((id) => !records.some((r) => r.id === id)) && performance.now() < until) {
    await sleep(200)
    records = await usage()
  }
  const ids = records.map((r) => r.id)
  expect(new Set(ids).size).toBe(ids.length)
  for (const id of served) expect(ids).toContain(id)
  const ledger = (await auditor.admin.ledger(org)).filter((e) => e.kind === 'charge')
  expect(ledger).toHaveLength(records.length)
  const recorded = records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)
  const credits = await auditor.admin.getCredits(org)
  expect(toUnits(credits.total_usage)).toBe(recorded)
  expect(ledger.reduce((sum, e) => sum + toUnits(e.amount), 0n)).toBe(recorded)
  const principal = (await auditor.admin.findUserByKey(customer.key))!
  for (const budget of budgetsOf(auditor.context, principal).budgets) expect(await auditor.context.holds.held(budget, Date.now())).toBe(0n)
  return records.length
}

/** Sends chats until one is served (every 100 ms); how long that took, in ms. */
async function servedAgainWithin(url: string, customer: Customer, withinMs: number): Promise<{ ms: number; served: string[] }> {
  const started = performance.now()
  const served: string[] = []
  for (;;) {
    const result = await chat(url, customer, false)
    if (result.served) {
      served.push(result.served)
      return { ms: performance.now() - started, served }
    }
    if (performance.now() - started > withinMs) throw new Error(`not served again within ${withinMs} ms (last status ${result.status})`)
    await sleep(100)
  }
}

/** A storage over `url` for the test's own gateway (the auditor), its connections named apart from the instances'. */
function auditorOf(url: string, table: string, upstream: FakeOpenAI): Gateway {
  const storage = createStorage({ driver: postgresDriver({ url, tableName: table, application_name: `mg-auditor-${process.pid}`, max: 3 }) })
  return createGateway({ ...postgresFaultOptions(storage, upstream.url), logger: false })
}

const started: GatewayProcess[] = []
async function instance(input: { url: string; table: string; app: string; connector?: PostgresConnectorKind; upstream: FakeOpenAI }) {
  const gateway = await startGatewayProcess({ ...input, connector: input.connector ?? 'pool', upstreamUrl: input.upstream.url })
  started.push(gateway)
  return gateway
}
afterAll(async () => {
  await Promise.all(started.map((gateway) => gateway.stop()))
})

/** What a describe over DATABASE_URL opens: a fake upstream answering `slow` after `slowMs`, an auditor over `table`, an admin connection. */
async function openFixture(table: string, slowMs: number) {
  const upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs })
  return { upstream, auditor: auditorOf(DATABASE_URL!, table, upstream), admin: await adminOf(DATABASE_URL!) }
}

/** Closes what openFixture opened (what of it was opened) and drops `table`. */
async function closeFixture(table: string, opened: Partial<Awaited<ReturnType<typeof openFixture>>>) {
  if (opened.admin) await dropPostgresTable(opened.admin, table).catch(() => undefined)
  await opened.auditor?.close()
  await opened.auditor?.internals.storage.dispose()
  await opened.admin?.end()
  await opened.upstream?.close()
}

describe.skipIf(!DATABASE_URL)('PostgreSQL connections terminated (pg_terminate_backend, DATABASE_URL)', () => {
  const table = `mg_faults_${unique()}`
  const app = `mg-faults-${unique()}`
  let upstream: FakeOpenAI
  let auditor: Gateway
  let admin: Awaited<ReturnType<typeof adminOf>>

  beforeAll(async () => {
    ;({ upstream, auditor, admin } = await openFixture(table, 40))
  })
  afterAll(() => closeFixture(table, { upstream, auditor, admin }))

  it('idle and with whole and streamed chats in flight: no instance exits, later chats are served by themselves, each served answer is charged once and nothing stays held', async () => {
    const customer = await createCustomer(auditor, { credits: '5' })
    const gateways = [await instance({ url: DATABASE_URL!, table, app, upstream }), await instance({ url: DATABASE_URL!, table, app, upstream })]
    const served: string[] = []
    const keep = (result: { served?: string }) => result.served && served.push(result.served)

    // Idle: both pools have connections open, nothing runs on them; every one of them is terminated.
    for (const gateway of gateways) for (const stream of [false, true]) keep(await chat(gateway.url, customer, stream))
    expect(served).toHaveLength(4)
    expect(await admin.connections(app)).toBeGreaterThanOrEqual(2)
    expect(await admin.terminate(app)).toBeGreaterThanOrEqual(2)
    await sleep(300)
    for (const gateway of gateways) expect(gateway.exited()).toBeNull()
    // Served again at once, by the instances themselves.
    for (const gateway of gateways) {
      const again = await servedAgainWithin(gateway.url, customer, 5000)
      served.push(...again.served)
      expect(again.ms).toBeLessThan(5000)
    }

    // In flight: 30 chats (whole and streamed, on both instances) while every connection is terminated every 30 ms.
    let terminated = 0
    let storm = true
    const terminations = (async () => {
      while (storm) {
        terminated += await admin.terminate(app)
        await sleep(30)
      }
    })()
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(gateways[i % 2].url, customer, i % 3 !== 0)))
    storm = false
    await terminations
    expect(terminated).toBeGreaterThan(0)
    for (const result of results) keep(result)
    for (const gateway of gateways) expect(gateway.exited(), gateway.logs.join('\n')).toBeNull()

    // Afterwards every chat is served, on both instances, without a restart.
    for (const gateway of gateways) {
      for (const stream of [false, true, false]) {
        const result = await chat(gateway.url, customer, stream)
        expect(result.status).toBe(200)
        expect(result.served).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
        keep(result)
      }
      const live = await fetch(`${gateway.url}/api/v1/health`)
      expect(live.status).toBe(200)
    }
    const charged = await reconcile(auditor, customer, served)
    expect(charged).toBeGreaterThanOrEqual(served.length)
    for (const gateway of gateways) expect(gateway.exited()).toBeNull()
    // The pool's errors were logged, through the gateway's logger.
    expect(gateways.flatMap((g) => g.logs).some((line) => line.includes('a pooled connection failed'))).toBe(true)
  }, 90_000)
})

describe.skipIf(!postgresBinaries())("the PostgreSQL server stopped and started again (a cluster of the test's own)", () => {
  let server: PostgresServer
  let upstream: FakeOpenAI
  const table = `mg_restart_${unique()}`

  beforeAll(async () => {
    server = await createPostgresServer()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 20 })
  }, 60_000)
  afterAll(async () => {
    await server?.destroy()
    await upstream?.close()
  })

  const health = async (url: string) => [(await fetch(`${url}/api/v1/health`)).status, (await fetch(`${url}/api/v1/health/ready`)).status]

  it('a gateway started while PostgreSQL is down starts, is not ready, and serves once it is up', async () => {
    const gateway = await instance({ url: server.url, table, app: `mg-late-${unique()}`, upstream })
    // With db0's own connector, whose first connection failed for good, liveness fails too (and stays failed).
    const single = await instance({ url: server.url, table, app: `mg-late-db0-${unique()}`, connector: 'db0', upstream })
    expect(await health(gateway.url)).toEqual([200, 503])
    expect(await health(single.url)).toEqual([503, 503])
    await server.start()
    const auditor = auditorOf(server.url, table, upstream)
    try {
      const customer = await createCustomer(auditor, { credits: '5' })
      const since = performance.now()
      const again = await servedAgainWithin(gateway.url, customer, 5000)
      expect(performance.now() - since).toBeLessThan(5000)
      expect(await health(gateway.url)).toEqual([200, 200])
      await reconcile(auditor, customer, again.served)
      expect(gateway.exited()).toBeNull()
      expect(await health(single.url)).toEqual([503, 503])
      expect(single.exited()).toBeNull()
    } finally {
      await auditor.close()
      await auditor.internals.storage.dispose()
    }
  }, 60_000)

  it('stopped (every connection ends) and started again: liveness stays 200, readiness is 503 while it is down, and the gateway serves again by itself within seconds', async () => {
    const gateway = await instance({ url: server.url, table, app: `mg-restart-${unique()}`, upstream })
    const auditor = auditorOf(server.url, table, upstream)
    try {
      const customer = await createCustomer(auditor, { credits: '5' })
      const served: string[] = []
      for (const stream of [false, true]) {
        const result = await chat(gateway.url, customer, stream)
        expect(result.status).toBe(200)
        served.push(result.served!)
      }
      await server.stop()
      await sleep(200)
      expect(gateway.exited()).toBeNull()
      expect(await health(gateway.url)).toEqual([200, 503])
      // A chat while it is down fails at once (the connection is refused) with the storage's 503, and is not charged.
      const asked = performance.now()
      const down = await chat(gateway.url, customer, false)
      expect(performance.now() - asked).toBeLessThan(2000)
      expect(down.served).toBeUndefined()
      expect(down.status).toBe(503)

      await server.start()
      const back = await servedAgainWithin(gateway.url, customer, 5000)
      expect(back.ms).toBeLessThan(5000)
      served.push(...back.served)
      expect(await health(gateway.url)).toEqual([200, 200])
      const stream = await chat(gateway.url, customer, true)
      expect(stream.status).toBe(200)
      served.push(stream.served!)
      expect(await reconcile(auditor, customer, served)).toBe(served.length)
      expect(gateway.exited()).toBeNull()
    } finally {
      await auditor.close()
      await auditor.internals.storage.dispose()
    }
  }, 60_000)
})

describe.skipIf(!DATABASE_URL)("db0's own postgresql connector (one connection for life, DATABASE_URL)", () => {
  const table = `mg_faults_db0_${unique()}`
  const app = `mg-faults-db0-${unique()}`
  let upstream: FakeOpenAI
  let auditor: Gateway
  let admin: Awaited<ReturnType<typeof adminOf>>

  beforeAll(async () => {
    ;({ upstream, auditor, admin } = await openFixture(table, 20))
  })
  afterAll(() => closeFixture(table, { upstream, auditor, admin }))

  it('a terminated connection does not crash the process, and GET /health answers 503 naming the fix', async () => {
    const customer = await createCustomer(auditor, { credits: '5' })
    const gateway = await instance({ url: DATABASE_URL!, table, app, connector: 'db0', upstream })
    const first = await chat(gateway.url, customer, false)
    expect(first.status).toBe(200)
    expect(await fetch(`${gateway.url}/api/v1/health`).then((res) => res.status)).toBe(200)
    expect(await admin.terminate(app)).toBe(1)
    await sleep(300)
    expect(gateway.exited(), gateway.logs.join('\n')).toBeNull()
    const live = await fetch(`${gateway.url}/api/v1/health`)
    expect(live.status).toBe(503)
    expect(await live.json()).toEqual({ status: 'failing', version, checks: { storage: { ok: false, error: DEAD_CONNECTION } } })
    expect(DEAD_CONNECTION).toContain('postgresDriver({ url })')
    expect((await fetch(`${gateway.url}/api/v1/health/ready`)).status).toBe(503)
    // It stays so: db0's connector never opens another connection.
    const later = await chat(gateway.url, customer, false)
    expect(later.status).toBe(503)
    expect((await fetch(`${gateway.url}/api/v1/health`)).status).toBe(503)
    expect(gateway.exited()).toBeNull()
    expect(gateway.logs.some((line) => line.includes('"level":"error"') && line.includes("db0's postgresql connector never opens another"))).toBe(true)
    await reconcile(auditor, customer, [first.served!])
  }, 60_000)
})
