import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Where the secret came from (never the secret itself), for what the CLI prints. */
export type SecretSource = 'GATEWAY_SECRET' | 'file' | 'created' | 'ephemeral'

/**
 * The gateway secret shared by `serve`, the CLI and the playground: GATEWAY_SECRET, else the one kept in
 * `<dataDir>/secret`. With `create`, a missing file is generated (32 random bytes, mode 0600); without it a
 * throwaway secret is used and nothing is written (commands that only read or write accounts need no stable secret).
 */
export function loadSecret(
  dataDir: string,
  options: { env?: NodeJS.ProcessEnv; create?: boolean } = {},
): { secret: string; source: SecretSource; file: string } {
  const env = options.env ?? process.env
  const file = join(dataDir, 'secret')
  if (env.GATEWAY_SECRET) return { secret: env.GATEWAY_SECRET, source: 'GATEWAY_SECRET', file }
  if (existsSync(file)) return { secret: readFileSync(file, 'utf8').trim(), source: 'file', file }
  const secret = randomBytes(32).toString('base64url')
  if (!options.create) return { secret, source: 'ephemeral', file }
  mkdirSync(dataDir, { recursive: true })
  try {
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return { secret: readFileSync(file, 'utf8').trim(), source: 'file', file }
  }
  return { secret, source: 'created', file }
}
