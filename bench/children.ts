// The benchmark's child processes: started with `node --import tsx` through child_process.fork, each prints one JSON
// line on stdout (its URL; a gateway also its key) and answers IPC messages (bench/child-stats.ts).
import { type ChildProcess, fork } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const CHILD_START_TIMEOUT_MS = 30_000

export interface Child {
  name: string
  process: ChildProcess
  info: Record<string, string>
  exited: Promise<void>
}
export interface ChildStats {
  cpu: NodeJS.CpuUsage
  memory: NodeJS.MemoryUsage
  /** Connections accepted so far. */
  accepted: number
  /** Connections opened so far (a gateway or the proxy, to the upstream). */
  opened: number
}

const children = new Set<Child>()

export function startChild(name: string, file: string, env: Record<string, string>, execArgv: string[] = []): Promise<Child> {
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
export function ask<T>(child: Child, type: string, payload: Record<string, unknown> = {}, timeoutMs = 5000): Promise<T> {
  const id = ++nextMessageId
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.process.off('message', onMessage)
      reject(new Error(`${child.name} did not answer ${type}`))
    }, timeoutMs)
    const onMessage = (message: { id?: number; type?: string; error?: string } & T) => {
      if (message?.id !== id) return
      clearTimeout(timer)
      child.process.off('message', onMessage)
      if (message.type === 'error') reject(new Error(`${child.name}: ${type}: ${message.error}`))
      else resolvePromise(message)
    }
    child.process.on('message', onMessage)
    child.process.send({ ...payload, type, id })
  })
}
export const statsOf = (child: Child) => ask<ChildStats>(child, 'stats')

const alive = (child: Child) => child.process.exitCode === null && child.process.signalCode === null

/** Stops some children (SIGTERM, then SIGKILL after 160 s; a Redis gateway clears its keys on the way out, which takes about a minute after a 10-minute memory phase). */
export async function stopChildren(which: Child[] = [...children]) {
  for (const child of which) children.delete(child)
  for (const child of which) if (alive(child)) child.process.kill('SIGTERM')
  const deadline = new Promise<void>((done) => setTimeout(done, 160_000).unref())
  await Promise.race([Promise.all(which.map((c) => c.exited)), deadline])
  for (const child of which) if (alive(child)) child.process.kill('SIGKILL')
}

// Last resort: never leave a child behind, whatever ends this process.
process.on('exit', () => {
  for (const child of children) if (alive(child)) child.process.kill('SIGKILL')
})
