import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { createGateway, type Gateway } from '../gateway'
import type { Logger } from '../logger'
import type { GatewayOptions } from '../options'
import type { Provider } from '../contracts'
import { CliError, usageError } from './errors'
import { displayPath, shellQuote } from './paths'
import { defaultProviders, type DefaultProviders } from './providers'
import { loadSecret, type SecretSource } from './secret'
import { openNuxtStorage, openStorageSpec, type StorageTarget } from './storage'

export { displayPath }

/** The file names `--config` defaults to, looked for in the working directory in this order. */
export const CONFIG_FILES = [
  'model-gateway.config.ts',
  'model-gateway.config.mts',
  'model-gateway.config.mjs',
  'model-gateway.config.js',
  'model-gateway.config.cjs',
  'model-gateway.config.json',
]

/** What a config function receives. */
export interface ConfigContext {
  /** The command being run: `serve`, `keys`, `credits`, `users`, `models` or `catalogue`. */
  command: string
  /** The data folder (absolute): where the default storage and the secret live. */
  dataDir: string
  env: NodeJS.ProcessEnv
  /** What the CLI serves when the config names no providers: the demo provider and the environment's. */
  defaultProviders: Provider[]
}

/** A config file's default export: gateway options, or a function (maybe async) returning them. */
export type GatewayConfig = GatewayOptions | ((context: ConfigContext) => GatewayOptions | Promise<GatewayOptions>)

/** The config file to use: the one given (which must exist), else the first of CONFIG_FILES in `cwd`, else none. */
export function findConfig(cwd: string, given?: string): string | undefined {
  if (given) {
    const file = resolve(cwd, given)
    if (!existsSync(file)) throw new CliError(`config file not found: ${given}`)
    return file
  }
  return CONFIG_FILES.map((name) => resolve(cwd, name)).find((file) => existsSync(file))
}

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts'])

/** Loads a config file's default export: JSON is parsed, JavaScript imported natively, TypeScript through jiti. */
export async function importConfig(file: string): Promise<unknown> {
  const name = displayPath(file)
  const ext = extname(file)
  if (ext === '.json') {
    try {
      return JSON.parse(readFileSync(file, 'utf8'))
    } catch (error) {
      throw new CliError(`${name}: not valid JSON (${(error as Error).message})`)
    }
  }
  try {
    const mod = (TS_EXTENSIONS.has(ext) ? await importTypeScript(file) : await import(pathToFileURL(file).href)) as { default?: unknown }
    if (!mod || typeof mod !== 'object' || !('default' in mod)) throw new CliError(`${name}: no default export (write \`export default { … }\`)`)
    return mod.default
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`could not load ${name}: ${(error as Error)?.message ?? String(error)}`)
  }
}

/** jiti when it can be found (from the config's folder, or next to the CLI), else a native import (tsx, newer Node). */
async function importTypeScript(file: string): Promise<unknown> {
  const jitiPath = [file, import.meta.url]
    .map((from) => {
      try {
        return createRequire(from).resolve('jiti')
      } catch {
        return undefined
      }
    })
    .find(Boolean)
  if (jitiPath) {
    const { createJiti } = (await import(pathToFileURL(jitiPath).href)) as {
      createJiti: (id: string, options?: object) => { import: (id: string) => Promise<unknown> }
    }
    return createJiti(file, { interopDefault: false, moduleCache: false }).import(file)
  }
  try {
    return await import(pathToFileURL(file).href)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_UNKNOWN_FILE_EXTENSION') {
      throw new CliError(`${displayPath(file)}: loading a TypeScript config needs jiti (npm install --save-dev jiti); or write the config as .mjs or .json`)
    }
    throw error
  }
}

const isProvider = (value: unknown): value is Provider =>
  !!value &&
  typeof value === 'object' &&
  typeof (value as Provider).slug === 'string' &&
  Array.isArray((value as Provider).models) &&
  typeof (value as Provider).chat === 'function'

const isStorage = (value: unknown): value is Storage =>
  !!value && typeof value === 'object' && typeof (value as Storage).getItem === 'function' && typeof (value as Storage).setItem === 'function'

/** Runs a config's default export and checks the result is gateway options. */
export async function resolveConfig(exported: unknown, context: ConfigContext, name: string): Promise<GatewayOptions> {
  let options: unknown = exported
  if (typeof options === 'function') {
    try {
      options = await (options as (context: ConfigContext) => unknown)(context)
    } catch (error) {
      throw new CliError(`${name}: the config function failed: ${(error as Error)?.message ?? String(error)}`)
    }
  }
  if (!options || typeof options !== 'object' || Array.isArray(options)) {
    throw new CliError(`${name}: the default export must be the gateway options (an object) or a function returning them`)
  }
  const { providers, storage } = options as GatewayOptions
  const json = extname(name) === '.json'
  if (providers !== undefined) {
    if (json) throw new CliError(`${name}: providers cannot be set in a JSON config (they are code): use model-gateway.config.mjs or .ts`)
    if (!Array.isArray(providers)) throw new CliError(`${name}: providers must be an array (openai(), demo(), …)`)
    const bad = providers.findIndex((p) => !isProvider(p))
    if (bad >= 0) throw new CliError(`${name}: providers[${bad}] is not a provider (create one with openai(), hostedProvider(), openaiCompatible(), demo(), …)`)
  }
  if (storage !== undefined) {
    if (json) throw new CliError(`${name}: storage cannot be set in a JSON config: use model-gateway.config.mjs or .ts, or the default files in --data`)
    if (!isStorage(storage)) throw new CliError(`${name}: storage must be an unstorage Storage (createStorage({ driver }))`)
  }
  return options as GatewayOptions
}

/** Where the CLI's gateway gets what it needs, from the flags and the environment. */
export interface OpenOptions {
  command: 'serve' | 'keys' | 'credits' | 'users' | 'rules' | 'orgs' | 'models' | 'catalogue'
  /** `--config`. */
  config?: string
  /** `--data`. */
  data?: string
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** Logger for the gateway unless the config sets one (`serve`), or always (the one-shot commands). */
  logger?: Logger | false
  /** Write a new secret into the data folder when there is none (`serve`). */
  createSecret?: boolean
  /** Records are not needed (`models`): in-memory storage, nothing written to the data folder. */
  noStorage?: boolean
  /** `--storage`: an embedding app's storage (a folder, a redis:// or postgres:// URL, or a JSON mount), instead of `<data>/storage`. */
  storage?: string
  /** `--nuxt`: the folder of a Nuxt app whose model-gateway module's storage to use (docs/first-key.md). */
  nuxt?: string
}

/** A gateway built the way every command builds it, so they all see the same records with the same secret. */
export interface CliGateway {
  gateway: Gateway
  dataDir: string
  configFile?: string
  /** `files in .data/storage`, `from the config`, or the app's storage named by --storage or --nuxt. */
  storageNote: string
  secretSource: SecretSource | 'config' | 'app'
  /** Where the secret came from, for messages: `GATEWAY_SECRET`, `the secret in .data/secret`, `NUXT_MODEL_GATEWAY_SECRET`, … */
  secretFrom: string
  /** The `--storage …` or `--nuxt …` flag the command was given (hints repeat it), or ''. */
  storageFlag: string
  /** Things to tell the user about the storage (printed on stderr by the one-shot commands). */
  warnings: string[]
  /** True when the config listed its own providers. */
  configProviders: boolean
  /**
   * The catalogue file the gateway loads when it exists and `catalogue update` writes: the config's `catalogue` path,
   * else `<data>/catalogue.json` (docs/catalogue.md); undefined when the config gives the catalogue as an object.
   */
  catalogueFile?: string
  defaults: DefaultProviders
  /** Closes the gateway and disposes its storage. */
  close(): Promise<void>
}

/** The catalogue file in the data folder, used when the config names none. */
export const CATALOGUE_FILE = 'catalogue.json'

/** The data folder: `--data`, else DATA_DIR, else `.data`, relative to the working directory. */
export const resolveDataDir = (cwd: string, data: string | undefined, env: NodeJS.ProcessEnv): string => resolve(cwd, data || env.DATA_DIR || '.data')

/** Builds the gateway a command works with: the config's options, completed by the CLI's defaults. */
export async function openGateway(options: OpenOptions): Promise<CliGateway> {
  const env = options.env ?? process.env
  const cwd = options.cwd ?? process.cwd()
  const dataDir = resolveDataDir(cwd, options.data, env)
  const configFile = findConfig(cwd, options.config)
  const defaults = defaultProviders(env)
  const context: ConfigContext = { command: options.command, dataDir, env, defaultProviders: defaults.list }
  const config = configFile ? await resolveConfig(await importConfig(configFile), context, displayPath(configFile, cwd)) : {}

  const configStorage = config.storage
  if (options.storage !== undefined && options.nuxt !== undefined) {
    await configStorage?.dispose()
    throw usageError('--storage and --nuxt each name the storage to use: give one of them')
  }
  // The storage of an app embedding the gateway, opened as the app opens it (docs/first-key.md).
  let target: StorageTarget | undefined
  try {
    if (options.nuxt !== undefined) target = await openNuxtStorage(resolve(cwd, options.nuxt || '.'), env)
    else if (options.storage !== undefined) target = await openStorageSpec(options.storage, cwd)
  } catch (error) {
    await configStorage?.dispose()
    throw error
  }
  const secret = config.secret
    ? { secret: config.secret, source: 'config' as const, from: `the secret in ${displayPath(configFile!, cwd)}` }
    : target?.secret
      ? { ...target.secret, source: 'app' as const }
      : {
          ...loadSecret(dataDir, { env, create: options.createSecret }),
          from: env.GATEWAY_SECRET ? 'GATEWAY_SECRET' : `the secret in ${displayPath(resolve(dataDir, 'secret'), cwd)}`,
        }
  if (secret.secret.length < 32) {
    await Promise.allSettled([configStorage?.dispose(), target?.storage.dispose()])
    throw new CliError(`${secret.from} must be at least 32 characters`)
  }
  const storageDir = resolve(dataDir, 'storage')
  const storage = options.noStorage ? createStorage() : (target?.storage ?? configStorage ?? createStorage({ driver: fsDriver({ base: storageDir }) }))
  const logger = options.command === 'serve' && config.logger !== undefined ? config.logger : options.logger
  // The catalogue file: loaded when it exists; one the config names must exist, except for `catalogue`, which creates it.
  const catalogueFile =
    typeof config.catalogue === 'string' ? resolve(cwd, config.catalogue) : config.catalogue === undefined ? resolve(dataDir, CATALOGUE_FILE) : undefined
  const catalogue =
    typeof config.catalogue === 'object'
      ? config.catalogue
      : catalogueFile && (existsSync(catalogueFile) || (config.catalogue !== undefined && options.command !== 'catalogue'))
        ? catalogueFile
        : undefined
  const disposeAll = async () => {
    await Promise.allSettled([storage, ...(configStorage && configStorage !== storage ? [configStorage] : [])].map((s) => s.dispose()))
  }
  let gateway: Gateway
  try {
    gateway = createGateway({
      ...config,
      ...target?.options,
      storage,
      secret: secret.secret,
      providers: config.providers ?? defaults.list,
      catalogue,
      ...(options.command === 'serve' && config.publicUrl === undefined && env.PUBLIC_URL ? { publicUrl: env.PUBLIC_URL } : {}),
      ...(logger === undefined ? {} : { logger }),
    })
  } catch (error) {
    await disposeAll()
    throw error
  }
  return {
    gateway,
    dataDir,
    configFile,
    storageNote: options.noStorage
      ? 'none'
      : target
        ? target.note
        : configStorage
          ? `from ${displayPath(configFile!, cwd)}`
          : `files in ${displayPath(storageDir, cwd)}`,
    secretSource: secret.source,
    secretFrom: secret.from,
    // A password in a Redis URL is not repeated in hints.
    storageFlag:
      options.nuxt !== undefined
        ? ` --nuxt ${shellQuote(options.nuxt || '.')}`
        : options.storage !== undefined
          ? ` --storage ${shellQuote(options.storage.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@'))}`
          : '',
    warnings: target?.warnings ?? [],
    configProviders: config.providers !== undefined,
    catalogueFile,
    defaults,
    async close() {
      await gateway.close()
      await disposeAll()
    },
  }
}
