// The app's gateway: one per server, created when the server starts (plugin.ts) or on first use, shared by the route
// handler (handler.ts) and useModelGateway(); closed, drained, with the server (docs/adapters.md#nuxt). On Nitro's
// Cloudflare presets it is created on the first request instead, whose env carries the Durable Object binding that
// keeps its records and money (docs/edge.md#nuxt-on-cloudflare).
import { devDrainTimeoutMs, nitroStorage, options, platformStorage, setup } from '#model-gateway/app'
import { createGateway, type Gateway, type GatewayOptions } from 'model-gateway'
import { useStorage } from 'nitropack/runtime'
import { logger } from './logger'
import { randomBase64url } from './random'
import { runtimeSecrets } from './secrets'
import type { PlatformEvent } from './platform'

let gateway: Promise<Gateway> | undefined
let warnedNoSecret = false

/** The shutdown deadline Nitro gives a Node server (NITRO_SHUTDOWN_TIMEOUT, 30 s by default), in milliseconds. */
const nitroShutdownMs = () =>
  Number.parseInt((globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.NITRO_SHUTDOWN_TIMEOUT || '', 10) || 30000

/** The gateway of the setup file's options over nuxt.config's, with the runtime's secrets, and this server's logger, drain deadline and storage unless the setup file gives them. */
function build(fromSetup: GatewayOptions, event: PlatformEvent | undefined): Gateway {
  const { secret, previousSecrets } = runtimeSecrets(event)
  const resolved: GatewayOptions = { ...options, ...fromSetup, basePath: options.basePath }
  if (secret) resolved.secret = secret
  if (previousSecrets) resolved.previousSecrets = previousSecrets
  if (!resolved.secret) {
    // Said once per server process (the gateway would say it at each creation).
    resolved.secret = randomBase64url(32)
    if (!warnedNoSecret)
      logger.warn(
        'no secret given (NUXT_MODEL_GATEWAY_SECRET, 32+ characters): using a random one, so encrypted records (BYOK keys) and signed tokens will not survive a restart',
      )
    warnedNoSecret = true
  }
  if (resolved.logger === undefined) resolved.logger = logger
  // Drain deadlines (docs/operations.md): short under nuxi dev, where a reload waits for it; in production a little
  // below the time Nitro gives the server to stop (NITRO_SHUTDOWN_TIMEOUT, 30 s), after which it cuts connections.
  if (resolved.drainTimeoutMs === undefined) resolved.drainTimeoutMs = import.meta.dev ? devDrainTimeoutMs : Math.max(1000, nitroShutdownMs() - 5000)
  if (platformStorage && !fromSetup.storage && !fromSetup.atomic) {
    // Cloudflare: the Durable Object bound in the request's env (its storage brings its engine).
    resolved.storage = platformStorage(event, resolved.storagePrefix)
  } else if (nitroStorage && !fromSetup.storage) {
    // Nitro's root storage with the mount in the key prefix (not useStorage(mount)): the gateway then sees the mounted
    // driver itself, which it needs for atomic updates on Redis.
    resolved.storage = useStorage()
    resolved.storagePrefix = [nitroStorage, resolved.storagePrefix].filter(Boolean).join(':')
  }
  return createGateway(resolved)
}

/** Whether a value is a promise or another thenable. */
const isThenable = (value: unknown): value is PromiseLike<unknown> => !!value && typeof (value as PromiseLike<unknown>).then === 'function'

/**
 * Creates the gateway unless done. Throws at once what can be known at once (runtime config, options, a setup file
 * that is not async): the server plugin calls it as the server starts, so such a mistake stops the start. On
 * Cloudflare the request's event (its env) is needed the first time.
 */
export function startModelGateway(event?: PlatformEvent): Promise<Gateway> {
  if (gateway) return gateway
  const fromSetup: unknown = typeof setup === 'function' ? setup() : setup
  const created = isThenable(fromSetup)
    ? Promise.resolve(fromSetup).then((value) => build((value || {}) as GatewayOptions, event))
    : Promise.resolve(build((fromSetup || {}) as GatewayOptions, event))
  gateway = created
  // A failed creation is tried again at the next use (an async setup may depend on something not up yet).
  created.catch(() => {
    if (gateway === created) gateway = undefined
  })
  return created
}

/**
 * The app's gateway (created when the server starts): `(await useModelGateway()).admin` for accounts, keys and
 * credits. On Cloudflare, pass the request's event the first time (its env has the Durable Object binding).
 */
export function useModelGateway(event?: PlatformEvent): Promise<Gateway> {
  try {
    return startModelGateway(event)
  } catch (error) {
    return Promise.reject(error)
  }
}

/** Closes the gateway if there is one: refuses new requests, drains those in flight, bills them (docs/operations.md). */
export async function closeModelGateway(): Promise<void> {
  const current = gateway
  if (!current) return
  const created = await current.catch(() => undefined)
  if (created) await created.close()
}
