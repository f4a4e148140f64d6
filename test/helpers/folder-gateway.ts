import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { type GatewayOptions, openaiCompatible } from '../../src/index'
import { SERVICE_KEY } from './byok-pair'
import { TEST_SECRET } from './server'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }

/**
 * The options of every gateway over a shared folder in the tests: one BYOK-capable provider (`alpha`) at
 * `upstreamUrl`, with `byok/model` and `slow/model` (the fake's `slow`: each answer waits its `slowMs`).
 */
export function folderGatewayOptions(upstreamUrl: string): GatewayOptions {
  return {
    secret: TEST_SECRET,
    logger: false,
    drainTimeoutMs: 1000,
    byok: { settlementIntervalSeconds: 0 },
    providers: [
      openaiCompatible({
        slug: 'alpha',
        name: 'Alpha',
        baseURL: upstreamUrl,
        apiKey: SERVICE_KEY,
        byokSupported: true,
        models: [
          { id: 'byok/model', upstreamId: 'gpt-test', pricing },
          { id: 'slow/model', upstreamId: 'slow', pricing },
        ],
      }),
    ],
  }
}

/** A gateway process over the files in `folder` (./folder-gateway-process.ts): its URL, and stop() (SIGTERM, then SIGKILL after 10 s). */
export async function startFolderGateway(folder: string, upstreamUrl: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = fork(fileURLToPath(new URL('./folder-gateway-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FOLDER_BASE: folder, UPSTREAM_URL: upstreamUrl },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the gateway process did not start in 30 s: ${out}`)), 30_000)
    child.once('exit', (code) => reject(new Error(`the gateway process exited with ${code}: ${out}`)))
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', (text: string) => {
      out += text
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return
      clearTimeout(timer)
      resolve(JSON.parse(line).url)
    })
  })
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done()
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      child.once('exit', () => {
        clearTimeout(timer)
        done()
      })
      child.kill('SIGTERM')
    })
  return { url, child, stop }
}
