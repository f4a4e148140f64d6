import { renderUsage, runCommand, type ArgsDef, type CommandDef } from 'citty'
import { version } from '../version'
import { serveCommand } from './commands/serve'
import { keysCommand } from './commands/keys'
import { creditsCommand } from './commands/credits'
import { usersCommand } from './commands/users'
import { rulesCommand } from './commands/rules'
import { orgsCommand } from './commands/orgs'
import { modelsCommand } from './commands/models'
import { catalogueCommand } from './commands/catalogue'
import { CliError, errorLine, usageError } from './errors'

/** The root command: `model-gateway <serve|keys|credits|users|rules|orgs|models|catalogue>`. */
export const mainCommand = {
  meta: { name: 'model-gateway', version, description: 'An embeddable, OpenRouter-style AI gateway: serve it, and manage its keys and credits' },
  subCommands: {
    serve: serveCommand,
    keys: keysCommand,
    credits: creditsCommand,
    users: usersCommand,
    rules: rulesCommand,
    orgs: orgsCommand,
    models: modelsCommand,
    catalogue: catalogueCommand,
  },
} satisfies CommandDef

type AnyCommand = CommandDef<ArgsDef>

const examples: Record<string, string[]> = {
  'model-gateway': [
    'model-gateway serve',
    'model-gateway keys create --email ada@example.com',
    'model-gateway credits add --email ada@example.com --amount 10',
    'model-gateway models',
  ],
  'model-gateway serve': ['model-gateway serve --port 8080', 'model-gateway serve --config model-gateway.config.mjs --data ./gateway-data'],
  'model-gateway keys create': [
    'KEY=$(model-gateway keys create --email ada@example.com --label laptop --credit-limit 5)',
    "model-gateway keys create --email ada@example.com --storage ./.data/gateway   # an Express/Node/Bun app's fs storage",
    'model-gateway keys create --email ada@example.com --storage "$REDIS_URL"',
    'model-gateway keys create --email ada@example.com --nuxt .                    # the Nuxt app in this folder',
  ],
  'model-gateway keys list': ['model-gateway keys list --email ada@example.com'],
  'model-gateway keys revoke': ['model-gateway keys revoke sk-service-v1-…', 'model-gateway keys revoke <hash from keys list>'],
  'model-gateway keys set-limits': ['model-gateway keys set-limits <hash from keys list> --tokens-per-minute 10000 --max-in-flight 4'],
  'model-gateway orgs set-limits': ['model-gateway orgs set-limits --email ada@example.com --spend-limit 50 --spend-window day'],
  'model-gateway credits add': ['model-gateway credits add --email ada@example.com --amount 10 --note "welcome"'],
  'model-gateway credits show': ['model-gateway credits show --email ada@example.com --ledger'],
  'model-gateway users set-limits': [
    'model-gateway users set-limits --email ada@example.com --credit-limit 5 --limit-reset daily --requests-per-minute 60 --max-in-flight 4',
    'model-gateway users set-limits --email ada@example.com --end-users --credit-limit 0.5 --limit-reset monthly',
    'model-gateway users set-limits --email ada@example.com --credit-limit none',
  ],
  'model-gateway users show': ['model-gateway users show --email ada@example.com'],
  'model-gateway models': ['model-gateway models --provider openai', 'model-gateway models --json'],
}

const notes: Record<string, string[]> = {
  'model-gateway': [
    'Every command works on the same records: files in the data folder (--data, default .data), or the',
    'storage of the config file (--config, default model-gateway.config.{ts,mjs,js,json} if present), or',
    "an app's storage named by --storage or --nuxt (keys, credits and users commands).",
  ],
  'model-gateway serve': [
    'The config file default-exports createGateway options, or a function of { command, dataDir, env,',
    'defaultProviders } returning them. What it leaves out, the CLI fills in:',
    '  providers  the offline demo model demo/echo, plus each provider whose key is set: OPENAI_API_KEY,',
    '             ANTHROPIC_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, TOGETHER_API_KEY, FIREWORKS_API_KEY,',
    '             MISTRAL_API_KEY, DEEPSEEK_API_KEY, XAI_API_KEY (and <NAME>_BASE_URL for another address)',
    '  storage    files in <data>/storage',
    '  secret     GATEWAY_SECRET, else <data>/secret (created on first start, mode 0600)',
    '  publicUrl  PUBLIC_URL (the address clients use, e.g. https://gateway.example; set it behind a proxy)',
  ],
  'model-gateway keys create': [
    'The key is printed once, alone on stdout (messages go to stderr); only its hash is stored.',
    'For an app that embeds the gateway, name its storage: --storage (the folder, Redis URL or JSON mount it gives',
    'createGateway) or --nuxt (the Nitro storage of modelGateway.nitroStorage). An app keeping its records in memory',
    'cannot be reached from here: use gateway.admin.ensureDevKey in the app (docs/first-key.md).',
  ],
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
const isFlag = (arg: string) => arg.startsWith('-') && arg !== '-' && !/^-\d/.test(arg)

/** Follows the subcommand names at the start of argv; stops at the first flag or at a command without subcommands. */
function resolvePath(argv: string[]): { cmd: AnyCommand; path: string[]; rest: string[] } {
  let cmd = mainCommand as AnyCommand
  const path = ['model-gateway']
  let rest = argv
  while (cmd.subCommands) {
    const index = rest.findIndex((arg) => !isFlag(arg))
    if (index < 0 || rest.slice(0, index).some(isFlag)) break
    const name = rest[index]
    const sub = (cmd.subCommands as Record<string, AnyCommand>)[name]
    if (!sub) throw usageError(`unknown command "${name}" (${path.join(' ')} has: ${Object.keys(cmd.subCommands).join(', ')})`)
    cmd = sub
    path.push(name)
    rest = rest.slice(index + 1)
  }
  return { cmd, path, rest }
}

/** Refuses options the command does not have, options missing their value, and extra arguments. */
function checkArgs(args: ArgsDef, rest: string[]) {
  const options = new Map<string, ArgsDef[string]>()
  let positionals = 0
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') {
      positionals++
      continue
    }
    const aliases = 'alias' in def && def.alias ? [def.alias].flat() : []
    for (const alias of [name, kebab(name), camel(name), ...aliases]) options.set(alias, def)
  }
  let seen = 0
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    if (arg === '--') {
      seen += rest.length - i - 1
      break
    }
    if (!isFlag(arg)) {
      if (++seen > positionals) throw usageError(`unexpected argument "${arg}"`)
      continue
    }
    const [flag, inline] = [arg.split('=')[0], arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : undefined]
    const name = flag.replace(/^--?/, '')
    const def = options.get(name) ?? (name.startsWith('no-') && options.get(name.slice(3))?.type === 'boolean' ? options.get(name.slice(3)) : undefined)
    if (!def) throw usageError(`unknown option ${flag}`)
    if (def.type === 'boolean') {
      if (inline !== undefined && !['true', 'false'].includes(inline)) throw usageError(`${flag} takes no value`)
      continue
    }
    if (inline === undefined) {
      if (i + 1 >= rest.length) throw usageError(`${flag} needs a value`)
      i++
    }
  }
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001B\[[0-9;]*m/g

/** citty's usage of a command, named by its whole path, with examples and notes; colours only on a terminal. */
async function usage(cmd: AnyCommand, path: string[]): Promise<string> {
  const parent = path.length > 1 ? { meta: { name: path.slice(0, -1).join(' '), version } } : undefined
  const sections = [await renderUsage(cmd, parent as AnyCommand | undefined)]
  const name = path.join(' ')
  if (notes[name]) sections.push(`NOTES\n\n${notes[name].map((line) => `  ${line}`).join('\n')}`)
  if (examples[name]) sections.push(`EXAMPLES\n\n${examples[name].map((line) => `  ${line}`).join('\n')}`)
  const text = `${sections.map((s) => s.trimEnd()).join('\n\n')}\n`
  return process.stdout.isTTY ? text : text.replace(ANSI, '').replace(/[ \t]+$/gm, '')
}

/** Runs the CLI on argv (without `node` and the script); resolves to the exit code. Errors are printed as one line. */
export async function runCli(argv: string[] = process.argv.slice(2)): Promise<number> {
  let path = ['model-gateway']
  try {
    const resolved = resolvePath(argv)
    path = resolved.path
    const { cmd, rest } = resolved
    const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest
    if (flags.includes('--help') || flags.includes('-h')) {
      process.stdout.write(await usage(cmd, path))
      return 0
    }
    if (cmd.subCommands) {
      // No subcommand named: `--version` at the top, else the usage (nothing else is accepted here).
      if (path.length === 1 && rest.length === 1 && (rest[0] === '--version' || rest[0] === '-v')) {
        process.stdout.write(`${version}\n`)
        return 0
      }
      const flag = rest.find(isFlag)
      if (flag) throw usageError(`options go after the command: ${path.join(' ')} <command> … ${flag.split('=')[0]} …`)
      process.stdout.write(await usage(cmd, path))
      return 0
    }
    checkArgs((cmd.args ?? {}) as ArgsDef, rest)
    await runCommand(cmd, { rawArgs: rest })
    return 0
  } catch (error) {
    const usageMistake = (error as Error)?.name === 'CLIError' || (error instanceof CliError && error.exitCode === 2)
    let line = errorLine(error)
    if (usageMistake) line = `${line.charAt(0).toLowerCase()}${line.slice(1)} (see: ${path.join(' ')} --help)`
    process.stderr.write(`model-gateway: ${line}\n`)
    if (process.env.MODEL_GATEWAY_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`)
    return error instanceof CliError ? error.exitCode : usageMistake ? 2 : 1
  }
}

/** Runs the CLI and exits with its code once the output is written (also when a config left handles open). */
export async function main(argv: string[] = process.argv.slice(2)): Promise<never> {
  const code = await runCli(argv)
  await new Promise<void>((resolve) => process.stdout.write('', () => process.stderr.write('', () => resolve())))
  process.exit(code)
}
