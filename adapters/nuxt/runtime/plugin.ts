// The Nitro plugin of the module (registered by adapters/nuxt.ts): creates the gateway as the server starts, closes
// it (drained) as it stops (docs/operations.md). On Cloudflare presets the gateway waits for the first request, whose
// env has its Durable Object (docs/edge.md#nuxt-on-cloudflare); no `node:` module is imported there.
import { platform } from '#model-gateway/app'
import { closeModelGateway, startModelGateway } from './gateway'
import { logger } from './logger'

/** The part of the Nitro app the plugin uses. */
export interface NitroAppHooks {
  hooks: { hook(name: 'close', fn: () => Promise<void>): unknown }
}

type Listener = (...args: unknown[]) => void
type AddListener = (this: unknown, name: string | symbol, listener: Listener) => unknown
/** The part of a worker thread's `parentPort` the dev hook replaces. */
interface DevPort {
  on: AddListener
  addListener: AddListener
}

/**
 * Under nuxi dev a reload (a server file edited) replaces the Nitro worker: the old one gets a "shutdown" message and
 * at once cuts every connection, streams included, before its close hook runs. The gateway is closed first instead
 * (drained, the rest ended with an error chunk and billed: docs/operations.md), then Nitro's shutdown goes on. This
 * plugin runs before Nitro's dev entry listens for that message, so it sees the listener being added.
 */
function closeBeforeDevShutdown(): void {
  // Read now, not imported: only `nuxi dev` (Node, which has getBuiltinModule) gets here.
  const threads = process.getBuiltinModule?.('node:worker_threads') as { parentPort: DevPort | null } | undefined
  const port = threads?.parentPort
  if (!port || !process.env.NITRO_DEV_WORKER_ID) return
  const on = port.on
  const wrap =
    (listener: Listener): Listener =>
    (message) => {
      if (!message || (message as { event?: unknown }).event !== 'shutdown') return listener(message)
      closeModelGateway()
        .catch((error) => logger.error(`closing the gateway failed: ${error && (error as Error).message}`))
        .finally(() => listener(message))
    }
  const addListener: AddListener = function (name, listener) {
    return on.call(this, name, name === 'message' ? wrap(listener) : listener)
  }
  port.on = port.addListener = addListener
}

/**
 * In production Nitro (node-server) waits on SIGTERM/SIGINT for the connections to end, then runs the close hook: the
 * gateway starts draining at the signal, so that its streams end cleanly before Nitro's deadline. Only next to Nitro's
 * own listener (set up after the plugins): one of ours alone would keep the signal from ending the process.
 */
function drainOnSignals(): void {
  if (process.env.NITRO_SHUTDOWN_DISABLED) return
  for (const signal of (process.env.NITRO_SHUTDOWN_SIGNALS || 'SIGTERM SIGINT')
    .split(' ')
    .map((name) => name.trim())
    .filter(Boolean)) {
    if (process.listenerCount(signal) > 0) process.once(signal, () => void closeModelGateway().catch(() => {}))
  }
}

/** Starts the gateway with the server (a misconfiguration known now stops the start) and closes it with the server. */
export default function modelGatewayPlugin(nitroApp: NitroAppHooks): void {
  if (import.meta.prerender) return
  nitroApp.hooks.hook('close', closeModelGateway)
  if (platform === 'cloudflare') return
  // A misconfiguration known now (a short NUXT_MODEL_GATEWAY_SECRET, a bad option) throws here and the server does
  // not start. An async setup file that fails is logged, and the API answers the error envelope until it works.
  startModelGateway().catch((error) => logger.error(`the gateway could not be created: ${error && (error as Error).message}`))
  if (import.meta.dev) closeBeforeDevShutdown()
  else setTimeout(drainOnSignals, 0)
}
