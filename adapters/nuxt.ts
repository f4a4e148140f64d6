import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import {
  addServerHandler,
  addServerImports,
  addServerPlugin,
  addServerTemplate,
  addTemplate,
  addTypeTemplate,
  defineNuxtModule,
  findPath,
  useLogger,
} from '@nuxt/kit'
import type { GatewayOptions } from '../src/index'

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
}

/** The part of Nuxt's `nitro` options this module reads or extends. */
interface NitroOptions {
  storage?: Record<string, unknown>
  externals?: { external?: unknown[]; [key: string]: unknown }
}

/** The part of a Nitro instance this module reads (`nitro:init`). */
interface NitroInstance {
  options: { buildDir: string; alias: Record<string, string>; typescript: { tsconfigPath?: string } }
  hooks: { hook: (name: 'types:extend', fn: (types: { tsConfig?: TsConfig }) => void | Promise<void>) => void }
}
interface TsConfig {
  compilerOptions?: { paths?: Record<string, string[]>; [key: string]: unknown }
  [key: string]: unknown
}

/** The default export of the setup file: options, or a function (possibly async) that returns them. */
export type ModelGatewaySetup = GatewayOptions | (() => GatewayOptions | Promise<GatewayOptions>)

const FROM_SETUP = 'return it from the setup file (`modelGateway.setup`, default server/model-gateway.ts)'
const NOT_IN_CONFIG: Record<string, string> = {
  secret: 'set runtimeConfig.modelGateway.secret, or the env NUXT_MODEL_GATEWAY_SECRET',
  previousSecrets: 'set runtimeConfig.modelGateway.previousSecrets, or the env NUXT_MODEL_GATEWAY_PREVIOUS_SECRETS (a JSON array)',
  ...Object.fromEntries(['providers', 'hooks', 'auth', 'storage', 'logger', 'clock'].map((name) => [name, FROM_SETUP])),
}

/** The gateway's minimum secret length (src/gateway.ts). */
const MIN_SECRET_LENGTH = 32

const secretTooShort = (where: string, length: number) =>
  `[model-gateway] ${where} has ${length} characters: the secret must have at least ${MIN_SECRET_LENGTH}. Set it to a random string of ${MIN_SECRET_LENGTH} characters or more (\`openssl rand -base64 32\` prints one), then start again.`

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
    const { basePath: rawBasePath, setup, nitroStorage, devDrainTimeoutMs = 2000, ...options } = moduleOptions
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
    if (current.secret && current.secret.length < MIN_SECRET_LENGTH) throw new Error(secretTooShort('runtimeConfig.modelGateway.secret', current.secret.length))
    if (envSecret && envSecret.length < MIN_SECRET_LENGTH) throw new Error(secretTooShort('NUXT_MODEL_GATEWAY_SECRET', envSecret.length))
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

    // One gateway per server, created when the server starts (by the plugin below) or on first use, shared by the
    // route handler and useModelGateway(); closed, drained, with the server.
    addServerTemplate({
      filename: '#model-gateway',
      getContents: () => `import { randomBytes } from 'node:crypto'
import { consola } from 'consola'
import { createGateway } from 'model-gateway'
import { useRuntimeConfig, useStorage } from 'nitropack/runtime'
${setupFile ? `import * as setupModule from ${JSON.stringify(setupFile)}` : 'const setupModule = {}'}

const options = ${serialized}
const nitroStorage = ${JSON.stringify(nitroStorage ?? null)}
const devDrainTimeoutMs = ${devDrainTimeoutMs}
const MIN_SECRET_LENGTH = ${MIN_SECRET_LENGTH}
let gateway
let warnedNoSecret = false

// The gateway's log lines through Nitro's consola, tagged: "WARN [model-gateway] …" (the console logger would add its
// own level to consola's).
const tagged = consola.withTag('model-gateway')
const line = (message, fields) => (fields ? \`\${message} \${JSON.stringify(fields)}\` : message)
export const logger = {
  debug: (message, fields) => tagged.debug(line(message, fields)),
  info: (message, fields) => tagged.info(line(message, fields)),
  warn: (message, fields) => tagged.warn(line(message, fields)),
  error: (message, fields) => tagged.error(line(message, fields)),
}

/** A misconfiguration the server cannot serve with; its message says what to set. */
export class ModelGatewayConfigError extends Error {
  constructor(message) {
    super(\`[model-gateway] \${message}\`)
    this.name = 'ModelGatewayConfigError'
  }
}

// The secrets of runtimeConfig (env NUXT_MODEL_GATEWAY_SECRET, NUXT_MODEL_GATEWAY_PREVIOUS_SECRETS), checked.
function runtimeSecrets() {
  const runtime = useRuntimeConfig().modelGateway || {}
  const secret = runtime.secret || undefined
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH)) {
    throw new ModelGatewayConfigError(\`NUXT_MODEL_GATEWAY_SECRET (runtimeConfig.modelGateway.secret) has \${String(secret).length} characters: the secret must have at least \${MIN_SECRET_LENGTH}. Set it to a random string of \${MIN_SECRET_LENGTH} characters or more (\\\`openssl rand -base64 32\\\` prints one), then start the server again.\`)
  }
  const previous = runtime.previousSecrets
  if (previous !== undefined && !(Array.isArray(previous) && previous.every((value) => typeof value === 'string'))) {
    throw new ModelGatewayConfigError('NUXT_MODEL_GATEWAY_PREVIOUS_SECRETS (runtimeConfig.modelGateway.previousSecrets) must be a JSON array of strings, e.g. ["<former secret>"]')
  }
  return { secret, previousSecrets: previous && previous.length ? previous : undefined }
}

function build(fromSetup) {
  const { secret, previousSecrets } = runtimeSecrets()
  const resolved = { ...options, ...fromSetup, basePath: options.basePath }
  if (secret) resolved.secret = secret
  if (previousSecrets) resolved.previousSecrets = previousSecrets
  if (!resolved.secret) {
    // Said once per server process (the gateway would say it at each creation).
    resolved.secret = randomBytes(32).toString('base64url')
    if (!warnedNoSecret) logger.warn('no secret given (NUXT_MODEL_GATEWAY_SECRET, 32+ characters): using a random one, so encrypted records (BYOK keys) and signed tokens will not survive a restart')
    warnedNoSecret = true
  }
  if (resolved.logger === undefined) resolved.logger = logger
  // Drain deadlines (docs/operations.md): short under nuxi dev, where a reload waits for it; in production a little
  // below the time Nitro gives the server to stop (NITRO_SHUTDOWN_TIMEOUT, 30 s), after which it cuts connections.
  if (resolved.drainTimeoutMs === undefined) {
    resolved.drainTimeoutMs = import.meta.dev
      ? devDrainTimeoutMs
      : Math.max(1000, (Number.parseInt(process.env.NITRO_SHUTDOWN_TIMEOUT || '', 10) || 30000) - 5000)
  }
  if (nitroStorage && !fromSetup.storage) {
    // Nitro's root storage with the mount in the key prefix (not useStorage(mount)): the gateway then sees the mounted
    // driver itself, which it needs for atomic updates on Redis.
    resolved.storage = useStorage()
    resolved.storagePrefix = [nitroStorage, resolved.storagePrefix].filter(Boolean).join(':')
  }
  return createGateway(resolved)
}

/**
 * Creates the gateway unless done. Throws at once what can be known at once (runtime config, options, a setup file
 * that is not async): the server plugin calls it as the server starts, so such a mistake stops the start.
 */
export function startModelGateway() {
  if (gateway) return gateway
  const exported = setupModule.default
  const fromSetup = typeof exported === 'function' ? exported() : exported
  const created = fromSetup && typeof fromSetup.then === 'function'
    ? fromSetup.then((value) => build(value || {}))
    : Promise.resolve(build(fromSetup || {}))
  gateway = created
  // A failed creation is tried again at the next use (an async setup may depend on something not up yet).
  created.catch(() => {
    if (gateway === created) gateway = undefined
  })
  return created
}

/** The app's gateway (created when the server starts): \`(await useModelGateway()).admin\` for accounts, keys and credits. */
export function useModelGateway() {
  try {
    return startModelGateway()
  } catch (error) {
    return Promise.reject(error)
  }
}

/** Closes the gateway if there is one: refuses new requests, drains those in flight, bills them (docs/operations.md). */
export async function closeModelGateway() {
  const current = gateway
  if (!current) return
  const created = await current.catch(() => undefined)
  if (created) await created.close()
}

/** The answer of the API while the gateway cannot be created: the error envelope, naming the problem when it is ours. */
export function unavailable(error) {
  logger.error(\`the gateway could not be created: \${error && error.message}\`)
  const ours = error instanceof ModelGatewayConfigError || (error instanceof TypeError && /^model-gateway: /.test(error.message))
  const message = ours ? error.message : 'The gateway could not be created; the server log says why'
  return new Response(JSON.stringify({ error: { code: 500, type: 'internal_error', message } }), {
    status: 500,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': \`req_\${randomBytes(12).toString('hex')}\` },
  })
}
`,
    })

    // A file of the build folder too: Nitro resolves its plugins' paths as files.
    const plugin = addTemplate({
      filename: 'model-gateway/plugin.js',
      write: true,
      getContents: () => `// Generated by model-gateway/nuxt: creates the gateway as the server starts, closes it (drained) as it stops.
import { parentPort } from 'node:worker_threads'
import { closeModelGateway, logger, startModelGateway } from '#model-gateway'

// Under nuxi dev a reload (a server file edited) replaces the Nitro worker: the old one gets a "shutdown" message and
// at once cuts every connection, streams included, before its close hook runs. The gateway is closed first instead
// (drained, the rest ended with an error chunk and billed: docs/operations.md), then Nitro's shutdown goes on. This
// plugin runs before Nitro's dev entry listens for that message, so it sees the listener being added.
function closeBeforeDevShutdown() {
  if (!parentPort || !process.env.NITRO_DEV_WORKER_ID) return
  const port = parentPort
  const on = port.on
  const wrap = (listener) => (message) => {
    if (!message || message.event !== 'shutdown') return listener(message)
    closeModelGateway()
      .catch((error) => logger.error(\`closing the gateway failed: \${error && error.message}\`))
      .finally(() => listener(message))
  }
  port.on = port.addListener = function (name, listener) {
    return on.call(this, name, name === 'message' ? wrap(listener) : listener)
  }
}

// In production Nitro (node-server) waits on SIGTERM/SIGINT for the connections to end, then runs the close hook: the
// gateway starts draining at the signal, so that its streams end cleanly before Nitro's deadline. Only next to Nitro's
// own listener (set up after the plugins): one of ours alone would keep the signal from ending the process.
function drainOnSignals() {
  if (process.env.NITRO_SHUTDOWN_DISABLED) return
  for (const signal of (process.env.NITRO_SHUTDOWN_SIGNALS || 'SIGTERM SIGINT').split(' ').map((name) => name.trim()).filter(Boolean)) {
    if (process.listenerCount(signal) > 0) process.once(signal, () => void closeModelGateway().catch(() => {}))
  }
}

export default function modelGatewayPlugin(nitroApp) {
  if (import.meta.prerender) return
  // A misconfiguration known now (a short NUXT_MODEL_GATEWAY_SECRET, a bad option) throws here and the server does
  // not start. An async setup file that fails is logged, and the API answers the error envelope until it works.
  startModelGateway().catch((error) => logger.error(\`the gateway could not be created: \${error && error.message}\`))
  nitroApp.hooks.hook('close', closeModelGateway)
  if (import.meta.dev) closeBeforeDevShutdown()
  else setTimeout(drainOnSignals, 0)
}
`,
    })

    // The route handler is a file of the build folder, not a virtual module: Nitro types each route from its handler's
    // file (.nuxt/types/nitro-routes.d.ts), which must exist for the app's server types to check.
    const handler = addTemplate({
      filename: 'model-gateway/handler.js',
      write: true,
      getContents: () => `// Generated by model-gateway/nuxt: serves ${basePath}/** of the app's Nitro server.
import { defineEventHandler, toWebRequest } from 'h3'
import { unavailable, useModelGateway } from '#model-gateway'

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
  let gateway
  try {
    gateway = await useModelGateway()
  } catch (error) {
    return unavailable(error)
  }
  return gateway.fetch(toRequest(event))
})
`,
    })
    addTemplate({
      filename: 'model-gateway/handler.d.ts',
      write: true,
      getContents: () => `// Generated by model-gateway/nuxt: the type of the handler serving ${basePath}/**. Its answers are the gateway's
// JSON, of many shapes: type them where you call, \`$fetch<T>('${basePath}/…')\`.
import type { EventHandler, EventHandlerRequest } from 'h3'

declare const handler: EventHandler<EventHandlerRequest, Promise<unknown>>
export default handler
`,
    })

    // Nuxt transpiles (inlines) every module's package and aliases `h3` to its own h3 v1: the core must stay an
    // external package of the server, with its own h3 v2 (traced into .output/server/node_modules). A package name
    // outranks the module folder Nuxt adds to `externals.inline`. The handler and plugin above are files of the build
    // folder, which `nuxi dev` leaves external (to Node, which cannot resolve `#model-gateway`): this longer path
    // (higher-scoring) has them bundled.
    nitro.externals = {
      ...nitro.externals,
      external: [...(nitro.externals?.external ?? []), 'model-gateway'],
      inline: [...((nitro.externals?.inline as unknown[]) ?? []), join(nuxt.options.buildDir, 'model-gateway')],
    }

    addServerHandler({ route: `${basePath}/**`, handler: handler.dst, lazy: true })
    addServerPlugin(plugin.dst)
    addServerImports([{ name: 'useModelGateway', from: '#model-gateway' }])
    // An ambient module (no top-level export): `#model-gateway` is a virtual module of Nitro, which TypeScript cannot
    // resolve, so it takes this declaration. Server code only.
    addTypeTemplate(
      {
        filename: 'types/model-gateway.d.ts',
        getContents: () => `// Generated by model-gateway/nuxt.
declare module '#model-gateway' {
  /** The app's gateway (created when the server starts): \`(await useModelGateway()).admin\` for accounts, keys and credits. */
  export function useModelGateway(): Promise<import('model-gateway').Gateway>
}
`,
      },
      { nitro: true },
    )

    // `nitro:init` is typed by Nuxt's Nitro integration, which this file does not import.
    const hooks = nuxt as unknown as { hook: (name: 'nitro:init', fn: (nitro: NitroInstance) => void) => void }
    hooks.hook('nitro:init', (instance) => {
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

// ---- Types of the server (the Nitro tsconfig, .nuxt/tsconfig.server.json) ----

const packageDirOf = (file: string, name: string): string | undefined => {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === name) return dir
  }
  return undefined
}

/** Where `node_modules/<name>` is found walking up from `from`, as Node and TypeScript look for it. */
const findPackage = (from: string, name: string): string | undefined => {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dir === dirname(dir)) return undefined
  }
}

const packageName = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')
const withDot = (path: string) => (path.startsWith('.') ? path : `./${path}`)
const toPosix = (path: string) => path.split('\\').join('/')

/** A package's declaration entry as an import specifier's target (the `.mjs` of a `.d.mts`), else its folder. */
function typesEntry(dir: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const pick = (value: unknown): string | undefined => {
    if (!value || typeof value !== 'object') return undefined
    const record = value as Record<string, unknown>
    if (typeof record.types === 'string') return record.types
    return pick(record.import) ?? pick(record.default) ?? pick(record.node)
  }
  const exported = manifest.exports && typeof manifest.exports === 'object' && '.' in manifest.exports ? manifest.exports['.'] : manifest.exports
  const types = pick(exported) ?? manifest.types ?? manifest.typings
  if (typeof types !== 'string' || !existsSync(join(dir, types))) return dir
  return join(dir, types)
    .replace(/\.d\.mts$/, '.mjs')
    .replace(/\.d\.cts$/, '.cjs')
    .replace(/\.d\.ts$/, '.js')
}

/** The declaration file a relative specifier of a declaration file points at. */
function declarationOf(from: string, specifier: string): string | undefined {
  const target = resolve(dirname(from), specifier)
  const candidates = /\.mjs$/.test(target)
    ? [target.replace(/\.mjs$/, '.d.mts')]
    : /\.cjs$/.test(target)
      ? [target.replace(/\.cjs$/, '.d.cts')]
      : /\.js$/.test(target)
        ? [target.replace(/\.js$/, '.d.ts')]
        : /\.d\.[mc]?ts$/.test(target)
          ? [target]
          : [`${target}.d.ts`, `${target}.d.mts`, join(target, 'index.d.ts')]
  return candidates.find((file) => existsSync(file))
}

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\2/g

/**
 * Makes the server's TypeScript see the packages the server runs:
 * - `h3` is Nitro's h3 (v1), as Nitro aliases it when bundling; Nuxt maps it to whichever h3 the app's node_modules
 *   has at the top, which can be the gateway's h3 v2 that npm hoisted there;
 * - the gateway's declarations, which import its own h3 (v2), are read from a copy in the build folder whose bare
 *   imports point where the gateway's package finds them (a tsconfig `paths` entry applies to every file: `h3` cannot
 *   mean v1 for the app and v2 for the gateway otherwise). `paths` sends `model-gateway` to that copy.
 */
function alignServerTypes(nitro: NitroInstance, types: { tsConfig?: TsConfig }, rootDir: string, warn: (message: string) => void) {
  const tsConfig = (types.tsConfig ??= {})
  const compilerOptions = (tsConfig.compilerOptions ??= {})
  const paths = (compilerOptions.paths ??= {})
  const tsconfigDir = dirname(resolve(nitro.options.buildDir, nitro.options.typescript.tsconfigPath ?? 'types/tsconfig.json'))
  const nitroH3 = nitro.options.alias.h3 && isAbsolute(nitro.options.alias.h3) ? packageDirOf(nitro.options.alias.h3, 'h3') : undefined
  if (nitroH3) paths.h3 = [withDot(toPosix(relative(tsconfigDir, nitroH3)))]

  let gatewayDir: string | undefined
  try {
    gatewayDir = packageDirOf(createRequire(join(rootDir, 'package.json')).resolve('model-gateway'), 'model-gateway')
  } catch {}
  if (!gatewayDir) return
  const copyRoot = join(nitro.options.buildDir, 'model-gateway/types')
  // Where TypeScript finds a package for a file of the copy: `paths` first, else node_modules up from the build folder.
  const seenFromCopy = (name: string) => (paths[name]?.[0] ? resolve(tsconfigDir, paths[name][0]) : findPackage(copyRoot, name))
  const manifest = JSON.parse(readFileSync(join(gatewayDir, 'package.json'), 'utf8'))
  const entries = Object.entries((manifest.exports ?? {}) as Record<string, { types?: unknown } | string>)
    .flatMap(([subpath, target]) =>
      typeof target === 'object' && typeof target.types === 'string' ? [[subpath, join(gatewayDir, target.types)] as const] : [],
    )
    .filter(([, file]) => existsSync(file))
  const queue = entries.map(([, file]) => file)
  const copied = new Set<string>()
  let rewritten = false
  while (queue.length) {
    const file = queue.shift()!
    if (copied.has(file)) continue
    copied.add(file)
    const copy = join(copyRoot, relative(gatewayDir, file))
    const text = readFileSync(file, 'utf8').replace(SPECIFIER, (whole, lead: string, quote: string, specifier: string) => {
      if (specifier.startsWith('.')) {
        const target = declarationOf(file, specifier)
        if (target && !relative(gatewayDir, target).startsWith('..')) queue.push(target)
        return whole
      }
      if (specifier.startsWith('node:') || specifier !== packageName(specifier)) return whole
      const own = findPackage(gatewayDir, specifier)
      if (!own || own === seenFromCopy(specifier)) return whole
      rewritten = true
      return `${lead}${quote}${withDot(toPosix(relative(dirname(copy), typesEntry(own))))}${quote}`
    })
    mkdirSync(dirname(copy), { recursive: true })
    writeFileSync(copy, text)
  }
  if (!entries.length) warn('the installed model-gateway has no declaration files: useModelGateway() is untyped')
  if (!rewritten) return
  for (const [subpath, file] of entries) {
    if (subpath.includes('*')) continue
    paths[`model-gateway${subpath.slice(1)}`] = [withDot(toPosix(relative(tsconfigDir, join(copyRoot, relative(gatewayDir, file)))))]
  }
}
