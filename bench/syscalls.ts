// Read and write system calls per request of each hop (bench/README.md#system-calls-per-request): the h3 floor and the
// gateway (memory storage) in their own processes before the same fake upstream, `BENCH_SYSCALL_REQUESTS` requests
// (2,000) of each kind, 8 at a time over keep-alive connections after 300 of warm-up, counted from the kernel's
// /proc/<pid>/io (`syscr`, `syscw`: every read-like and write-like call, sockets included). Linux only.
// Run: BENCH_DIST=1 npx tsx bench/syscalls.ts
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { type Child, startChild, stopChildren } from './children'

const REQUESTS = Number(process.env.BENCH_SYSCALL_REQUESTS) || 2000
const AT_ONCE = 8

/** The kernel's count of read-like and write-like system calls a process made so far. */
function syscalls(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? Number.NaN)
  return { reads: field('syscr'), writes: field('syscw') }
}

/** Sends `count` chat requests to `url`, `AT_ONCE` at a time, and reads each answer to its end. */
async function send(url: string, key: string | undefined, stream: boolean, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: AT_ONCE })
  const body = JSON.stringify({
    model: 'fake/bench',
    messages: [{ role: 'user', content: 'hello benchmark' }],
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  })
  let next = 0
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        `${url}/api/v1/chat/completions`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) } },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`))
          res
            .on('data', () => undefined)
            .on('end', resolve)
            .on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      while (next++ < count) await one()
    }),
  )
  agent.destroy()
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
      await send(hop.info.url, hop.info.key, stream, 300)
      const before = syscalls(pid)
      await send(hop.info.url, hop.info.key, stream, REQUESTS)
      const after = syscalls(pid)
      const per = (n: number) => (n / REQUESTS).toFixed(2)
      console.log(
        `${hop.name.padEnd(8)} ${stream ? 'stream' : 'whole '}: ${per(after.reads - before.reads)} reads, ${per(after.writes - before.writes)} writes per request`,
      )
    }
  }
} finally {
  await stopChildren()
}
