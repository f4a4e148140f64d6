import { execFile, execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The newest PostgreSQL server binaries of this machine (Debian's /usr/lib/postgresql/<version>/bin), or undefined. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b))
  return versions.length ? join(root, versions[versions.length - 1], 'bin') : undefined
}

/** A PostgreSQL cluster of the test's own on 127.0.0.1, which the test stops and starts (as .ci/run starts one). */
export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication). */
  url: string
  port: number
  /** Starts the server and waits until it accepts connections. */
  start(): Promise<void>
  /** Stops it as an operator's restart does (`pg_ctl stop -m fast`: every connection is terminated). */
  stop(): Promise<void>
  /** Stops it and removes its files. */
  destroy(): Promise<void>
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * Creates a throwaway cluster (initdb, trust authentication, no fsync) in a temporary folder, on a free port, run as
 * the postgres user when the tests run as root (PostgreSQL refuses root). Not started: call start().
 */
export async function createPostgresServer(): Promise<PostgresServer> {
  const bin = postgresBinaries()
  if (!bin) throw new Error('no PostgreSQL binaries in /usr/lib/postgresql/*/bin')
  const root = process.getuid?.() === 0
  const dir = mkdtempSync(join(tmpdir(), 'mg-pg-'))
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
  }
  const asPostgres = (command: string, args: string[]) =>
    root ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), args)
  const data = join(dir, 'data')
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'])
  const port = await freePort()
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c fsync=off -c max_connections=60`
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', '-t', '30', '-o', options, 'start'])
    },
    async stop() {
      await asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop'])
    },
    async destroy() {
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
