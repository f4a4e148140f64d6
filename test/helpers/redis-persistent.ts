import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { freePort } from './redis-process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A redis-server of the test's own on 127.0.0.1 that keeps its data across a kill: every write is in its append-only
 * file, flushed at once (`appendfsync always`), so what Redis acknowledged before a SIGKILL (a crash, an OOM kill) is
 * there when it starts again on the same port.
 */
export interface PersistentRedis {
  port: number
  url: string
  /** Kills the server with SIGKILL and waits for it to be gone: connections are refused until start(). */
  kill(): Promise<void>
  /** Starts it again (same port, same data) and waits until it answers PING. */
  start(): Promise<void>
  /** Stops it for good and removes its data. */
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts a redis-server (Debian's, on the PATH) with its data in a temporary folder. */
export async function startPersistentRedis(): Promise<PersistentRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-redis-'))
  const port = await freePort()
  let child: ChildProcess | undefined
  const ping = () => {
    try {
      return execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG'
    } catch {
      return false
    }
  }
  const redis: PersistentRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--protected-mode', 'no'],
        { stdio: 'ignore' },
      )
      for (let i = 0; !ping(); i++) {
        if (i > 200) throw new Error(`redis-server on ${port} did not start`)
        await sleep(50)
      }
    },
    async kill() {
      const running = child
      child = undefined
      if (!running || running.exitCode !== null || running.signalCode !== null) return
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve())
        running.kill('SIGKILL')
      })
    },
    async stop() {
      await redis.kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await redis.start()
  return redis
}
