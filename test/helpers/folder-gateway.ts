import type { ChildProcess } from 'node:child_process'
import { type GatewayOptions, openaiCompatible } from '../../src/index'
import { SERVICE_KEY } from './byok-pair'
import { startServerProcess } from './server-process'
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
  return startServerProcess(new URL('./folder-gateway-process.ts', import.meta.url), { FOLDER_BASE: folder, UPSTREAM_URL: upstreamUrl })
}
