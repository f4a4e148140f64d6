// npm run soak: several gateway instances on one storage under mixed load, one killed mid-stream and restarted, then
// the money reconciled (docs/operations.md#the-soak-test).
//
// For each storage in SOAK_STORAGES (postgres at DATABASE_URL, redis at REDIS_URL; those that do not answer are
// skipped, by name): SOAK_INSTANCES gateway processes (test/soak/gateway-process.ts) on a table or key base of the
// run's own, in front of one fake OpenAI upstream whose `slow` model takes SOAK_CHUNK_MS per chunk. SOAK_WORKERS
// loops, each with its own key, send for SOAK_SECONDS, round robin over the live instances: whole chats, streamed
// chats, chats on the org's own provider key (BYOK), keys minted through POST /keys, and balance reads. At 40 % of
// the run one instance is killed (SIGKILL) while streams are in flight, and started again 3 s later. Then: the rate
// limit is hammered across every instance; the holds' TTL passes; BYOK fees are settled; and for every org
//   - Σ usage records' cost_eur = credits granted − balance = Σ ledger charges,
//   - every charged record has exactly one ledger entry and every entry one record (none lost, none doubled),
//   - no hold is left once its expiry passed,
// and the burst saw at most the rate limit's requests per window. Prints the figures; exits 1 on any mismatch.
import { type ChildProcess, fork } from 'node:child_process'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createGateway, type Gateway } from '../../src/index'
import { budgetsOf } from '../../src/billing/holds'
import { fromUnits, toUnits } from '../../src/billing/money'
import { startFakeOpenAI } from '../fakes/openai'
import { dropPostgresTable } from '../helpers/storages'
import { SOAK_HOLD_TTL_SECONDS, SOAK_MODEL, SOAK_RATE_LIMIT, soakOptions } from './gateway-options'
import { openSoakStorage, type SoakStorageKind } from './storage'

const here = fileURLToPath(new URL('.', import.meta.url))
const SECONDS = Number(process.env.SOAK_SECONDS || 120)
const INSTANCES = Number(process.env.SOAK_INSTANCES || 3)
const WORKERS = Number(process.env.SOAK_WORKERS || 24)
const ORGS = Number(process.env.SOAK_ORGS || 4)
const CHUNK_MS = Number(process.env.SOAK_CHUNK_MS || 30)
const STORAGES = (process.env.SOAK_STORAGES || 'postgres,redis').split(',').filter(Boolean) as SoakStorageKind[]

const agent = new Agent({ keepAlive: true, maxSockets: 256 })

interface Answer {
  status: number
  body: string
  /** Why a request answered status 0: the connection error's code (ECONNRESET, ECONNREFUSED, timeout). */
  error?: string
}
/**
 * One HTTP request to an instance; a connection error (a killed instance) answers status 0, with its code. A GET whose
 * kept-alive socket the server closed just as it was reused (ECONNRESET on a reused socket: the race Node's http docs
 * describe for keep-alive agents) is sent once more on a new socket, as HTTP clients do for idempotent requests.
 */
function call(base: string, method: string, path: string, key: string, body?: unknown, retried = false): Promise<Answer> {
  return new Promise((resolve) => {
    const url = new URL(path, base)
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = request(
      url,
      { method, agent, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        res.on('error', () => resolve({ status: 0, body: text }))
        res.on('aborted', () => resolve({ status: 0, body: text }))
      },
    )
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (method === 'GET' && !retried && req.reusedSocket && error.code === 'ECONNRESET') return resolve(call(base, method, path, key, body, true))
      resolve({ status: 0, body: '', error: error.code ?? error.message })
    })
    req.setTimeout(30_000, () => req.destroy(Object.assign(new Error('no answer in 30 s'), { code: 'timeout' })))
    req.end(payload)
  })
}

interface Instance {
  index: number
  child: ChildProcess
  url: string
  alive: boolean
}
function startInstance(index: number, kind: SoakStorageKind, name: string, upstreamUrl: string): Promise<Instance> {
  const child = fork(join(here, 'gateway-process.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, SOAK_STORAGE: kind, SOAK_NAME: name, SOAK_UPSTREAM_URL: upstreamUrl },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`instance ${index} did not start in 20 s`)), 20_000)
    child.once('exit', (code) => reject(new Error(`instance ${index} exited before it listened (code ${code})`)))
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', (text: string) => {
      out += text
      if (!out.includes('\n')) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      resolve({ index, child, url: JSON.parse(out.slice(0, out.indexOf('\n'))).url, alive: true })
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Counts {
  [what: string]: number
}
const count = (counts: Counts, what: string) => (counts[what] = (counts[what] ?? 0) + 1)

async function soak(kind: SoakStorageKind): Promise<boolean> {
  const name = `mg_soak_${process.pid}_${kind}`
  const upstream = await startFakeOpenAI({ apiKey: ['sk-soak-service', 'sk-soak-customer'], slowMs: CHUNK_MS })
  const trim = setInterval(() => {
    upstream.requests.length = 0
    upstream.arrivals.length = 0
  }, 5_000)
  const auditorStorage = openSoakStorage(kind, name)
  const auditor: Gateway = createGateway(soakOptions(auditorStorage.storage, upstream.url))
  const instances: Instance[] = []
  const counts: Counts = {}
  let ok = true
  const fail = (message: string) => {
    ok = false
    console.log(`  MISMATCH ${message}`)
  }
  try {
    instances.push(...(await Promise.all(Array.from({ length: INSTANCES }, (_, i) => startInstance(i, kind, name, upstream.url)))))
    console.log(`${kind}: ${INSTANCES} instances (${instances.map((i) => i.url).join(', ')}), ${WORKERS} workers, ${ORGS} orgs, ${SECONDS} s`)

    // Orgs with credits; the last one also has its own provider key (BYOK). Each worker has a key of its org.
    const orgs: { id: string; userId: string; manager: string; byok: boolean }[] = []
    for (let o = 0; o < ORGS; o++) {
      const user = await auditor.admin.createUser({ email: `soak-${o}@example.com` })
      await auditor.admin.addCredits(user.org_id, '1000')
      const manager = (await auditor.admin.issueKey({ userId: user.id, label: 'manager', management: true })).key
      orgs.push({ id: user.org_id, userId: user.id, manager, byok: o === ORGS - 1 })
    }
    const byokOrg = orgs[orgs.length - 1]
    const byokKey = (await auditor.admin.issueKey({ userId: byokOrg.userId, label: 'byok setup' })).key
    const created = await call(instances[0].url, 'POST', '/api/v1/byok', byokKey, { key: 'sk-soak-customer', provider: 'fake' })
    if (created.status !== 201) throw new Error(`creating the BYOK credential answered ${created.status}: ${created.body}`)
    const workerKeys = await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        const org = orgs[w % orgs.length]
        return { org, key: (await auditor.admin.issueKey({ userId: org.userId, label: `worker ${w}` })).key }
      }),
    )

    // The load, round robin over the live instances.
    const started = Date.now()
    const deadline = started + SECONDS * 1000
    let turn = 0
    const pick = () => {
      const live = instances.filter((i) => i.alive)
      return live[turn++ % live.length]
    }
    const messages = [{ role: 'user', content: 'hello soak' }]
    const worker = async (w: number) => {
      const { org, key } = workerKeys[w]
      while (Date.now() < deadline) {
        const instance = pick()
        const roll = Math.random()
        let what: string
        let answer: Answer
        if (roll < 0.5) {
          what = org.byok ? 'chat byok' : 'chat whole'
          answer = await call(instance.url, 'POST', '/api/v1/chat/completions', key, { model: SOAK_MODEL, messages, max_tokens: 50 })
        } else if (roll < 0.85) {
          what = 'chat stream'
          answer = await call(instance.url, 'POST', '/api/v1/chat/completions', key, { model: SOAK_MODEL, messages, max_tokens: 50, stream: true })
          if (answer.status === 200 && !answer.body.trimEnd().endsWith('data: [DONE]')) what = 'chat stream cut'
        } else if (roll < 0.93) {
          what = 'key minted'
          answer = await call(instance.url, 'POST', '/api/v1/keys', org.manager, { name: `minted ${w}`, limit: 1 })
        } else {
          what = 'credits read'
          answer = await call(instance.url, 'GET', '/api/v1/credits', key)
        }
        count(counts, `${what} ${answer.status === 0 ? 'connection lost' : answer.status}`)
        if (answer.status === 429) await sleep(100)
      }
    }
    const killer = (async () => {
      await sleep(SECONDS * 400)
      const victim = instances[1 % instances.length]
      victim.alive = false
      victim.child.kill('SIGKILL')
      console.log(`  t=${((Date.now() - started) / 1000).toFixed(1)} s: instance ${victim.index} killed (SIGKILL)`)
      await sleep(3000)
      const again = await startInstance(victim.index, kind, name, upstream.url)
      instances[instances.indexOf(victim)] = again
      console.log(`  t=${((Date.now() - started) / 1000).toFixed(1)} s: instance ${victim.index} started again at ${again.url}`)
    })()
    const progress = setInterval(() => {
      const done = Object.values(counts).reduce((a, b) => a + b, 0)
      console.log(`  t=${((Date.now() - started) / 1000).toFixed(0)} s: ${done} requests`)
    }, 15_000)
    await Promise.all([...Array.from({ length: WORKERS }, (_, w) => worker(w)), killer])
    clearInterval(progress)

    // The rate limit, across every instance: one fresh key, as many requests at once as three windows allow.
    const limited = (await auditor.admin.issueKey({ userId: orgs[0].userId, label: 'rate limited' })).key
    const burstStart = Date.now()
    const burst = await Promise.all(
      Array.from({ length: SOAK_RATE_LIMIT.requests * 3 }, (_, i) => call(instances[i % instances.length].url, 'GET', '/api/v1/credits', limited)),
    ).then((answers) => answers.map((a) => (a.status ? a.status : `0 (${a.error})`)))
    const windows = Math.floor(Date.now() / (SOAK_RATE_LIMIT.windowSeconds * 1000)) - Math.floor(burstStart / (SOAK_RATE_LIMIT.windowSeconds * 1000)) + 1
    const served = burst.filter((s) => s === 200).length
    console.log(`  rate limit: ${served} of ${burst.length} served across ${instances.length} instances in ${windows} window(s) of ${SOAK_RATE_LIMIT.requests}`)
    if (served > SOAK_RATE_LIMIT.requests * windows) fail(`rate limit: ${served} served, more than ${SOAK_RATE_LIMIT.requests} × ${windows}`)
    if (burst.some((s) => s !== 200 && s !== 429)) fail(`rate limit: unexpected statuses ${[...new Set(burst)].join(', ')}`)

    // Holds left by the killed instance stop counting after their TTL; a request then prunes them.
    await sleep(SOAK_HOLD_TTL_SECONDS * 1000 + 500)
    for (const org of orgs) {
      const key = workerKeys.find((k) => k.org === org)!.key
      await call(instances[0].url, 'POST', '/api/v1/chat/completions', key, { model: SOAK_MODEL, messages, max_tokens: 5 })
    }
    for (const org of orgs) await auditor.admin.settleByokFees(org.id)

    // Reconciliation, org by org.
    let records = 0
    let total = 0n
    for (const org of orgs) {
      const credits = await auditor.admin.getCredits(org.id)
      const usage = await auditor.context.usage.list(org.id)
      records += usage.length
      const recorded = usage.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)
      total += recorded
      const granted = toUnits(credits.total_credits)
      const decrease = granted - toUnits(credits.balance)
      const charges = (await auditor.admin.ledger(org.id)).filter((e) => e.kind === 'charge')
      const charged = charges.reduce((sum, e) => sum + toUnits(e.amount), 0n)
      const byGeneration = new Map<string, number>()
      for (const e of charges) if (e.generation_id) byGeneration.set(e.generation_id, (byGeneration.get(e.generation_id) ?? 0) + 1)
      const doubled = [...byGeneration].filter(([, n]) => n > 1).length
      const paid = usage.filter((r) => !r.is_byok && toUnits(r.cost_eur) > 0n)
      const lost = paid.filter((r) => !byGeneration.has(r.id)).length
      const orphans = [...byGeneration.keys()].filter((id) => !usage.some((r) => r.id === id)).length
      // Live holds of the org once every request ended and the TTL passed: none (the killed instance's expired).
      const principal = (await auditor.admin.findUserByKey(workerKeys.find((k) => k.org === org)!.key))!
      const stale = Number(await auditor.context.holds.held(budgetsOf(auditor.context, principal).budgets[0], Date.now()))
      console.log(
        `  org ${org.id}${org.byok ? ' (BYOK)' : ''}: ${usage.length} usage records, Σ cost_eur ${fromUnits(recorded)}, balance decrease ${fromUnits(decrease)}, ` +
          `ledger charges ${fromUnits(charged)} (${charges.length} entries), lost ${lost}, doubled ${doubled}, without a record ${orphans}, units still held ${stale}`,
      )
      if (recorded !== decrease) fail(`org ${org.id}: Σ cost_eur ${fromUnits(recorded)} ≠ balance decrease ${fromUnits(decrease)}`)
      if (charged !== decrease) fail(`org ${org.id}: ledger charges ${fromUnits(charged)} ≠ balance decrease ${fromUnits(decrease)}`)
      if (lost || doubled) fail(`org ${org.id}: ${lost} ledger entries lost, ${doubled} doubled`)
      if (!org.byok && orphans) fail(`org ${org.id}: ${orphans} ledger charges without a usage record`)
      if (stale) fail(`org ${org.id}: ${stale} units still held after every request ended and the holds' TTL passed`)
    }
    const requests = Object.values(counts).reduce((a, b) => a + b, 0)
    console.log(`  ${requests} requests in ${SECONDS} s: ${JSON.stringify(counts)}`)
    console.log(`  ${records} usage records, Σ cost_eur ${fromUnits(total)} over ${orgs.length} orgs: ${ok ? 'reconciled' : 'MISMATCH'}`)
    const unexpected = Object.entries(counts).filter(([what]) => / 5\d\d$/.test(what))
    if (unexpected.length) fail(`5xx answers: ${JSON.stringify(Object.fromEntries(unexpected))}`)
    return ok
  } finally {
    clearInterval(trim)
    for (const i of instances) if (i.child.exitCode === null) i.child.kill('SIGTERM')
    await Promise.all(instances.map((i) => (i.child.exitCode === null ? new Promise((r) => i.child.once('exit', r)) : undefined)))
    await auditor.close()
    await dropSoakData(kind, name, auditorStorage.storage)
    await auditorStorage.close()
    await upstream.close()
  }
}

// Removes the run's table (PostgreSQL) or keys (Redis).
async function dropSoakData(kind: SoakStorageKind, name: string, storage: import('unstorage').Storage) {
  if (kind === 'redis') return void (await storage.clear())
  const driver = storage.getMount('').driver as { getInstance?: () => { exec(sql: string): Promise<unknown> } }
  const database = driver.getInstance?.()
  if (database) await dropPostgresTable(database, name)
}

// Which storages answer: a storage that does not is skipped, by name.
async function answers(kind: SoakStorageKind): Promise<boolean> {
  const { storage, close } = openSoakStorage(kind, `mg_soak_probe_${process.pid}`)
  try {
    await Promise.race([storage.hasItem('probe'), sleep(3000).then(() => Promise.reject(new Error('timeout')))])
    return true
  } catch {
    return false
  } finally {
    await dropSoakData(kind, `mg_soak_probe_${process.pid}`, storage).catch(() => undefined)
    await close().catch(() => undefined)
  }
}

let passed = true
for (const kind of STORAGES) {
  if (!(await answers(kind))) {
    console.log(`${kind}: skipped (${kind === 'postgres' ? 'DATABASE_URL' : 'REDIS_URL'} does not answer)`)
    continue
  }
  passed = (await soak(kind)) && passed
}
agent.destroy()
process.exit(passed ? 0 : 1)
