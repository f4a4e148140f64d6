// Instructions per request under valgrind's callgrind: a figure that, unlike CPU time, does not move with what else
// the machine runs (bench/README.md#instructions-per-request). Each hop (BENCH_TARGETS: h3 and gateway by default)
// runs under callgrind with the fake upstream and the load generator outside it; after a warm-up (BENCH_WARMUP
// requests, for the JIT), its counters are zeroed, BENCH_REQUESTS requests are sent (BENCH_CONNECTIONS at a time) and
// the counters dumped: instructions per request is the dump's total over the requests. Whole and streamed requests
// (BENCH_KINDS). The gateway keeps BENCH_IN_MEMORY_RECORDS usage records (500: its heap in a steady state within the
// warm-up). Slow (valgrind runs Node ~50× slower): about 4 minutes per hop with the defaults.
//   npx tsx bench/instructions.ts
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load, targetOf } from './client'
import { startChild, stopChildren } from './children'

const here = dirname(fileURLToPath(import.meta.url))
// Under callgrind a hop runs ~50× slower, far slower still on a busy machine: a request may take minutes (a full
// collection of a single-threaded V8), which the load generator's usual 30 s would call a hang.
process.env.BENCH_REQUEST_TIMEOUT_MS ||= '600000'
const intEnv = (name: string, fallback: number) => Math.max(1, Math.round(Number(process.env[name]) || fallback))
const WARMUP = intEnv('BENCH_WARMUP', 1500)
const REQUESTS = intEnv('BENCH_REQUESTS', 600)
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 8)
const KINDS = (process.env.BENCH_KINDS || 'whole,stream').split(',') as ('whole' | 'stream')[]
const TARGETS = (process.env.BENCH_TARGETS || 'h3,gateway').split(',') as ('h3' | 'gateway' | 'own')[]
// `own`: the gateway's own work alone, in process (bench/own-work-process.ts: the in-process client, the upstream's
// bytes replayed, no socket): no event-loop batching, so its count does not move with the machine's load.
const FILES = { h3: 'h3-floor-process.ts', gateway: 'gateway-process.ts', own: 'own-work-process.ts' } as const
// V8 with no background threads (compilers and collectors, whose instructions callgrind counts too, in whatever share
// the thread scheduling gives them), a fixed collection schedule and hash seed: the same code counts the same.
const V8_FLAGS = ['--single-threaded', '--predictable-gc-schedule', '--hash-seed=1']

if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('instructions: valgrind is not installed (apt-get install valgrind)')
  process.exit(2)
}

/** Starts `file` under callgrind, counting nothing until zeroed; resolves with its process and the JSON line it prints. */
function startUnderCallgrind(file: string, env: Record<string, string>, outDir: string) {
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(outDir, 'cg.%p')}`,
      process.execPath,
      ...V8_FLAGS,
      '--import',
      'tsx',
      join(here, file),
    ],
    { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] },
  )
  // Never left behind, whatever ends this process (valgrind would go on counting a hop nobody asks anything).
  process.on('exit', () => child.kill('SIGKILL'))
  let errors = ''
  child.stderr!.on('data', (text) => {
    errors = (errors + text).slice(-4000)
  })
  return new Promise<{ child: ChildProcess; info: { url: string; key?: string } }>((resolve, reject) => {
    let output = ''
    child.once('exit', (code) => reject(new Error(`${file} exited under valgrind (code ${code}): ${errors}`)))
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', function onData(text: string) {
      output += text
      const newline = output.indexOf('\n')
      if (newline === -1) return
      child.stdout!.off('data', onData)
      child.stdout!.resume()
      resolve({ child, info: JSON.parse(output.slice(0, newline)) })
    })
  })
}

/** Asks the own-work process for `calls` chat calls of `kind` (8 at a time) and waits for its `done` line. */
function ownCalls(child: ChildProcess, kind: 'whole' | 'stream', calls: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (text: string) => {
      output += text
      if (!/^done /m.test(output)) return
      child.stdout!.off('data', onData)
      child.off('exit', onExit)
      resolve()
    }
    const onExit = (code: number | null) => reject(new Error(`own-work-process exited under valgrind (code ${code})`))
    child.stdout!.on('data', onData)
    child.once('exit', onExit)
    child.stdin!.write(`${kind} ${calls} ${CONNECTIONS}\n`)
  })
}

/** Asks callgrind in process `pid` to zero its counters or dump them (then waits for the dump's file). */
function control(pid: number, command: '-z' | '-d') {
  const result = spawnSync('callgrind_control', [command, String(pid)], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`callgrind_control ${command} ${pid}: ${result.stderr || result.stdout}`)
}

/**
 * The garbage collector's instructions in a dump: the inclusive count of V8's `Heap::CollectGarbage` (every
 * collection, minor and major, enters there), read with callgrind_annotate; undefined when it names no such function.
 * Reported apart because whether a major collection falls in the window is a step that moves a run's total by tenths
 * of a million per request between two versions of the code (bench/README.md#instructions-per-request).
 */
function collectorInstructions(file: string): number | undefined {
  const result = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  let most: number | undefined
  for (const line of (result.stdout ?? '').split('\n')) {
    if (!line.includes('Heap::CollectGarbage')) continue
    const count = Number(line.trim().split(/\s+/)[0].replace(/,/g, ''))
    if (Number.isFinite(count) && (most === undefined || count > most)) most = count
  }
  return most
}

/** The instructions (Ir) of the latest dump in `outDir` for `pid`, and the collector's among them. */
async function lastDump(outDir: string, pid: number, dumps: number): Promise<{ total: number; collector?: number }> {
  const name = `cg.${pid}.${dumps}`
  for (let i = 0; i < 600; i++) {
    if (readdirSync(outDir).includes(name)) {
      const text = readFileSync(join(outDir, name), 'utf8')
      const summary = text.match(/^summary: (\d+)/m) ?? text.match(/^totals: (\d+)/m)
      if (summary) return { total: Number(summary[1]), collector: collectorInstructions(join(outDir, name)) }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`callgrind wrote no ${name}`)
}

const outDir = mkdtempSync(join(tmpdir(), 'mg-instructions-'))
const results: Record<string, Record<string, number>> = {}
try {
  const upstream = await startChild('upstream', 'upstream-process.ts', {})
  for (const name of TARGETS) {
    const started = performance.now()
    const { child, info } = await startUnderCallgrind(
      FILES[name],
      { BENCH_UPSTREAM_URL: upstream.info.url as string, BENCH_IN_MEMORY_RECORDS: process.env.BENCH_IN_MEMORY_RECORDS || '500' },
      outDir,
    )
    const target =
      name === 'own'
        ? undefined
        : name === 'h3'
          ? targetOf('h3', info.url, '/api/v1/chat/completions', 'fake/bench', CONNECTIONS)
          : targetOf('gateway', info.url, '/api/v1/chat/completions', 'fake/bench', CONNECTIONS, `Bearer ${info.key}`)
    results[name] = {}
    let dumps = 0
    for (const kind of KINDS) {
      const stream = kind === 'stream'
      if (target) await load(target, () => stream, { count: WARMUP, loops: CONNECTIONS, keepSamples: false })
      else await ownCalls(child, kind, WARMUP)
      control(child.pid!, '-z')
      if (target) await load(target, () => stream, { count: REQUESTS, loops: CONNECTIONS, keepSamples: false })
      else await ownCalls(child, kind, REQUESTS)
      control(child.pid!, '-d')
      const { total, collector } = await lastDump(outDir, child.pid!, ++dumps)
      results[name][kind] = Math.round(total / REQUESTS)
      const gc =
        collector === undefined
          ? ''
          : `, of which the garbage collector ${(collector / REQUESTS / 1e6).toFixed(3)} M, the rest ${((total - collector) / REQUESTS / 1e6).toFixed(3)} M`
      if (collector !== undefined) results[name][`${kind}_without_gc`] = Math.round((total - collector) / REQUESTS)
      console.log(`${name} ${kind}: ${(total / REQUESTS / 1e6).toFixed(3)} M instructions per request${gc}`)
    }
    target?.agent.destroy()
    child.removeAllListeners('exit')
    child.kill('SIGKILL')
    console.log(`  (${name}: ${Math.round((performance.now() - started) / 1000)} s under valgrind)`)
  }
  if (results.h3 && results.gateway) {
    for (const kind of KINDS) {
      const own = results.gateway[kind] - results.h3[kind]
      console.log(
        `gateway's own ${kind}: ${(own / 1e6).toFixed(3)} M instructions per request (× the floor: ${(results.gateway[kind] / results.h3[kind]).toFixed(2)})`,
      )
    }
  }
  console.log(JSON.stringify({ warmup: WARMUP, requests: REQUESTS, connections: CONNECTIONS, instructions_per_request: results }))
} finally {
  await stopChildren()
  rmSync(outDir, { recursive: true, force: true })
}
