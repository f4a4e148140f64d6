// npm run bench — what the gateway adds on top of an upstream.
//
// Layout: the fake OpenAI-compatible upstream (bench/upstream-process.ts) and the gateway (bench/gateway-process.ts,
// memory storage, key auth and billing on) each run in their own child process; this process is the load generator.
// The same client code (node:http, one keep-alive Agent per target with maxSockets = connections) sends the same
// number of whole and streamed chat requests at the same concurrency straight to the fake upstream ("direct") and
// through the gateway ("gateway"), in alternating rounds of one run, then prints added latency p50/p99, the
// throughput ratio, the gateway's CPU time per request and the streamed time-to-first-byte added, and writes
// bench/results.json.
//
// Settings (environment): BENCH_CONNECTIONS (32), BENCH_REQUESTS per scenario (3000), BENCH_WARMUP per scenario (300),
// BENCH_ROUNDS (3: each scenario's requests are split into rounds that alternate direct and gateway, so that drift
// of the machine hits both alike), BENCH_RESULTS (bench/results.json), BENCH_GATEWAY_CPU_PROF=<dir> (runs the gateway
// child with --cpu-prof, writing its profile into <dir> when it exits), BENCH_UPSTREAM_LATENCY_MS (100), BENCH_PHASES
// (latency,capacity), BENCH_GATEWAY (gateway | baseline), BENCH_DIST=1 (the gateway from dist/: npm run build first).
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { Agent, request, type OutgoingHttpHeaders } from 'node:http'
import { cpus, loadavg, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const intEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`)
  return value
}
const CONNECTIONS = Math.max(1, intEnv('BENCH_CONNECTIONS', 32))
const REQUESTS = Math.max(1, intEnv('BENCH_REQUESTS', 3000))
const WARMUP = intEnv('BENCH_WARMUP', 300)
const ROUNDS = Math.max(1, Math.min(REQUESTS, intEnv('BENCH_ROUNDS', 3)))
const RESULTS = resolve(process.env.BENCH_RESULTS || join(here, 'results.json'))
const KINDS = (process.env.BENCH_KINDS || 'whole,stream').split(',').map((k) => k.trim())
if (!KINDS.length || KINDS.some((k) => k !== 'whole' && k !== 'stream'))
  throw new Error(`BENCH_KINDS must list whole and/or stream, got ${process.env.BENCH_KINDS}`)
const UPSTREAM_LATENCY_MS = intEnv('BENCH_UPSTREAM_LATENCY_MS', 100)
const PHASES = (process.env.BENCH_PHASES || 'latency,capacity').split(',').map((p) => p.trim())
if (!PHASES.length || PHASES.some((p) => p !== 'latency' && p !== 'capacity'))
  throw new Error(`BENCH_PHASES must list latency and/or capacity, got ${process.env.BENCH_PHASES}`)
const GATEWAY = process.env.BENCH_GATEWAY || 'gateway'
if (GATEWAY !== 'gateway' && GATEWAY !== 'baseline') throw new Error(`BENCH_GATEWAY must be gateway or baseline, got ${process.env.BENCH_GATEWAY}`)
const CPU_PROF_DIR = process.env.BENCH_GATEWAY_CPU_PROF ? resolve(process.env.BENCH_GATEWAY_CPU_PROF) : undefined
const TARGET_ADDED_P50_MS = 2
const CHILD_START_TIMEOUT_MS = 30_000
const REQUEST_TIMEOUT_MS = 30_000

// ---------------------------------------------------------------------------------------------------------------
// Child processes

interface Child {
  name: string
  process: ChildProcess
  info: Record<string, string>
  exited: Promise<void>
}
interface ChildStats {
  cpu: NodeJS.CpuUsage
  memory: NodeJS.MemoryUsage
  /** Connections accepted so far (both children). */
  accepted: number
  /** Connections opened so far (the gateway, to the upstream). */
  opened?: number
}

const children = new Set<Child>()

function startChild(name: string, file: string, env: Record<string, string>, execArgv: string[] = []): Promise<Child> {
  const child = fork(join(here, file), [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  const exited = new Promise<void>((done) => child.once('exit', () => done()))
  return new Promise((resolvePromise, reject) => {
    let output = ''
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${CHILD_START_TIMEOUT_MS} ms`)), CHILD_START_TIMEOUT_MS)
    const onExit = (code: number | null, signal: string | null) => fail(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`))
    function fail(error: Error) {
      clearTimeout(timer)
      child.off('exit', onExit)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      reject(error)
    }
    child.once('exit', onExit)
    child.once('error', (error) => fail(error))
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', function onData(text: string) {
      output += text
      const newline = output.indexOf('\n')
      if (newline === -1) return
      child.stdout!.off('data', onData)
      child.stdout!.resume() // drain anything else it prints
      clearTimeout(timer)
      child.off('exit', onExit)
      try {
        const entry: Child = { name, process: child, info: JSON.parse(output.slice(0, newline)), exited }
        children.add(entry)
        resolvePromise(entry)
      } catch (error) {
        fail(new Error(`${name} printed no JSON line: ${output.slice(0, 200)} (${(error as Error).message})`))
      }
    })
  })
}

let nextMessageId = 0
function ask<T>(child: Child, type: string, payload: Record<string, unknown> = {}): Promise<T> {
  const id = ++nextMessageId
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.process.off('message', onMessage)
      reject(new Error(`${child.name} did not answer ${type}`))
    }, 5000)
    const onMessage = (message: { id?: number } & T) => {
      if (message?.id !== id) return
      clearTimeout(timer)
      child.process.off('message', onMessage)
      resolvePromise(message)
    }
    child.process.on('message', onMessage)
    child.process.send({ ...payload, type, id })
  })
}
const statsOf = (child: Child) => ask<ChildStats>(child, 'stats')

async function stopChildren() {
  const all = [...children]
  children.clear()
  for (const child of all) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGTERM')
  const deadline = new Promise<void>((done) => setTimeout(done, 5000).unref())
  await Promise.race([Promise.all(all.map((c) => c.exited)), deadline])
  for (const child of all) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL')
}
// Last resort: never leave a child behind, whatever ends this process.
process.on('exit', () => {
  for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL')
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping`)
    void stopChildren().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Load generator

interface Target {
  name: 'direct' | 'gateway'
  agent: Agent
  host: string
  port: number
  path: string
  model: string
  authorization?: string
}
interface Sample {
  /** Response complete, ms. */
  total: number
  /** First body byte, ms. */
  ttfb: number
}

function targetOf(name: Target['name'], base: string, path: string, model: string, authorization?: string): Target {
  const url = new URL(base)
  return {
    name,
    agent: new Agent({ keepAlive: true, maxSockets: CONNECTIONS, maxFreeSockets: CONNECTIONS }),
    host: url.hostname,
    port: Number(url.port),
    path: url.pathname.replace(/\/+$/, '') + path,
    model,
    authorization,
  }
}

interface Prepared {
  body: Buffer
  headers: OutgoingHttpHeaders
}
// Streamed requests ask for usage in both cases: the gateway always asks its upstream for it, so the fake does the same work.
function prepare(target: Target, stream: boolean): Prepared {
  const body = Buffer.from(
    JSON.stringify({
      model: target.model,
      messages: [{ role: 'user', content: 'hello benchmark' }],
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  )
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': body.length }
  if (target.authorization) headers.authorization = target.authorization
  return { body, headers }
}

class BadResponse extends Error {}

function send(target: Target, prepared: Prepared, stream: boolean, check: (status: number, text: string) => void): Promise<Sample> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now()
    let ttfb = 0
    const req = request({ agent: target.agent, host: target.host, port: target.port, method: 'POST', path: target.path, headers: prepared.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => {
        if (!ttfb) ttfb = performance.now() - started
        chunks.push(chunk)
      })
      res.on('error', reject)
      res.on('end', () => {
        const total = performance.now() - started
        try {
          check(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))
        } catch (error) {
          return reject(error)
        }
        resolvePromise({ total, ttfb: ttfb || total })
      })
    })
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${target.name} ${stream ? 'stream' : 'whole'}: no answer within ${REQUEST_TIMEOUT_MS} ms`)))
    req.on('error', reject)
    req.end(prepared.body)
  })
}

// Cheap checks on every response (the same work for both targets), a full parse of the first one of each scenario.
function quickCheck(target: Target, stream: boolean) {
  return (status: number, text: string) => {
    if (status !== 200) throw new BadResponse(`${target.name} ${stream ? 'stream' : 'whole'}: HTTP ${status}: ${text.slice(0, 300)}`)
    if (stream ? !text.endsWith('data: [DONE]\n\n') : !text.includes('"choices"')) {
      throw new BadResponse(`${target.name} ${stream ? 'stream' : 'whole'}: unexpected body: ${text.slice(0, 300)}`)
    }
  }
}
function fullCheck(target: Target, stream: boolean) {
  const quick = quickCheck(target, stream)
  return (status: number, text: string) => {
    quick(status, text)
    const objects = stream
      ? text
          .split('\n\n')
          .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
          .map((e) => JSON.parse(e.slice(6)))
      : [JSON.parse(text)]
    const content = stream ? objects.map((o) => o.choices?.[0]?.delta?.content ?? '').join('') : objects[0].choices[0].message.content
    if (!/^Hello from bench: hello benchmark$/.test(content)) throw new BadResponse(`${target.name}: unexpected content ${JSON.stringify(content)}`)
    const usage = objects.findLast((o) => o.usage)?.usage
    if (!usage?.total_tokens) throw new BadResponse(`${target.name}: no usage in the answer`)
    // Billing on: the gateway's usage carries the cost it charged.
    if (target.name === 'gateway' && GATEWAY === 'gateway' && !(Number(usage.cost) > 0))
      throw new BadResponse(`gateway: usage without a cost: ${JSON.stringify(usage)}`)
  }
}

/**
 * Sends `count` requests over `CONNECTIONS` concurrent loops; returns the samples and the wall time. With `spreadMs`,
 * loop i starts i × spreadMs / CONNECTIONS later: against an upstream that always takes the same time, loops that
 * start together stay in step for the whole run and hit the gateway in waves of 32 at once, which no set of
 * independent clients does; spread over one upstream latency, they arrive at a steady rate.
 */
async function load(target: Target, stream: boolean, count: number, spreadMs = 0): Promise<{ samples: Sample[]; elapsedMs: number }> {
  const prepared = prepare(target, stream)
  const quick = quickCheck(target, stream)
  const samples: Sample[] = new Array(count)
  let issued = 0
  const loops = Math.min(CONNECTIONS, count)
  const loop = async (index: number) => {
    if (spreadMs) await new Promise((resolve) => setTimeout(resolve, (index * spreadMs) / loops))
    while (issued < count) {
      const i = issued++
      samples[i] = await send(target, prepared, stream, quick)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: loops }, (_, index) => loop(index)))
  return { samples, elapsedMs: performance.now() - started }
}

// ---------------------------------------------------------------------------------------------------------------
// Statistics

const round3 = (x: number) => Math.round(x * 1000) / 1000
function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return NaN
  const rank = Math.ceil((p / 100) * sorted.length) - 1 // nearest rank
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]
}
function summary(values: number[]) {
  const sorted = Float64Array.from(values).sort()
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  return {
    p50: round3(percentile(sorted, 50)),
    p90: round3(percentile(sorted, 90)),
    p99: round3(percentile(sorted, 99)),
    mean: round3(mean),
    max: round3(sorted[sorted.length - 1]),
  }
}
const cpuMs = (before: NodeJS.CpuUsage, after: NodeJS.CpuUsage) => (after.user - before.user + after.system - before.system) / 1000

// Which source was measured: the commit and whether src/ or adapters/ had changes not committed.
function sourceState(): { commit: string | null; uncommitted_changes: string[] } {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: join(here, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return {
      commit: git('rev-parse', '--short', 'HEAD'),
      uncommitted_changes: git('status', '--porcelain', '--', 'src', 'adapters')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3)),
    }
  } catch {
    return { commit: null, uncommitted_changes: [] }
  }
}

// The machine's busy CPU time in ms (Linux /proc/stat; undefined elsewhere): what the three benchmark processes did not
// use of it was used by something else running at the same time, which distorts every figure.
const TICK_MS = 10 // USER_HZ = 100 on Linux
function machineBusyMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
    const [user, nice, system, _idle, _iowait, irq, softirq, steal] = fields
    return (user + nice + system + irq + softirq + (steal ?? 0)) * TICK_MS
  } catch {
    return undefined
  }
}

interface Scenario {
  target: Target
  stream: boolean
  samples: Sample[]
  elapsedMs: number
  gatewayCpuMs: number
  gatewaySystemMs: number
  upstreamCpuMs: number
  clientCpuMs: number
  machineBusyMs?: number
  /** New connections accepted by the upstream and by the gateway during the scenario. */
  upstreamAccepted: number
  gatewayAccepted: number
}

function report(s: Scenario) {
  const n = s.samples.length
  return {
    requests: n,
    elapsed_ms: round3(s.elapsedMs),
    throughput_rps: round3((n / s.elapsedMs) * 1000),
    latency_ms: summary(s.samples.map((x) => x.total)),
    ...(s.stream ? { ttfb_ms: summary(s.samples.map((x) => x.ttfb)) } : {}),
    cpu_ms_per_request: {
      gateway: round3(s.gatewayCpuMs / n),
      /** The part of `gateway` spent in the kernel (socket reads and writes). */
      gateway_system: round3(s.gatewaySystemMs / n),
      upstream: round3(s.upstreamCpuMs / n),
      client: round3(s.clientCpuMs / n),
    },
    // New TCP connections during the scenario (0 with keep-alive everywhere; about one per request: a connection is
    // closed after each request).
    new_connections: { to_upstream: s.upstreamAccepted, ...(s.target.name === 'gateway' ? { to_gateway: s.gatewayAccepted } : {}) },
    // CPU that other processes of the machine used meanwhile, in cores (0 on a quiet machine; a few hundredths is noise).
    foreign_cpu_cores:
      s.machineBusyMs === undefined ? null : round3(Math.max(0, s.machineBusyMs - s.gatewayCpuMs - s.upstreamCpuMs - s.clientCpuMs) / s.elapsedMs),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The run

interface PhaseResult {
  upstream_latency_ms: number
  scenarios: Record<string, ReturnType<typeof report>>
  added: { whole?: ReturnType<typeof addedOf>; stream?: ReturnType<typeof addedOf> }
}

function addedOf(results: Record<string, ReturnType<typeof report>>, kind: 'whole' | 'stream') {
  const d = results[`direct-${kind}`]
  const g = results[`gateway-${kind}`]
  return {
    latency_p50_ms: round3(g.latency_ms.p50 - d.latency_ms.p50),
    latency_p99_ms: round3(g.latency_ms.p99 - d.latency_ms.p99),
    ...(kind === 'stream' ? { ttfb_p50_ms: round3(g.ttfb_ms!.p50 - d.ttfb_ms!.p50), ttfb_p99_ms: round3(g.ttfb_ms!.p99 - d.ttfb_ms!.p99) } : {}),
    throughput_ratio: round3(g.throughput_rps / d.throughput_rps),
    gateway_cpu_ms_per_request: g.cpu_ms_per_request.gateway,
  }
}

/** One phase: the upstream answers after `latencyMs`; warm-up, then alternating rounds of every scenario. */
async function runPhase(latencyMs: number, children: { upstream: Child; gateway: Child }, targets: Target[]): Promise<PhaseResult> {
  const { upstream, gateway } = children
  await ask(upstream, 'latency', { ms: latencyMs })
  const kinds = KINDS.map((k) => k === 'stream') // false: whole, true: stream
  if (WARMUP) for (const stream of kinds) for (const target of targets) await load(target, stream, WARMUP, latencyMs)
  await ask(upstream, 'trim')

  const scenarios = new Map<string, Scenario>()
  const keyOf = (target: Target, stream: boolean) => `${target.name}-${stream ? 'stream' : 'whole'}`
  for (const target of targets) {
    for (const stream of kinds)
      scenarios.set(keyOf(target, stream), {
        target,
        stream,
        samples: [],
        elapsedMs: 0,
        gatewayCpuMs: 0,
        gatewaySystemMs: 0,
        upstreamCpuMs: 0,
        clientCpuMs: 0,
        upstreamAccepted: 0,
        gatewayAccepted: 0,
      })
  }
  for (let r = 0; r < ROUNDS; r++) {
    const count = Math.floor(REQUESTS / ROUNDS) + (r < REQUESTS % ROUNDS ? 1 : 0)
    // Alternate who goes first so that neither target always runs on a warmer (or busier) machine.
    const order = r % 2 === 0 ? targets : [...targets].reverse()
    for (const stream of kinds) {
      for (const target of order) {
        const scenario = scenarios.get(keyOf(target, stream))!
        const [g0, u0] = await Promise.all([statsOf(gateway), statsOf(upstream)])
        const m0 = machineBusyMs()
        const c0 = process.cpuUsage()
        const { samples, elapsedMs } = await load(target, stream, count, latencyMs)
        const c1 = process.cpuUsage()
        const m1 = machineBusyMs()
        const [g1, u1] = await Promise.all([statsOf(gateway), statsOf(upstream)])
        for (const s of samples) scenario.samples.push(s)
        scenario.elapsedMs += elapsedMs
        scenario.gatewayCpuMs += cpuMs(g0.cpu, g1.cpu)
        scenario.gatewaySystemMs += (g1.cpu.system - g0.cpu.system) / 1000
        scenario.upstreamCpuMs += cpuMs(u0.cpu, u1.cpu)
        scenario.clientCpuMs += cpuMs(c0, c1)
        scenario.upstreamAccepted += u1.accepted - u0.accepted
        scenario.gatewayAccepted += g1.accepted - g0.accepted
        if (m0 !== undefined && m1 !== undefined) scenario.machineBusyMs = (scenario.machineBusyMs ?? 0) + m1 - m0
        await ask(upstream, 'trim') // keep the fake's request log from growing over the run
      }
    }
  }
  const results: Record<string, ReturnType<typeof report>> = {}
  for (const [key, scenario] of scenarios) results[key] = report(scenario)
  return {
    upstream_latency_ms: latencyMs,
    scenarios: results,
    added: {
      ...(KINDS.includes('whole') ? { whole: addedOf(results, 'whole') } : {}),
      ...(KINDS.includes('stream') ? { stream: addedOf(results, 'stream') } : {}),
    },
  }
}

function printPhase(title: string, phase: PhaseResult) {
  const row = (cells: (string | number)[], widths: number[]) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[0]) : String(c).padStart(widths[i]))).join('  ')
  const widths = [14, 7, 7, 8, 8, 6, 10, 9, 9]
  console.log()
  console.log(title)
  console.log(row(['scenario', 'p50 ms', 'p99 ms', 'ttfb p50', 'ttfb p99', 'req/s', 'gw cpu/req', 'new conns', 'other cpu'], widths))
  for (const key of ['direct-whole', 'gateway-whole', 'direct-stream', 'gateway-stream']) {
    const r = phase.scenarios[key]
    if (!r) continue
    const conns = r.new_connections.to_upstream + (r.new_connections.to_gateway ?? 0)
    console.log(
      row(
        [
          key,
          r.latency_ms.p50.toFixed(2),
          r.latency_ms.p99.toFixed(2),
          r.ttfb_ms ? r.ttfb_ms.p50.toFixed(2) : '-',
          r.ttfb_ms ? r.ttfb_ms.p99.toFixed(2) : '-',
          r.throughput_rps.toFixed(0),
          key.startsWith('gateway') ? `${r.cpu_ms_per_request.gateway.toFixed(3)} ms` : '-',
          conns,
          r.foreign_cpu_cores === null ? '?' : r.foreign_cpu_cores.toFixed(2),
        ],
        widths,
      ),
    )
  }
  const sign = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} ms`
  const { whole, stream } = phase.added
  if (whole)
    console.log(
      `added, whole:  p50 ${sign(whole.latency_p50_ms)}, p99 ${sign(whole.latency_p99_ms)}, throughput ratio ${whole.throughput_ratio.toFixed(2)}, gateway CPU ${whole.gateway_cpu_ms_per_request.toFixed(3)} ms/request`,
    )
  if (stream)
    console.log(
      `added, stream: p50 ${sign(stream.latency_p50_ms)}, p99 ${sign(stream.latency_p99_ms)}, TTFB p50 ${sign(stream.ttfb_p50_ms!)}, throughput ratio ${stream.throughput_ratio.toFixed(2)}, gateway CPU ${stream.gateway_cpu_ms_per_request.toFixed(3)} ms/request`,
    )
  for (const [key, r] of Object.entries(phase.scenarios)) {
    if (r.new_connections.to_upstream > r.requests / 10)
      console.log(`note: ${key} opened ${r.new_connections.to_upstream} new connections to the upstream for ${r.requests} requests (keep-alive not kept)`)
  }
}

async function main() {
  const runStarted = performance.now()
  const upstream = await startChild('upstream', 'upstream-process.ts', {})
  if (CPU_PROF_DIR) mkdirSync(CPU_PROF_DIR, { recursive: true })
  const gateway = await startChild(
    'gateway',
    GATEWAY === 'baseline' ? 'baseline-proxy-process.ts' : 'gateway-process.ts',
    { BENCH_UPSTREAM_URL: upstream.info.url },
    CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [],
  )
  const direct = targetOf('direct', upstream.info.url, '/chat/completions', 'bench')
  const through = targetOf('gateway', gateway.info.url, '/api/v1/chat/completions', 'fake/bench', `Bearer ${gateway.info.key}`)

  console.log(
    `model-gateway bench: ${CONNECTIONS} connections, ${REQUESTS} requests per scenario and phase in ${ROUNDS} round(s) after ${WARMUP} warm-up, ` +
      `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model.trim()})`,
  )
  console.log(
    `upstream ${upstream.info.url} (pid ${upstream.process.pid}), ${GATEWAY === 'baseline' ? 'baseline proxy' : `gateway (${process.env.BENCH_DIST ? 'dist/' : 'src/ through tsx'})`} ${gateway.info.url} (pid ${gateway.process.pid}), memory storage, auth and billing on`,
  )

  // One fully checked request per scenario before anything is measured.
  for (const stream of KINDS.map((k) => k === 'stream')) {
    for (const target of [direct, through]) await send(target, prepare(target, stream), stream, fullCheck(target, stream))
  }

  const phases: Record<string, PhaseResult> = {}
  if (PHASES.includes('latency')) {
    phases.latency = await runPhase(UPSTREAM_LATENCY_MS, { upstream, gateway }, [direct, through])
    printPhase(`latency: the upstream answers after ${UPSTREAM_LATENCY_MS} ms (BENCH_UPSTREAM_LATENCY_MS), the gateway is not saturated`, phases.latency)
  }
  if (PHASES.includes('capacity')) {
    phases.capacity = await runPhase(0, { upstream, gateway }, [direct, through])
    printPhase('capacity: the upstream answers at once, every process runs flat out on the shared cores (closed loop)', phases.capacity)
  }
  const [gatewayEnd, upstreamEnd] = await Promise.all([statsOf(gateway), statsOf(upstream)])
  const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10

  // The target is checked on whole requests, as this benchmark has defined it from the start; streams are reported
  // next to it (their added p50 and TTFB), not part of the verdict.
  const wholeAdded = phases.latency?.added.whole
  const streamAdded = phases.latency?.added.stream
  const targetMet = wholeAdded ? wholeAdded.latency_p50_ms < TARGET_ADDED_P50_MS : null
  const output = {
    date: new Date().toISOString(),
    machine: {
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      cores: cpus().length,
      cpu: cpus()[0]?.model.trim(),
      memory_mb: mb(totalmem()),
      loadavg_at_end: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    source: sourceState(),
    settings: {
      gateway: GATEWAY === 'baseline' ? 'baseline' : process.env.BENCH_DIST ? 'dist' : 'src',
      connections: CONNECTIONS,
      requests_per_scenario: REQUESTS,
      warmup_per_scenario: WARMUP,
      rounds: ROUNDS,
      kinds: KINDS,
      phases: PHASES,
      upstream_latency_ms: UPSTREAM_LATENCY_MS,
      storage: 'memory',
      auth: true,
      billing: true,
    },
    phases,
    target: {
      description: `added p50 < ${TARGET_ADDED_P50_MS} ms at 32 connections, whole requests (latency phase: upstream answering after ${UPSTREAM_LATENCY_MS} ms)`,
      connections: CONNECTIONS,
      whole_added_p50_ms: wholeAdded?.latency_p50_ms ?? null,
      met: targetMet,
      streams_not_in_target: streamAdded ? { added_p50_ms: streamAdded.latency_p50_ms, ttfb_added_p50_ms: streamAdded.ttfb_p50_ms } : null,
    },
    memory_mb_at_end: {
      gateway: { rss: mb(gatewayEnd.memory.rss), heap_used: mb(gatewayEnd.memory.heapUsed) },
      upstream: { rss: mb(upstreamEnd.memory.rss), heap_used: mb(upstreamEnd.memory.heapUsed) },
    },
    runtime_s: 0,
  }

  console.log()
  console.log(
    `memory at end: gateway rss ${output.memory_mb_at_end.gateway.rss} MB (heap ${output.memory_mb_at_end.gateway.heap_used} MB), upstream rss ${output.memory_mb_at_end.upstream.rss} MB`,
  )
  const busiest = Math.max(...Object.values(phases).flatMap((p) => Object.values(p.scenarios).map((r) => r.foreign_cpu_cores ?? 0)))
  if (busiest > 0.1)
    console.log(
      `warning: other processes used up to ${busiest.toFixed(2)} of ${cpus().length} cores during the run ('other cpu'): the figures are distorted; run again on a quiet machine`,
    )
  if (targetMet !== null) {
    const note = CONNECTIONS === 32 ? '' : ` (this run used ${CONNECTIONS} connections: the target is defined at 32)`
    const ms = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} ms`
    const streams = streamAdded ? `; streams (not part of the target): ${ms(streamAdded.latency_p50_ms)}, TTFB ${ms(streamAdded.ttfb_p50_ms!)}` : ''
    console.log(
      `target (added p50 < ${TARGET_ADDED_P50_MS} ms at 32 connections, whole requests, upstream answering after ${UPSTREAM_LATENCY_MS} ms, memory storage, auth and billing on): ${targetMet ? 'MET' : 'MISSED'} (${ms(wholeAdded!.latency_p50_ms)})${streams}${note}`,
    )
  }

  direct.agent.destroy()
  through.agent.destroy()
  await stopChildren()
  output.runtime_s = Math.round((performance.now() - runStarted) / 100) / 10
  writeFileSync(RESULTS, `${JSON.stringify(output, null, 2)}\n`)
  console.log(`wrote ${RESULTS} (${output.runtime_s} s)`)
}

main().catch(async (error) => {
  console.error(error instanceof BadResponse ? `bench: ${error.message}` : error)
  await stopChildren()
  process.exit(1)
})
