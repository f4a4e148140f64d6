import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { resolve } from 'node:path'

const root = resolve(import.meta.dirname, '../..')

const freePort = () =>
  new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => done(port))
    })
  })

/** Runs `npm start` (with extra args) until it is listening; returns its output so far and a stop function. */
export async function startPlayground(dataDir: string, args: string[] = [], env: Record<string, string> = {}) {
  const port = await freePort()
  const child: ChildProcess = spawn('npm', ['start', '--', ...args], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      GATEWAY_SECRET: '',
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
      ANTHROPIC_API_KEY: '',
      GEMINI_API_KEY: '',
      GROQ_API_KEY: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`playground did not start:\n${output}`)), 30_000)
    const check = setInterval(() => {
      if (/^(Demo account|New key|Try:)/m.test(output) || /Its key was printed/.test(output)) {
        clearInterval(check)
        clearTimeout(timer)
        done()
      }
    }, 50)
  })
  const stop = () =>
    new Promise<void>((done) => {
      child.once('exit', () => done())
      process.kill(-child.pid!, 'SIGTERM')
    })
  return { url: `http://127.0.0.1:${port}`, output: () => output, stop }
}
