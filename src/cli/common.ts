import { createConsola } from 'consola'
import type { Logger } from '../logger'
import { fromUnits, toUnits } from '../billing/money'
import { invalidRequest } from '../errors'
import type { User } from '../stores/account-types'
import type { CliGateway, OpenOptions } from './config'
import { displayPath, shellQuote } from './paths'
import { CliError } from './errors'

/** Narration (what happened, hints, warnings) goes to stderr, so that stdout carries only the result. */
export const say = createConsola({ stdout: process.stderr, stderr: process.stderr, level: 3 })

/** The gateway's logger in one-shot commands: warnings and errors on stderr, nothing else. */
export const stderrLogger: Logger = {
  debug() {},
  info() {},
  warn: (message, fields) => say.warn(fields ? `${message} ${JSON.stringify(fields)}` : message),
  error: (message, fields) => say.error(fields ? `${message} ${JSON.stringify(fields)}` : message),
}

/** Prints a line of the command's result on stdout. */
export const out = (text = ''): void => void process.stdout.write(`${text}\n`)

/** Prints a value as JSON on stdout. */
export const outJson = (value: unknown): void => out(JSON.stringify(value, null, 2))

export const configArg = {
  config: {
    type: 'string',
    valueHint: 'file',
    description: 'Config file (.ts, .mjs, .js or .json). Default: model-gateway.config.* in the working directory, if any',
  },
} as const

export const dataArg = {
  data: { type: 'string', valueHint: 'dir', description: 'Data folder: records in <dir>/storage, the secret in <dir>/secret. Default: $DATA_DIR or .data' },
} as const

/** Where the records are when they are an embedding app's, not `<data>/storage` (docs/first-key.md). */
export const storageArgs = {
  storage: {
    type: 'string',
    valueHint: 'dir|url|json',
    description:
      'The records of an app embedding the gateway (Express, Node, Bun): its storage folder (fs driver), a redis:// URL, a postgres:// URL (a table through db0), or a JSON mount {"driver":"…",…}. Default: <data>/storage',
  },
  nuxt: {
    type: 'string',
    valueHint: 'dir',
    description:
      'The records of the Nuxt app in <dir> (. for here): the Nitro storage its model-gateway module uses (modelGateway.nitroStorage), read from its nuxt.config, with its secret',
  },
} as const

export const jsonArg = {
  json: { type: 'boolean', description: 'Print JSON' },
} as const

export const emailArg = {
  email: { type: 'string', required: true, valueHint: 'email', description: 'The user’s email address' },
} as const

/** Opens the gateway a one-shot command works on, runs `work`, and always closes it. */
export async function withGateway<T>(options: Omit<OpenOptions, 'logger'>, work: (cli: CliGateway) => Promise<T>): Promise<T> {
  // Loaded on demand, so that `--help` does not load the whole gateway.
  const { openGateway } = await import('./config')
  const cli = await openGateway({ ...options, logger: stderrLogger })
  for (const warning of cli.warnings) say.warn(warning)
  try {
    return await work(cli)
  } finally {
    await cli.close()
  }
}

/** The user with this email, or a clear error naming where the CLI looked. */
export async function requireUser(cli: CliGateway, email: string): Promise<User> {
  const user = await cli.gateway.admin.findUserByEmail(email)
  if (user) return user
  throw new CliError(`no user with email ${email} (storage: ${cli.storageNote}); create one with: model-gateway keys create --email ${email}${flagsOf(cli)}`)
}

/** The `--data`/`--config` flags to repeat in a hint so that it acts on the same records. */
export function flagsOf(cli: CliGateway, cwd = process.cwd()): string {
  const data = displayPath(cli.dataDir, cwd)
  return `${data === '.data' ? '' : ` --data ${shellQuote(data)}`}${cli.configFile && !isDefaultConfig(cli.configFile) ? ` --config ${shellQuote(displayPath(cli.configFile, cwd))}` : ''}${cli.storageFlag}`
}

const isDefaultConfig = (file: string) => /(^|[\\/])model-gateway\.config\.[a-z]+$/.test(file) && displayPath(file) === file.split(/[\\/]/).pop()

/** An exact decimal EUR amount given on the command line, checked and written canonically ("10.50" → "10.5"). */
export function decimalFlag(value: string, param: string, options: { positive?: boolean } = {}): string {
  const units = toUnits(value, param)
  if (units < 0n || (options.positive && units === 0n))
    throw invalidRequest(`${param}: must be greater than ${options.positive ? '0' : 'or equal to 0'}`, param)
  return fromUnits(units)
}

/** EUR amounts as the CLI prints them. */
export const eur = (amount: string): string => `${amount} EUR`
