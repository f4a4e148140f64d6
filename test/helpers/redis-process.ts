import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { createServer } from 'node:net'

/** A redis-server of the test's own on 127.0.0.1 (never the shared one), to pause, kill and start again. */
export interface RedisServer {
  port: number
  url: string
  /** SIGSTOP: the server keeps its connections and answers nothing (a stalled storage). */
  pause(): void
  /** SIGCONT: it answers again, and runs the commands that waited. */
  resume(): void
  /** SIGKILL: connections refused until start(). */
  kill(): Promise<void>
  /** Starts it again on the same port (empty: it saves nothing). */
  start(): Promise<void>
  stop(): Promise<void>
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts redis-server (Debian's, on the PATH) on a free port, without persistence. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const exited = (process: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (process.exitCode !== null || process.signalCode !== null) return resolve()
      process.once('exit', () => resolve())
    })
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], {
      stdio: 'ignore',
    })
    for (let i = 0; ; i++) {
      try {
        if (execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG') return
      } catch {
        if (i > 100) throw new Error(`redis-server on ${port} did not start`)
      }
      await sleep(50)
    }
  }
  const kill = async () => {
    const running = child
    if (!running) return
    child = undefined
    running.kill('SIGKILL')
    await exited(running)
  }
  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    kill,
    start,
    stop: kill,
  }
}
