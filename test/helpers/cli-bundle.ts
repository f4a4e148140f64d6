import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { build } from 'esbuild'
import { afterAll, beforeAll } from 'vitest'

const root = resolve(import.meta.dirname, '../..')

/** What a CLI run answered. */
export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * The CLI bundled once for a test file with esbuild (dependencies external, as test/integration/cli.test.ts does), at
 * `entry` in a scratch folder removed after the file.
 */
export function cliBundle(prefix: string): { scratch: string; entry: string } {
  const scratch = mkdtempSync(join(tmpdir(), prefix))
  const bundle = join(scratch, 'bundle')
  const entry = join(bundle, 'cli.mjs')
  beforeAll(async () => {
    mkdirSync(bundle)
    symlinkSync(join(root, 'node_modules'), join(bundle, 'node_modules'), 'dir')
    await build({
      entryPoints: [join(root, 'src/cli/main.ts')],
      outfile: entry,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'error',
    })
  }, 60_000)
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  return { scratch, entry }
}

/**
 * The bundled CLI (cliBundle) and `cli(args, cwd)`, which runs `model-gateway <args>` as a real process with no
 * provider keys, secret or data folder from the environment.
 */
export function bundledCli(prefix: string): { scratch: string; cli: (args: string[], cwd: string) => Promise<CliRun> } {
  const { scratch, entry } = cliBundle(prefix)
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
  for (const name of Object.keys(env)) if (/_(API_KEY|BASE_URL)$/.test(name) || ['GATEWAY_SECRET', 'DATA_DIR'].includes(name)) delete env[name]
  const cli = (args: string[], cwd: string) =>
    new Promise<CliRun>((done) => {
      execFile(process.execPath, [entry, ...args], { cwd, env, timeout: 45_000 }, (error, stdout, stderr) => {
        done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr })
      })
    })
  return { scratch, cli }
}
