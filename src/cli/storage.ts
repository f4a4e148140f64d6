import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { builtinDrivers, createStorage, type Driver, type Storage } from 'unstorage'
import type { GatewayOptions } from '../options'
import { postgresDriver } from '../stores/postgres-driver'
import { CliError } from './errors'
import { displayPath } from './paths'

/**
 * The records of another host, opened by the CLI (docs/first-key.md): the storage, what to call it in messages, and
 * the gateway options that make the CLI's gateway read and write the same keys as the host's.
 */
export interface StorageTarget {
  storage: Storage
  /** `files in .data/gateway`, `Redis at redis://…`, `Nitro storage "gateway" of the Nuxt app in web (files in web/.data/gateway)`. */
  note: string
  /** Options of the host's gateway that decide where and how records are written (storagePrefix, keyPrefix, …). */
  options: Partial<GatewayOptions>
  /** The host's secret, when the CLI can know it (a Nuxt app's NUXT_MODEL_GATEWAY_SECRET), and where it came from. */
  secret?: { secret: string; from: string }
  /** Things the user should know (printed on stderr). */
  warnings: string[]
}

/** A Nitro-style mount: `{ driver: 'fs', base: './.data/gateway' }`, `{ driver: 'redis', url: '…' }`. */
interface MountOptions {
  driver?: unknown
  [option: string]: unknown
}

const FS_DRIVERS = new Set(['fs', 'fsLite', 'fs-lite', 'unstorage/drivers/fs', 'unstorage/drivers/fs-lite'])

/** Creates an unstorage driver from a mount's options (any builtin driver name, or a module); fs bases resolved from `baseDir`. */
async function createDriver(mount: MountOptions, baseDir: string, where: string): Promise<{ driver: Driver; description: string }> {
  const { driver: name, ...options } = mount
  if (typeof name !== 'string' || !name) throw new CliError(`${where}: no driver named (e.g. { "driver": "fs", "base": "./.data/gateway" })`)
  if (name === 'memory' || name === 'unstorage/drivers/memory') {
    throw new CliError(
      `${where}: a memory storage lives inside the app's own process; no command can reach it. Use files or Redis, or create the first key in the app with gateway.admin.ensureDevKey (docs/first-key.md)`,
    )
  }
  const specifier = (builtinDrivers as Record<string, string>)[name] ?? name
  if (FS_DRIVERS.has(name)) {
    if (typeof options.base !== 'string' || !options.base) throw new CliError(`${where}: the ${name} driver needs a base folder`)
    options.base = resolve(baseDir, options.base)
  }
  let factory: (options: unknown) => Driver
  try {
    const mod = (await import(specifier.startsWith('.') || isAbsolute(specifier) ? pathToFileURL(resolve(baseDir, specifier)).href : specifier)) as {
      default?: unknown
    }
    factory = (typeof mod.default === 'function' ? mod.default : mod) as (options: unknown) => Driver
    if (typeof factory !== 'function') throw new Error('its module exports no driver factory')
  } catch (error) {
    throw new CliError(
      `${where}: cannot load the storage driver ${JSON.stringify(name)}: ${(error as Error).message}${name === 'redis' ? ' (the Redis driver needs ioredis: npm install ioredis)' : ''}`,
    )
  }
  const description = FS_DRIVERS.has(name)
    ? `files in ${displayPath(options.base as string)}`
    : name === 'redis' && typeof options.url === 'string'
      ? `Redis at ${redactUrl(options.url)}${typeof options.base === 'string' && options.base ? ` (base ${options.base})` : ''}`
      : `the ${name} driver`
  return { driver: factory(options), description }
}

/** A URL without its password, for messages. */
const redactUrl = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')

/**
 * `--storage <spec>`: the storage an embedding app (Express, Node http, Bun, …) gives `createGateway`, named on the
 * command line: a folder (the fs driver), a `redis://` or `rediss://` URL (the Redis driver, ioredis installed), a
 * `postgres://` or `postgresql://` URL (postgresDriver({ url }), its pool that reconnects; db0 and pg installed; the
 * table `unstorage`, or `?table=<name>`), or a Nitro-style mount as JSON, `{"driver":"<unstorage driver>", …its options}`.
 */
export async function openStorageSpec(spec: string, cwd: string): Promise<StorageTarget> {
  const text = spec.trim()
  if (!text) throw new CliError('--storage: give a folder, a redis:// or postgres:// URL or a JSON mount such as {"driver":"fs","base":"./.data/gateway"}')
  let mount: MountOptions
  if (text.startsWith('{')) {
    try {
      mount = JSON.parse(text) as MountOptions
    } catch (error) {
      throw new CliError(`--storage: not valid JSON (${(error as Error).message})`)
    }
    if (!mount || typeof mount !== 'object' || Array.isArray(mount))
      throw new CliError('--storage: the JSON must be an object such as {"driver":"fs","base":"./.data/gateway"}')
  } else if (/^rediss?:\/\//i.test(text)) {
    mount = { driver: 'redis', url: text }
  } else if (/^postgres(ql)?:\/\//i.test(text)) {
    return openPostgres(text)
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new CliError(
      `--storage: ${text.split(':')[0]}:// is not a storage the CLI knows; give a folder, a redis:// or postgres:// URL or a JSON mount {"driver": …}`,
    )
  } else {
    mount = { driver: 'fs', base: text }
  }
  const { driver, description } = await createDriver(mount, cwd, '--storage')
  return { storage: createStorage({ driver }), note: description, options: {}, warnings: [] }
}

// A PostgreSQL URL: the app's records in its table (`?table=` names one other than unstorage's default), through
// postgresDriver's pool that reconnects (docs/operations.md#postgresql).
async function openPostgres(text: string): Promise<StorageTarget> {
  const url = new URL(text)
  const table = url.searchParams.get('table') ?? undefined
  url.searchParams.delete('table')
  try {
    await import('db0')
    await import('pg' as string)
  } catch (error) {
    throw new CliError(`--storage: PostgreSQL needs db0 and pg (npm install db0 pg): ${(error as Error).message}`)
  }
  // The CLI's connections are named apart from the app's; closing the storage closes the driver's pool.
  const storage = createStorage({ driver: postgresDriver({ url: url.href, tableName: table, application_name: 'model-gateway-cli', max: 2 }) })
  return { storage, note: `PostgreSQL at ${redactUrl(url.href)} (table ${table ?? 'unstorage'})`, options: {}, warnings: [] }
}

/** The part of a Nuxt app's config that decides where the model-gateway module keeps its records. */
interface NuxtConfigView {
  rootDir?: string
  modelGateway?: { nitroStorage?: unknown; storagePrefix?: unknown; setup?: unknown; [option: string]: unknown }
  nitro?: { storage?: Record<string, MountOptions>; devStorage?: Record<string, MountOptions> }
  runtimeConfig?: { modelGateway?: { secret?: unknown } }
}

const NUXT_CONFIGS = ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'].map((ext) => `nuxt.config.${ext}`)

/** The module options, beside the storage, that shape what the CLI writes: issued keys and new users. */
const RECORD_OPTIONS = ['keyPrefix', 'keyTtlSeconds', 'defaultPlan'] as const

/** Loads a Nuxt app's config with the app's own @nuxt/kit (else the one next to the CLI): layers, .env and all. */
async function loadNuxtConfigOf(dir: string, env: NodeJS.ProcessEnv): Promise<NuxtConfigView> {
  const kitPath = [join(dir, 'package.json'), import.meta.url]
    .map((from) => {
      try {
        return createRequire(from).resolve('@nuxt/kit')
      } catch {
        return undefined
      }
    })
    .find(Boolean)
  if (!kitPath)
    throw new CliError(`--nuxt: reading ${displayPath(dir)}'s nuxt.config needs @nuxt/kit (installed with nuxt); run the command in the app after npm install`)
  const kit = (await import(pathToFileURL(kitPath).href)) as {
    loadNuxtConfig: (options: { cwd: string; dotenv?: { cwd: string; env: NodeJS.ProcessEnv } }) => Promise<NuxtConfigView>
  }
  try {
    // As `nuxt dev` does, the app's .env fills in the environment the CLI reads (NUXT_MODEL_GATEWAY_SECRET).
    return await kit.loadNuxtConfig({ cwd: dir, dotenv: { cwd: dir, env } })
  } catch (error) {
    throw new CliError(`--nuxt: could not load the nuxt.config of ${displayPath(dir)}: ${(error as Error).message}`)
  }
}

/**
 * `--nuxt <dir>`: the records of the Nuxt app in `dir` as its model-gateway module keeps them (adapters/nuxt.ts): the
 * module mounts nothing itself; with `modelGateway.nitroStorage: '<mount>'` the gateway writes to Nitro's root storage
 * with `<mount>` (and `storagePrefix`, if set) as its key prefix, so its records land in the driver of
 * `nitro.storage.<mount>` (Nitro's fs drivers resolve a relative `base` from the server's working directory: the
 * app's folder). Without `nitroStorage` the module keeps records in memory, which no command can reach.
 */
export async function openNuxtStorage(dir: string, env: NodeJS.ProcessEnv): Promise<StorageTarget> {
  if (!existsSync(dir)) throw new CliError(`--nuxt: no such folder: ${displayPath(dir)}`)
  if (!NUXT_CONFIGS.some((name) => existsSync(join(dir, name))))
    throw new CliError(`--nuxt: no nuxt.config in ${displayPath(dir) || '.'}: give the Nuxt app's folder`)
  const config = await loadNuxtConfigOf(dir, env)
  const rootDir = config.rootDir ?? dir
  const moduleOptions = config.modelGateway ?? {}
  const mountName = moduleOptions.nitroStorage
  const warnings: string[] = []
  if (typeof mountName !== 'string' || !mountName) {
    throw new CliError(
      `--nuxt: ${displayPath(rootDir)}'s nuxt.config sets no modelGateway.nitroStorage, so the module keeps its records in memory, inside the server, where no command can reach them. Set nitroStorage and its nitro.storage mount (README "Nuxt"), or create the first key in a server plugin with ensureDevKey (docs/first-key.md)`,
    )
  }
  let mount = config.nitro?.storage?.[mountName]
  let where = `nitro.storage.${mountName}`
  const devMount = config.nitro?.devStorage?.[mountName]
  if (!mount && devMount) {
    mount = devMount
    where = `nitro.devStorage.${mountName}`
    warnings.push(`--nuxt: ${where} is what \`nuxt dev\` uses; the built server uses nitro.storage.${mountName}, which is not set`)
  } else if (devMount) {
    warnings.push(`--nuxt: using nitro.storage.${mountName} (the built server's); \`nuxt dev\` uses nitro.devStorage.${mountName} instead`)
  }
  if (!mount && mountName === 'data') {
    // Nitro's own default for its `data` mount on Node (fs in `nuxt dev`, fs-lite once built; the same folder).
    mount = { driver: 'fs', base: '.data/kv' }
    where = "Nitro's default data mount"
  }
  if (!mount) {
    throw new CliError(
      `--nuxt: modelGateway.nitroStorage is "${mountName}" but nitro.storage.${mountName} is not set in ${displayPath(rootDir)}'s nuxt.config, so the module's records go to Nitro's in-memory default, where no command can reach them`,
    )
  }
  const { driver, description } = await createDriver({ ...mount }, rootDir, `--nuxt: ${where}`)
  // As the module does: Nitro's root storage with the mount, the mount's name (and storagePrefix) as the key prefix.
  const storage = createStorage()
  storage.mount(mountName, driver)
  const storagePrefix = [mountName, typeof moduleOptions.storagePrefix === 'string' ? moduleOptions.storagePrefix : undefined].filter(Boolean).join(':')
  const options: Partial<GatewayOptions> = { storagePrefix }
  for (const name of RECORD_OPTIONS) if (moduleOptions[name] !== undefined) (options as Record<string, unknown>)[name] = moduleOptions[name]
  const setupFile = setupFileOf(rootDir, moduleOptions.setup)
  if (setupFile && /\bstorage\b/.test(readFileSync(setupFile, 'utf8'))) {
    warnings.push(
      `--nuxt: ${displayPath(setupFile)} mentions storage: a \`storage\` it returns replaces nitroStorage in the app, and then the CLI must be given that storage (--storage or --config)`,
    )
  }
  // The module's secret: runtimeConfig.modelGateway.secret, which NUXT_MODEL_GATEWAY_SECRET overrides at run time.
  const configSecret = config.runtimeConfig?.modelGateway?.secret
  const secret = env.NUXT_MODEL_GATEWAY_SECRET
    ? { secret: env.NUXT_MODEL_GATEWAY_SECRET, from: 'NUXT_MODEL_GATEWAY_SECRET' }
    : typeof configSecret === 'string' && configSecret
      ? { secret: configSecret, from: `runtimeConfig.modelGateway.secret of ${displayPath(rootDir)}'s nuxt.config` }
      : undefined
  return {
    storage,
    note: `Nitro storage "${mountName}" of the Nuxt app in ${displayPath(rootDir)} (${description}, key prefix ${storagePrefix})`,
    options,
    secret,
    warnings,
  }
}

/** The module's setup file, when there is one: `modelGateway.setup` (a path from the app's folder), else server/model-gateway.*. */
function setupFileOf(rootDir: string, setup: unknown): string | undefined {
  if (setup === false) return undefined
  const base = typeof setup === 'string' && setup && !/^[~#@]/.test(setup) ? resolve(rootDir, setup) : join(rootDir, 'server', 'model-gateway')
  return [base, ...['.ts', '.mts', '.js', '.mjs'].map((ext) => `${base}${ext}`)].find((file) => existsSync(file) && statSync(file).isFile())
}
