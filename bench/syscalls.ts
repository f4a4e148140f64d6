// Read and write system calls per request of each hop (bench/README.md#the-gateways-own-work-alone-and-the-other-tools): the h3 floor and the
// gateway (memory storage) in their own processes before the same fake upstream, `BENCH_SYSCALL_REQUESTS` requests
// (2,000) of each kind, 8 at a time over keep-alive connections after 300 of warm-up, counted from the kernel's
// /proc/<pid>/io (`syscr`, `syscw`: every read-like and write-like call, sockets included). Linux only.
// Run: BENCH_DIST=1 npx tsx bench/syscalls.ts
import { readFileSync } from 'node:fs'
import { type Child, startChild, stopChildren } from './children'
import { load, type TargetName, targetOf } from './client'

const REQUESTS = Number(process.env.BENCH_SYSCALL_REQUESTS) || 2000
const AT_ONCE = 8

/** The kernel's count of read-like and write-like system calls a process made so far. */
function syscalls(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? Number.NaN)
  return { reads: field('syscr'), writes: field('syscw') }
}

const upstream = await startChild('upstream', 'upstream-process.ts', {})
const env = { BENCH_UPSTREAM_URL: upstream.info.url }
const hops: Child[] = await Promise.all([
  startChild('h3', 'h3-floor-process.ts', env),
  startChild('gateway', 'gateway-process.ts', { ...env, BENCH_STORAGE: 'memory' }),
])
try {
  for (const stream of [false, true]) {
    for (const hop of hops) {
      const pid = hop.process.pid!
      const auth = hop.info.key ? `Bearer ${hop.info.key}` : undefined
      const target = targetOf(hop.name as TargetName, hop.info.url, '/api/v1/chat/completions', 'fake/bench', AT_ONCE, auth)
      await load(target, () => stream, { count: 300, loops: AT_ONCE })
      const before = syscalls(pid)
      await load(target, () => stream, { count: REQUESTS, loops: AT_ONCE, keepSamples: false })
      const after = syscalls(pid)
      target.agent.destroy()
      const per = (n: number) => (n / REQUESTS).toFixed(2)
      console.log(
        `${hop.name.padEnd(8)} ${stream ? 'stream' : 'whole '}: ${per(after.reads - before.reads)} reads, ${per(after.writes - before.writes)} writes per request`,
      )
    }
  }
} finally {
  await stopChildren()
}
