import { afterAll, beforeAll } from 'vitest'
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** True when this machine has Debian's redis-server and redis-cli (the cluster tests start their own cluster). */
export function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    execFileSync('redis-cli', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** A running Redis Cluster of three primaries on 127.0.0.1: their ports, and stop(). */
export interface RedisCluster {
  nodes: { host: string; port: number }[]
  stop(): Promise<void>
}

// A port that is free, and whose cluster bus port (+10000) is free too.
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number }
        server.close(() => resolve(port))
      })
    })
    if (port + 10_000 > 65_535) continue
    const busFree = await new Promise<boolean>((resolve) => {
      const server = createServer()
      server.once('error', () => resolve(false))
      server.listen(port + 10_000, '127.0.0.1', () => server.close(() => resolve(true)))
    })
    if (busFree) return port
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts three redis-server processes with --cluster-enabled and joins them into one cluster (all 16,384 slots). */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-cluster-'))
  const ports = [await freePort(), await freePort(), await freePort()]
  const children: ChildProcess[] = ports.map((port) =>
    spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
      ],
      { stdio: 'ignore' },
    ),
  )
  const cli = (args: string[]) => execFileSync('redis-cli', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  for (const port of ports) {
    for (let i = 0; ; i++) {
      try {
        if (cli(['-p', String(port), 'ping']).trim() === 'PONG') break
      } catch {
        if (i > 100) throw new Error(`redis-server on ${port} did not start`)
      }
      await sleep(50)
    }
  }
  cli(['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'])
  for (let i = 0; ; i++) {
    if (ports.every((port) => cli(['-p', String(port), 'cluster', 'info']).includes('cluster_state:ok'))) break
    if (i > 200) throw new Error('the Redis cluster did not reach cluster_state:ok')
    await sleep(50)
  }
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    async stop() {
      const stopped = (child: ChildProcess) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve()
          child.once('exit', () => resolve())
          child.kill('SIGTERM')
        })
      await Promise.all(children.map(stopped))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A Redis Cluster for the describe block that calls it: started before its tests, stopped after them. Returns its
 * nodes, to read once the block's tests run.
 */
export function useRedisCluster(): () => { host: string; port: number }[] {
  let cluster: RedisCluster | undefined
  beforeAll(async () => {
    cluster = await startRedisCluster()
  }, 30_000)
  afterAll(() => cluster?.stop())
  return () => cluster!.nodes
}
