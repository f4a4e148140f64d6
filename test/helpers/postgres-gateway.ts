// Gateways over PostgreSQL for the fault tests (test/integration/storage-faults-postgres.test.ts): the options every
// instance runs with, and an instance in a process of its own (./postgres-gateway-process.ts), so that a crash is an
// exit the test sees, not the end of the test runner.
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Storage } from 'unstorage'
import { type GatewayOptions, openaiCompatible } from '../../src/index'
import { TEST_SECRET } from './server'

/** The model the fault tests ask for (the fake upstream's `slow` model: each chunk waits its slowMs). */
export const FAULTS_MODEL = 'fake/slow'

/** The options of every gateway of the fault tests, over `storage`, with the fake OpenAI at `upstreamUrl`. */
export function postgresFaultOptions(storage: Storage, upstreamUrl: string): GatewayOptions {
  return {
    storage,
    secret: TEST_SECRET,
    drainTimeoutMs: 2000,
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: upstreamUrl,
        apiKey: 'sk-up',
        models: [{ id: FAULTS_MODEL, upstreamId: 'slow', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }],
      }),
    ],
  }
}

/** How a gateway process reaches PostgreSQL: the reconnecting pool (postgresDriver({ url })) or db0's own connector. */
export type PostgresConnectorKind = 'pool' | 'db0'

/** A gateway in a process of its own: its URL, what it logged, whether (and how) it exited. */
export interface GatewayProcess {
  url: string
  child: ChildProcess
  /** Its log lines (JSON, one per line), warnings and errors. */
  logs: string[]
  /** The exit code, once it exited (null while it runs). */
  exited(): number | string | null
  stop(): Promise<void>
}

/** Starts a gateway process over `url` and `table` with `connector`, its connections named `app` (application_name). */
export function startGatewayProcess(input: {
  url: string
  table: string
  app: string
  connector: PostgresConnectorKind
  upstreamUrl: string
}): Promise<GatewayProcess> {
  const child = fork(fileURLToPath(new URL('./postgres-gateway-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, PG_URL: input.url, PG_TABLE: input.table, PG_APP: input.app, PG_CONNECTOR: input.connector, UPSTREAM_URL: input.upstreamUrl },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  const logs: string[] = []
  let exit: number | string | null = null
  child.on('exit', (code, signal) => (exit = code ?? signal))
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (text: string) => logs.push(...text.split('\n').filter(Boolean)))
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the gateway process did not start in 20 s: ${logs.join('\n')}`)), 20_000)
    child.once('exit', (code) => reject(new Error(`the gateway process exited before it listened (code ${code}): ${logs.join('\n')}`)))
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', (text: string) => {
      out += text
      if (!out.includes('\n')) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      child.on('exit', (code, signal) => (exit = code ?? signal))
      resolve({
        url: JSON.parse(out.slice(0, out.indexOf('\n'))).url,
        child,
        logs,
        exited: () => exit,
        stop: () =>
          new Promise<void>((done) => {
            if (exit !== null) return done()
            child.once('exit', () => done())
            child.kill('SIGTERM')
            setTimeout(() => child.kill('SIGKILL'), 5000).unref()
          }),
      })
    })
  })
}
