import { defineCommand } from 'citty'
import { version } from '../../version'
import type { CliGateway } from '../config'
import { displayPath } from '../paths'
import { CliError, usageError } from '../errors'
import { configArg, dataArg, flagsOf, out, say } from '../common'

/** `model-gateway serve`: the gateway on Node http, with the config's (or the default) storage and providers. */
export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'Serve the gateway over HTTP' },
  args: {
    ...configArg,
    port: { type: 'string', alias: 'p', valueHint: 'port', description: 'Port to listen on; 0 picks a free one. Default: $PORT or 3000' },
    host: { type: 'string', valueHint: 'host', description: 'Address to listen on. Default: $HOST or 127.0.0.1 (this machine only)' },
    ...dataArg,
  },
  async run({ args }) {
    const env = process.env
    const port = parsePort(args.port ?? env.PORT ?? '3000')
    const hostname = args.host || env.HOST || '127.0.0.1'
    const [{ openGateway }, { serve }, { describeProvider }] = await Promise.all([
      import('../config'),
      import('../../../adapters/node'),
      import('../providers'),
    ])
    const cli = await openGateway({ command: 'serve', config: args.config, data: args.data, createSecret: true })
    let server: Awaited<ReturnType<typeof serve>>
    try {
      server = await serve(cli.gateway, { port, hostname })
    } catch (error) {
      await cli.close()
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EADDRINUSE') throw new CliError(`port ${port} on ${hostname} is already in use; choose another with --port (0 picks a free one)`)
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new CliError(`cannot listen on ${hostname}: no such address on this machine`)
      if (code === 'EACCES') throw new CliError(`not allowed to listen on port ${port} (ports below 1024 need privileges)`)
      throw error
    }
    banner(cli, server.url, describeProvider)
    // close() drains requests in flight for up to drainTimeoutMs (docs/operations.md); give it that, and a little more.
    await untilStopped(async () => {
      await server.close()
      await cli.close()
    }, cli.gateway.context.options.drainTimeoutMs + 10_000)
  },
})

function parsePort(text: string): number {
  const port = Number(text)
  if (!/^\d+$/.test(text.trim()) || port > 65535) throw usageError(`--port: must be a whole number from 0 to 65535, got ${JSON.stringify(text)}`)
  return port
}

const secretNotes = {
  GATEWAY_SECRET: () => 'from GATEWAY_SECRET',
  file: (cli: CliGateway) => `kept in ${displayPath(`${cli.dataDir}/secret`)}`,
  created: (cli: CliGateway) => `new, kept in ${displayPath(`${cli.dataDir}/secret`)}`,
  ephemeral: () => 'random for this process',
  config: (cli: CliGateway) => `from ${displayPath(cli.configFile!)}`,
  app: (cli: CliGateway) => `from ${cli.secretFrom}`,
}

function banner(cli: CliGateway, url: string, describeProvider: typeof import('../providers').describeProvider) {
  const { basePath, providers, publicUrl } = cli.gateway.context.options
  const api = `${url}${basePath}`
  out(`model-gateway ${version} listening on ${url}`)
  out(`  API      ${api}  (OpenAPI: ${api}/openapi.json)`)
  if (publicUrl) out(`  Public   ${publicUrl}${basePath}  (links and sign-in return addresses)`)
  out(`  Config   ${cli.configFile ? displayPath(cli.configFile) : 'none (defaults)'}`)
  out(`  Storage  ${cli.storageNote}`)
  out(`  Secret   ${secretNotes[cli.secretSource](cli)}`)
  out(`Providers (${providers.length}${cli.configProviders ? `, from ${displayPath(cli.configFile!)}` : ''}):`)
  const width = Math.max(0, ...providers.map((p) => p.slug.length))
  for (const provider of providers) out(`  ${describeProvider(provider, cli.configProviders ? undefined : cli.defaults.origins[provider.slug], width)}`)
  if (!providers.length) out('  none: every model request will answer 503 (add providers in the config file)')
  if (!cli.configProviders) for (const warning of cli.defaults.warnings) out(`  ! ${warning}`)
  out(`Get a key:  model-gateway keys create --email you@example.com${flagsOf(cli)}`)
  out(`Try:        curl -s ${api}/me -H "Authorization: Bearer $KEY"`)
  out('Stop with Ctrl+C.')
}

/** Resolves once SIGINT or SIGTERM arrived and `stop` finished; a second signal, or `graceMs` of waiting, forces the exit. */
function untilStopped(stop: () => Promise<void>, graceMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(130)
      stopping = true
      say.info(`${signal}: stopping, letting requests in flight finish (again to force)`)
      setTimeout(() => {
        say.warn(`still stopping after ${Math.round(graceMs / 1000)} s: exiting anyway`)
        process.exit(1)
      }, graceMs).unref()
      stop().then(resolve, reject)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
}
