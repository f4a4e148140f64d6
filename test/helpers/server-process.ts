import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** A server in a process of its own: its URL, the child, what it wrote to stderr so far, and stop(). */
export interface ServerProcess {
  url: string
  child: ChildProcess
  stderr(): string
  /** SIGTERM, then SIGKILL if it has not exited after `killAfterMs` (10 s). */
  stop(): Promise<void>
}

/**
 * Forks `script` (a TypeScript file run with tsx) with `env` added to this process's, and resolves once it printed
 * `{"url": …}` on a line of its stdout (the gateway process scripts of test/helpers do so once they listen); rejects
 * when it exits first or does not print it within `startMs` (30 s), with what it wrote.
 */
export function startServerProcess(script: URL, env: Record<string, string>, options: { startMs?: number; killAfterMs?: number } = {}): Promise<ServerProcess> {
  const child = fork(fileURLToPath(script), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (text: string) => (stderr += text))
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done()
      const timer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 10_000)
      child.once('exit', () => {
        clearTimeout(timer)
        done()
      })
      child.kill('SIGTERM')
    })
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(
      () => reject(new Error(`the process did not start in ${options.startMs ?? 30_000} ms: ${out} ${stderr}`)),
      options.startMs ?? 30_000,
    )
    const exited = (code: number | null) => reject(new Error(`the process exited with ${code} before it listened: ${out} ${stderr}`))
    child.once('exit', exited)
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', (text: string) => {
      out += text
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return
      clearTimeout(timer)
      child.off('exit', exited)
      resolve({ url: JSON.parse(line).url, child, stderr: () => stderr, stop })
    })
  })
}
