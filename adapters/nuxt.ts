import { addServerHandler, addServerImports, addServerTemplate, addTypeTemplate, defineNuxtModule, findPath, useLogger } from '@nuxt/kit'
import type { GatewayOptions } from '../src/index'

/** The gateway options that survive `nuxt.config` serialisation (no functions, no instances). */
export type SerializableGatewayOptions = Pick<GatewayOptions,
  | 'storagePrefix' | 'modelOverrides' | 'exchangeRates' | 'upstreamTimeoutMs' | 'keepAliveMs' | 'modelRefreshSeconds'
  | 'chatLinkTemplate' | 'keyPrefix' | 'keyTtlSeconds' | 'defaultPlan' | 'publicCatalogue' | 'bodyLimits'
  | 'lastUsedIntervalSeconds' | 'requestTimeoutMs' | 'health' | 'rateLimits' | 'byok'>

/** `modelGateway` in `nuxt.config`. Secrets are not options: they come from `runtimeConfig.modelGateway` (env `NUXT_MODEL_GATEWAY_SECRET`). */
export interface ModelGatewayModuleOptions extends SerializableGatewayOptions {
  /** Where the API lives in the app's server. Default `/api/v1`. */
  basePath?: string
  /**
   * A server file whose default export gives the options that cannot go through `nuxt.config`: providers, hooks,
   * `auth`, your own `storage`, `logger`… (`GatewayOptions`, or a function returning them, possibly async). Aliases
   * work (`~~/server/model-gateway`). Default: `<serverDir>/model-gateway` when it exists; `false` for none.
   */
  setup?: string | false
  /** Keep the gateway's records in Nitro's storage under this mount (`nitro.storage[name]`): any driver Nitro mounts, Redis included. Default: in-memory. */
  nitroStorage?: string
}

/** The part of Nuxt's `nitro` options this module reads or extends. */
interface NitroOptions {
  storage?: Record<string, unknown>
  externals?: { external?: unknown[]; [key: string]: unknown }
}

/** The default export of the setup file: options, or a function (possibly async) that returns them. */
export type ModelGatewaySetup = GatewayOptions | (() => GatewayOptions | Promise<GatewayOptions>)

const FROM_SETUP = 'return it from the setup file (`modelGateway.setup`, default server/model-gateway.ts)'
const NOT_IN_CONFIG: Record<string, string> = {
  secret: 'set runtimeConfig.modelGateway.secret, or the env NUXT_MODEL_GATEWAY_SECRET',
  previousSecrets: 'set runtimeConfig.modelGateway.previousSecrets, or the env NUXT_MODEL_GATEWAY_PREVIOUS_SECRETS (a JSON array)',
  ...Object.fromEntries(['providers', 'hooks', 'auth', 'storage', 'logger', 'clock'].map((name) => [name, FROM_SETUP])),
}

/**
 * The Nuxt module (`modules: ['model-gateway/nuxt']`): serves the gateway under `basePath` in the app's Nitro server.
 * Nitro 2 runs h3 v1, the gateway h3 v2: each request crosses as a web Request and the answer comes back as a web
 * Response, streamed. Server code gets the gateway itself from the auto-imported `useModelGateway()`.
 */
export default defineNuxtModule<ModelGatewayModuleOptions>({
  meta: { name: 'model-gateway', configKey: 'modelGateway', compatibility: { nuxt: '>=3.15.0' } },
  defaults: { basePath: '/api/v1' },
  async setup(moduleOptions, nuxt) {
    const logger = useLogger('model-gateway')
    const { basePath: rawBasePath, setup, nitroStorage, ...options } = moduleOptions
    const basePath = `/${(rawBasePath ?? '').replace(/^\/+|\/+$/g, '')}`
    if (basePath === '/') throw new Error('[model-gateway] `modelGateway.basePath` must not be the root: the gateway would take every route of the app')
    for (const name of Object.keys(options)) {
      if (name in NOT_IN_CONFIG) throw new Error(`[model-gateway] \`modelGateway.${name}\` cannot be set in nuxt.config: ${NOT_IN_CONFIG[name]}`)
    }
    const serialized = JSON.stringify({ ...options, basePath })

    const setupFile = setup === false
      ? undefined
      : await findPath(setup ?? `${nuxt.options.serverDir}/model-gateway`, { extensions: ['.ts', '.mts', '.js', '.mjs'] }, 'file')
    if (setup && !setupFile) throw new Error(`[model-gateway] setup file not found: ${setup}`)
    // `nuxt.options.nitro` is typed by Nuxt's Nitro integration, which this file does not import.
    const nitro = (nuxt.options as unknown as { nitro: NitroOptions }).nitro
    if (nitroStorage && !nitro.storage?.[nitroStorage]) {
      logger.warn(`\`nitro.storage.${nitroStorage}\` is not configured: the gateway's records will go to Nitro's default (in-memory) storage`)
    }

    // Secrets: empty in the build, read from runtimeConfig at run time (env NUXT_MODEL_GATEWAY_SECRET, …).
    const runtimeConfig = nuxt.options.runtimeConfig as Record<string, unknown>
    const current = (runtimeConfig.modelGateway ?? {}) as { secret?: string; previousSecrets?: string[] }
    runtimeConfig.modelGateway = { ...current, secret: current.secret ?? '', previousSecrets: current.previousSecrets ?? [] }

    // One gateway per server, created on first use, shared by the route handler and useModelGateway().
    addServerTemplate({
      filename: '#model-gateway',
      getContents: () => `import { createGateway } from 'model-gateway'
import { useRuntimeConfig, useStorage } from 'nitropack/runtime'
${setupFile ? `import * as setupModule from ${JSON.stringify(setupFile)}` : 'const setupModule = {}'}

const options = ${serialized}
const nitroStorage = ${JSON.stringify(nitroStorage ?? null)}
let gateway

async function create() {
  const exported = setupModule.default
  const fromSetup = (typeof exported === 'function' ? await exported() : exported) || {}
  const runtime = useRuntimeConfig().modelGateway || {}
  const resolved = { ...options, ...fromSetup, basePath: options.basePath }
  if (runtime.secret) resolved.secret = runtime.secret
  if (runtime.previousSecrets && runtime.previousSecrets.length) resolved.previousSecrets = runtime.previousSecrets
  if (nitroStorage && !fromSetup.storage) {
    // Nitro's root storage with the mount in the key prefix (not useStorage(mount)): the gateway then sees the mounted
    // driver itself, which it needs for atomic updates on Redis.
    resolved.storage = useStorage()
    resolved.storagePrefix = [nitroStorage, resolved.storagePrefix].filter(Boolean).join(':')
  }
  return createGateway(resolved)
}

/** The app's gateway (created on first call): \`(await useModelGateway()).admin\` for accounts, keys and credits. */
export function useModelGateway() {
  gateway ??= create().catch((error) => {
    gateway = undefined
    throw error
  })
  return gateway
}
`,
    })

    addServerTemplate({
      filename: '#model-gateway/handler',
      getContents: () => `import { defineEventHandler, toWebRequest } from 'h3'
import { useModelGateway } from '#model-gateway'

// The h3 v1 event as a web Request whose signal aborts when the client goes away (the gateway then stops upstream).
function toRequest(event) {
  const request = toWebRequest(event)
  const res = event.node && event.node.res
  if (event.web && event.web.request || !res) return request
  const controller = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) controller.abort()
  })
  return new Request(request, { signal: controller.signal })
}

export default defineEventHandler(async (event) => {
  const gateway = await useModelGateway()
  return gateway.fetch(toRequest(event))
})
`,
    })

    // Nuxt transpiles (inlines) every module's package and aliases `h3` to its own h3 v1: the core must stay an
    // external package of the server, with its own h3 v2 (traced into .output/server/node_modules). A package name
    // outranks the module folder Nuxt adds to `externals.inline`.
    nitro.externals = { ...nitro.externals, external: [...(nitro.externals?.external ?? []), 'model-gateway'] }

    addServerHandler({ route: `${basePath}/**`, handler: '#model-gateway/handler', lazy: true })
    addServerImports([{ name: 'useModelGateway', from: '#model-gateway' }])
    addTypeTemplate({
      filename: 'types/model-gateway.d.ts',
      getContents: () => `declare module '#model-gateway' {
  export function useModelGateway(): Promise<import('model-gateway').Gateway>
}
export {}
`,
    }, { nitro: true, nuxt: true })
  },
})
