import { randomBytes } from 'node:crypto'
import {
  addServerHandler,
  addServerImports,
  addServerPlugin,
  addServerTemplate,
  addTypeTemplate,
  createResolver,
  defineNuxtModule,
  findPath,
  useLogger,
} from '@nuxt/kit'
import type { GatewayOptions } from '../src/index'
import { buildForCloudflare, type CloudflareNitro, isCloudflarePreset, packageRootOf } from './nuxt/cloudflare-build'
import { MIN_SECRET_LENGTH, secretTooShort } from './nuxt/runtime/secret-length'
import { alignServerTypes, type NitroInstance } from './nuxt/server-types'

/** The gateway options that survive `nuxt.config` serialisation (no functions, no instances). */
export type SerializableGatewayOptions = Pick<
  GatewayOptions,
  | 'storagePrefix'
  | 'modelOverrides'
  | 'exchangeRates'
  | 'upstreamTimeoutMs'
  | 'keepAliveMs'
  | 'modelRefreshSeconds'
  | 'chatLinkTemplate'
  | 'keyPrefix'
  | 'keyTtlSeconds'
  | 'defaultPlan'
  | 'publicCatalogue'
  | 'bodyLimits'
  | 'lastUsedIntervalSeconds'
  | 'requestTimeoutMs'
  | 'health'
  | 'rateLimits'
  | 'byok'
  | 'drainTimeoutMs'
  | 'storageTimeoutMs'
>

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
  /**
   * Under `nuxi dev`, how long a reload (a server file edited) lets the requests in flight finish before it ends them,
   * billed, streams with an error chunk (docs/operations.md). Default 2000 ms. Nitro waits `NITRO_SHUTDOWN_TIMEOUT`
   * seconds (5 by default) for the old server before it stops it: keep this below. `drainTimeoutMs` is the production
   * one (default: 5 s less than Nitro's `NITRO_SHUTDOWN_TIMEOUT`, so 25000).
   */
  devDrainTimeoutMs?: number
  /**
   * On Nitro's Cloudflare presets (`cloudflare-module`, …): the Durable Object that keeps the gateway's records and
   * money, bound in the Worker's env (docs/edge.md#nuxt-on-cloudflare). `binding` default `MODEL_GATEWAY`,
   * `objectName` default `model-gateway`; `perOrg` (default false) gives each org an object of its own
   * (docs/edge.md#one-object-per-org). Not used on other presets.
   */
  cloudflare?: { binding?: string; objectName?: string; perOrg?: boolean }
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

/** The error of a secret too short known at build time, or when `nuxi dev` starts. */
const shortSecretError = (where: string, length: number) => new Error(`[model-gateway] ${secretTooShort(where, length, 'start')}`)

/**
 * A path below node_modules as Nitro's `externals.inline` matches it, scored above a package name (`model-gateway`,
 * external); elsewhere (a linked checkout) the absolute path, which no package name matches.
 */
const inlinePattern = (dir: string) => {
  const path = dir.split('\\').join('/')
  return path.includes('/node_modules/') ? path.slice(path.lastIndexOf('/node_modules/') + '/node_modules/'.length) : path
}

// Per process, across the Nuxt restarts `nuxi dev` does in it: the random secret of a dev server given none, and
// whether that was said.
const processState = ((globalThis as Record<symbol, unknown>)[Symbol.for('model-gateway.nuxt')] ??= {}) as { devSecret?: string; warned?: boolean }

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
    const resolver = createResolver(import.meta.url)
    const { basePath: rawBasePath, setup, nitroStorage, devDrainTimeoutMs = 2000, cloudflare = {}, ...options } = moduleOptions
    const basePath = `/${(rawBasePath ?? '').replace(/^\/+|\/+$/g, '')}`
    if (basePath === '/') throw new Error('[model-gateway] `modelGateway.basePath` must not be the root: the gateway would take every route of the app')
    for (const name of Object.keys(options)) {
      if (name in NOT_IN_CONFIG) throw new Error(`[model-gateway] \`modelGateway.${name}\` cannot be set in nuxt.config: ${NOT_IN_CONFIG[name]}`)
    }
    if (!(Number.isFinite(devDrainTimeoutMs) && devDrainTimeoutMs > 0))
      throw new Error('[model-gateway] `modelGateway.devDrainTimeoutMs` must be a positive number of milliseconds')
    await checkOptions(options)
    const serialized = JSON.stringify({ ...options, basePath })

    const setupFile =
      setup === false ? undefined : await findPath(setup ?? `${nuxt.options.serverDir}/model-gateway`, { extensions: ['.ts', '.mts', '.js', '.mjs'] }, 'file')
    if (setup && !setupFile) throw new Error(`[model-gateway] setup file not found: ${setup}`)
    // `nuxt.options.nitro` is typed by Nuxt's Nitro integration, which this file does not import.
    const nitro = (nuxt.options as unknown as { nitro: NitroOptions }).nitro
    if (nitroStorage && !nitro.storage?.[nitroStorage]) {
      logger.warn(`\`nitro.storage.${nitroStorage}\` is not configured: the gateway's records will go to Nitro's default (in-memory) storage`)
    }

    // Secrets: empty in the build, read from runtimeConfig at run time (env NUXT_MODEL_GATEWAY_SECRET, …). A short one
    // known now stops the build or the dev server here; one given at run time is checked when the server starts.
    const runtimeConfig = nuxt.options.runtimeConfig as Record<string, unknown>
    const current = (runtimeConfig.modelGateway ?? {}) as { secret?: string; previousSecrets?: string[] }
    const envSecret = process.env.NUXT_MODEL_GATEWAY_SECRET
    if (current.secret && current.secret.length < MIN_SECRET_LENGTH) throw shortSecretError('runtimeConfig.modelGateway.secret', current.secret.length)
    if (envSecret && envSecret.length < MIN_SECRET_LENGTH) throw shortSecretError('NUXT_MODEL_GATEWAY_SECRET', envSecret.length)
    let secret = current.secret ?? ''
    if (nuxt.options.dev && !secret && !envSecret) {
      // Without a secret each reload of the dev server would draw a new one (and say so): one per dev process instead,
      // so that encrypted records (BYOK keys) and signed tokens last until `nuxi dev` stops.
      secret = processState.devSecret ??= randomBytes(32).toString('base64url')
      if (!processState.warned) {
        processState.warned = true
        logger.warn(
          'no secret given (NUXT_MODEL_GATEWAY_SECRET, 32+ characters, e.g. in .env): this dev server uses a random one, so encrypted records (BYOK keys) and signed tokens last until it stops',
        )
      }
    }
    runtimeConfig.modelGateway = { ...current, secret, previousSecrets: current.previousSecrets ?? [] }

    if (nuxt.options.dev) {
      const waitSeconds = Number.parseInt(process.env.NITRO_SHUTDOWN_TIMEOUT ?? '', 10) || 5
      if (devDrainTimeoutMs > waitSeconds * 1000 - 1000) {
        logger.warn(
          `\`modelGateway.devDrainTimeoutMs\` (${devDrainTimeoutMs} ms) is not below Nitro's wait for a reloaded server (NITRO_SHUTDOWN_TIMEOUT, ${waitSeconds} s) minus a second: streams cut by a reload may go unbilled`,
        )
      }
    }

    // The server runtime is real files of this package (adapters/nuxt/runtime/, built to dist/adapters/nuxt/runtime/),
    // which Nitro bundles into the app's server. What depends on the app is generated: `#model-gateway/app` (the
    // setup file and the options of nuxt.config), which the runtime imports, and `#model-gateway`, which server code
    // imports useModelGateway() from (auto-imported).
    const runtime = (file: string) => resolver.resolve('./nuxt/runtime', file)
    // Which server Nitro builds, known once its preset is (`nitro:init`, before the templates are written).
    let platform: 'node' | 'cloudflare' = 'node'
    const durableObject = { binding: cloudflare.binding ?? 'MODEL_GATEWAY', objectName: cloudflare.objectName, perOrg: cloudflare.perOrg === true }
    addServerTemplate({
      filename: '#model-gateway/app',
      getContents: () => `// Generated by model-gateway/nuxt: what its server runtime takes from the app (adapters/nuxt/runtime-env.d.ts).
${setupFile ? `import * as setupModule from ${JSON.stringify(setupFile)}` : 'const setupModule = {}'}

export const setup = setupModule.default
export const options = ${serialized}
export const nitroStorage = ${JSON.stringify(nitroStorage ?? null)}
export const devDrainTimeoutMs = ${devDrainTimeoutMs}
export const platform = ${JSON.stringify(platform)}
${
  platform === 'cloudflare'
    ? `import { cloudflareStorage } from ${JSON.stringify(runtime('cloudflare'))}
export const platformStorage = (event, prefix) => cloudflareStorage(event, ${JSON.stringify(durableObject)}, prefix)`
    : 'export const platformStorage = undefined'
}
`,
    })
    addServerTemplate({
      filename: '#model-gateway',
      getContents: () =>
        `export { useModelGateway } from ${JSON.stringify(runtime('gateway'))}\nexport { useGatewayClient, nitroEventOf } from ${JSON.stringify(runtime('session'))}\n`,
    })

    // Nuxt transpiles (inlines) every module's package and aliases `h3` to its own h3 v1: the core must stay an
    // external package of the server, with its own h3 v2 (traced into .output/server/node_modules). A package name
    // outranks the module folder Nuxt adds to `externals.inline`; the runtime's folder, as a path below node_modules
    // (which Nitro scores above a package name), has the runtime bundled, under `nuxi dev` too (Node alone could not
    // resolve `#model-gateway/app`).
    nitro.externals = {
      ...nitro.externals,
      external: [...(nitro.externals?.external ?? []), 'model-gateway'],
      inline: [...((nitro.externals?.inline as unknown[]) ?? []), inlinePattern(runtime(''))],
    }

    // The route's handler is typed by Nitro from its declaration file (.nuxt/types/nitro-routes.d.ts): `unknown`, the
    // gateway's JSON of many shapes.
    addServerHandler({ route: `${basePath}/**`, handler: runtime('handler'), lazy: true })
    addServerPlugin(runtime('plugin'))
    addServerImports(['useModelGateway', 'useGatewayClient', 'nitroEventOf'].map((name) => ({ name, from: '#model-gateway' })))
    // An ambient module (no top-level export): `#model-gateway` is a virtual module of Nitro, which TypeScript cannot
    // resolve, so it takes this declaration. Server code only.
    addTypeTemplate(
      {
        filename: 'types/model-gateway.d.ts',
        getContents: () => `// Generated by model-gateway/nuxt.
declare module '#model-gateway' {
  /** The app's gateway (created when the server starts; on Cloudflare, on the first request: pass its event): \`(await useModelGateway()).admin\` for accounts, keys and credits. */
  export function useModelGateway(event?: { context?: { cloudflare?: { env?: Record<string, unknown> } } }): Promise<import('model-gateway').Gateway>
  /** The in-process client of the event's signed-in user (the \`session\` option says who): billed to that user, no HTTP. */
  export function useGatewayClient(event: { method: string; path: string; headers: Headers; node: { req: import('node:http').IncomingMessage } }): Promise<import('model-gateway').GatewayClient>
  /** The app's Nitro event (its h3 event) behind the gateway's own event (in the \`session.user\` function): what the app's session helpers take. */
  // biome-ignore lint/suspicious/noExplicitAny: the app's own h3 event type, which this declaration cannot name without finding the wrong h3
  export function nitroEventOf(event: { req: Request }): any
}
`,
      },
      { nitro: true },
    )

    // `nitro:init` is typed by Nuxt's Nitro integration, which this file does not import.
    const hooks = nuxt as unknown as { hook: (name: 'nitro:init', fn: (nitro: NitroInstance) => void) => void }
    hooks.hook('nitro:init', (instance) => {
      const preset = (instance as unknown as CloudflareNitro).options.preset
      if (isCloudflarePreset(preset)) {
        platform = 'cloudflare'
        const packageRoot = packageRootOf(resolver.resolve('./nuxt/runtime/gateway'), 'model-gateway')
        if (!packageRoot) throw new Error('[model-gateway] the package folder of model-gateway/nuxt was not found')
        buildForCloudflare(instance as unknown as CloudflareNitro, packageRoot)
        if (nitroStorage) {
          logger.warn(
            `on Nitro's ${preset} preset the gateway's records and money are in the Durable Object bound as ${durableObject.binding}: \`modelGateway.nitroStorage\` is not used`,
          )
        }
      }
      instance.hooks.hook('types:extend', (types) => alignServerTypes(instance, types, nuxt.options.rootDir, (message) => logger.warn(message)))
    })
  },
})

/**
 * Checks the options of nuxt.config with the gateway itself (a throwaway one in memory), so that a mistake stops
 * `nuxi build` or `nuxi dev` with the gateway's message instead of failing the first request.
 */
async function checkOptions(options: SerializableGatewayOptions) {
  const { createGateway } = await import('../src/index')
  let gateway: ReturnType<typeof createGateway>
  try {
    gateway = createGateway({ ...options, secret: 'x'.repeat(MIN_SECRET_LENGTH), logger: false })
  } catch (error) {
    throw new Error(`[model-gateway] invalid \`modelGateway\` option in nuxt.config: ${(error as Error).message.replace(/^model-gateway: /, '')}`, {
      cause: error,
    })
  }
  await gateway.close()
}
