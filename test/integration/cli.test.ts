import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { build } from 'esbuild'
import { eventually } from '../helpers/eventually'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { version } from '../../src/version'

// The CLI as users run it: real processes, in temporary folders. The sources (src/cli/main.ts) are bundled once
// with esbuild, dependencies left external, so each process starts in a fraction of a second; one test also runs
// them through tsx, as in development.
const root = resolve(import.meta.dirname, '../..')
const scratch = mkdtempSync(join(tmpdir(), 'mg-cli-'))
const bundle = join(scratch, 'bundle')
const entry = [join(bundle, 'cli.mjs')]
const tsxEntry = [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'src/cli/main.ts')]

beforeAll(async () => {
  mkdirSync(bundle)
  symlinkSync(join(root, 'node_modules'), join(bundle, 'node_modules'), 'dir')
  await build({
    entryPoints: [join(root, 'src/cli/main.ts')],
    outfile: entry[0],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  })
}, 60_000)

// Nothing from the developer's environment may leak in: no provider keys, secret, data folder, port or colours.
const baseEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
for (const name of Object.keys(baseEnv)) {
  if (/_(API_KEY|BASE_URL)$/.test(name) || ['GATEWAY_SECRET', 'DATA_DIR', 'PORT', 'HOST', 'MODEL_GATEWAY_DEBUG'].includes(name)) delete baseEnv[name]
}

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `model-gateway <args>` to completion (45 s at most) in `cwd`. */
function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, program = entry): Promise<Result> {
  return new Promise((done) => {
    execFile(process.execPath, [...program, ...args], { cwd, env: { ...baseEnv, ...env }, timeout: 45_000 }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr })
    })
  })
}

/** Runs many commands, three at a time (each one is a Node process compiling the sources). */
async function cliAll(runs: [string[], string][]): Promise<Result[]> {
  const results: Result[] = []
  let next = 0
  const worker = async () => {
    while (next < runs.length) {
      const i = next++
      results[i] = await cli(...runs[i])
    }
  }
  await Promise.all([worker(), worker(), worker()])
  return results
}

/** A fresh working folder (the default data folder, `.data`, lands inside it). */
const folder = (name: string) => mkdtempSync(join(scratch, `${name}-`))

const KEY = /^sk-service-v1-[0-9a-f]{64}$/

/** Starts `model-gateway serve --port 0 …` and waits (30 s at most) for the line with its URL. */
async function startServe(cwd: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child: ChildProcess = spawn(process.execPath, [...entry, 'serve', '--port', '0', ...args], {
    cwd,
    env: { ...baseEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve did not start:\n${output}`)), 30_000)
    child.once('exit', (code) => fail(new Error(`serve exited with ${code}:\n${output}`)))
    const check = setInterval(() => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match && /Stop with Ctrl\+C/.test(output)) {
        clearInterval(check)
        clearTimeout(timer)
        done(match[1])
      }
    }, 50)
  })
  const stop = () =>
    new Promise<number | null>((done) => {
      if (child.exitCode !== null) return done(child.exitCode)
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      child.once('exit', (code) => {
        clearTimeout(timer)
        done(code)
      })
      child.kill('SIGTERM')
    })
  return { url, output: () => output, stop }
}

const me = async (url: string, key: string) => {
  const res = await fetch(`${url}/me`, { headers: { authorization: `Bearer ${key}` } })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

describe('the model-gateway CLI', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  it('shows the usage of every command and subcommand with --help', async () => {
    const cwd = folder('help')
    const expected: [string[], string[]][] = [
      [[], ['serve', 'keys', 'credits', 'users', 'models']],
      [['serve'], ['--config', '--port', '--host', '--data', 'GATEWAY_SECRET', 'OPENAI_API_KEY']],
      [['keys'], ['create', 'list', 'revoke']],
      [
        ['keys', 'create'],
        ['--email', '--label', '--credit-limit', '--org', '--json', '--config', '--data', '--storage', 'redis://', 'postgres://'],
      ],
      [
        ['keys', 'list'],
        ['--email', '--json', '--config', '--data'],
      ],
      [
        ['keys', 'revoke'],
        ['KEY', '--config', '--data'],
      ],
      [['credits'], ['add', 'show']],
      [
        ['credits', 'add'],
        ['--email', '--amount', '--note', '--json', '--config', '--data'],
      ],
      [
        ['credits', 'show'],
        ['--email', '--ledger', '--json', '--config', '--data'],
      ],
      [['models'], ['--config', '--json', '--provider']],
      [['catalogue'], ['update']],
      [
        ['catalogue', 'update'],
        ['--from', '--yes', '--config', '--data'],
      ],
    ]
    const results = await cliAll(expected.map(([command]) => [[...command, '--help'], cwd]))
    expected.forEach(([command, words], i) => {
      const { code, stdout, stderr } = results[i]
      expect(code, command.join(' ')).toBe(0)
      expect(stderr).toBe('')
      expect(stdout).toContain(`USAGE model-gateway${command.length ? ` ${command.join(' ')}` : ''}`)
      for (const word of words) expect(stdout, `${command.join(' ')} --help`).toContain(word)
      expect(stdout).not.toMatch(/\u001B\[/) // no colour codes when not on a terminal
    })
    // -h works too, a group without a subcommand shows its usage, and --version the version.
    expect((await cli(['credits', 'add', '-h'], cwd)).stdout).toContain('--amount')
    expect((await cli(['keys'], cwd)).stdout).toContain('USAGE model-gateway keys')
    expect(await cli(['--version'], cwd)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
    // The development entry runs the same CLI from the sources through tsx.
    const dev = await cli(['keys', 'create', '--help'], cwd, {}, tsxEntry)
    expect(dev.code).toBe(0)
    expect(dev.stdout).toContain('--credit-limit')
  }, 180_000)

  it('creates a user and a key, adds credits and shows them', async () => {
    const cwd = folder('credits')
    const created = await cli(['keys', 'create', '--email', 'Ada@Example.com', '--label', 'laptop', '--credit-limit', '5.50'], cwd)
    expect(created.code).toBe(0)
    // The key is the only thing on stdout (for KEY=$(…)); what happened is told on stderr, without the key.
    expect(created.stdout.trim()).toMatch(KEY)
    const key = created.stdout.trim()
    expect(created.stderr).toContain('Created user ada@example.com')
    expect(created.stderr).toContain('credit limit 5.5 EUR')
    expect(created.stderr).toContain('credits add --email ada@example.com')
    expect(created.stderr).not.toContain(key)

    const added = await cli(['credits', 'add', '--email', 'ada@example.com', '--amount', '10.50', '--note', 'welcome'], cwd)
    expect(added.code).toBe(0)
    expect(added.stdout).toContain('Added 10.5 EUR')
    expect(added.stdout).toMatch(/balance\s+10\.5 EUR/)
    const more = await cli(['credits', 'add', '--email', 'ada@example.com', '--amount', '0.25', '--json'], cwd)
    expect(JSON.parse(more.stdout)).toMatchObject({ added: '0.25', credits: { balance: '10.75', total_credits: '10.75', total_usage: '0' } })

    const shown = await cli(['credits', 'show', '--email', 'ada@example.com', '--ledger'], cwd)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/balance\s+10\.75 EUR/)
    expect(shown.stdout).toMatch(/total credits\s+10\.75 EUR/)
    expect(shown.stdout).toMatch(/grant\s+10\.5 EUR\s+welcome/)
    const json = JSON.parse((await cli(['credits', 'show', '--email', 'ada@example.com', '--json'], cwd)).stdout)
    expect(json).toMatchObject({ user: { email: 'ada@example.com' }, org: { name: 'ada@example.com' }, credits: { balance: '10.75' } })

    // A second key for the same user joins the same org; the list shows hashes, never keys.
    const second = await cli(['keys', 'create', '--email', 'ada@example.com', '--json'], cwd)
    const issued = JSON.parse(second.stdout)
    expect(issued).toMatchObject({ user_created: false, org: { id: json.org.id }, credits: { balance: '10.75' } })
    const listed = await cli(['keys', 'list', '--email', 'ada@example.com'], cwd)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(issued.hash)
    expect(listed.stdout).toMatch(/laptop\s+active/)
    expect(listed.stdout).not.toContain('sk-service-v1-')
  }, 180_000)

  it('serves the same records: a key from `keys create` answers GET /me with the credits added, until revoked', async () => {
    const cwd = folder('serve')
    const data = join(cwd, 'gateway-data')
    const key = (await cli(['keys', 'create', '--email', 'grace@example.com', '--data', data], cwd)).stdout.trim()
    expect(key).toMatch(KEY)
    expect((await cli(['credits', 'add', '--email', 'grace@example.com', '--amount', '7.5', '--data', data], cwd)).code).toBe(0)

    const server = await startServe(cwd, ['--data', data])
    try {
      const api = `${server.url}/api/v1`
      expect(server.output()).toContain(`API      ${api}`)
      expect(server.output()).toMatch(/Storage\s+files in gateway-data\/storage/)
      expect(server.output()).toMatch(/Secret\s+new, kept in gateway-data\/secret/)
      expect(server.output()).toMatch(/demo\s+Demo \(offline\), 4 models; built in, offline/)
      expect(statSync(join(data, 'secret')).mode & 0o777).toBe(0o600)

      const first = await me(api, key)
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ email: 'grace@example.com', credits: { balance: '7.5', total_credits: '7.5', total_usage: '0' } })

      // Chat through the demo provider is billed on those credits.
      const chat = await fetch(`${api}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello CLI' }] }),
      })
      expect((await chat.json()).choices[0].message.content).toBe('Echo: Hello CLI')
      const shown = JSON.parse((await cli(['credits', 'show', '--email', 'grace@example.com', '--json', '--data', data], cwd)).stdout)
      expect(shown.credits.total_usage).not.toBe('0')

      // While it runs: credits added and keys issued or revoked by the CLI take effect at once.
      await cli(['credits', 'add', '--email', 'grace@example.com', '--amount', '1', '--data', data], cwd)
      expect((await me(api, key)).body.credits.total_credits).toBe('8.5')
      const late = (await cli(['keys', 'create', '--email', 'grace@example.com', '--data', data], cwd)).stdout.trim()
      expect((await me(api, late)).status).toBe(200)
      const revoked = await cli(['keys', 'revoke', key, '--data', data], cwd)
      expect(revoked.code).toBe(0)
      expect(revoked.stdout).toMatch(/^Revoked the key [0-9a-f]{64} \("API key"\) of grace@example\.com\.\n$/)
      // Another process's change reaches the server's authentication cache within its epoch poll (1 s).
      expect(
        (
          await eventually(
            () => me(api, key),
            (r) => r.status === 401,
          )
        ).status,
      ).toBe(401)
    } finally {
      expect(await server.stop()).toBe(0)
    }

    // Restarted, it keeps the secret it created and every record.
    const again = await startServe(cwd, ['--data', data])
    try {
      expect(again.output()).toMatch(/Secret\s+kept in gateway-data\/secret/)
    } finally {
      await again.stop()
    }
  }, 180_000)

  it('lists the catalogue of the configured providers', async () => {
    const cwd = folder('models')
    const listed = await cli(['models', '--json'], cwd)
    expect(listed.code).toBe(0)
    const models = JSON.parse(listed.stdout)
    expect(models).toContainEqual({
      id: 'demo/echo',
      name: 'Demo: Echo (offline)',
      context_length: 32768,
      pricing_per_million: { prompt: '0.1', completion: '0.2', currency: 'USD' },
      providers: [
        {
          slug: 'demo',
          name: 'Demo (offline)',
          upstream_id: 'echo',
          context_length: 32768,
          pricing_per_million: { prompt: '0.1', completion: '0.2', currency: 'USD' },
        },
      ],
    })
    const table = await cli(['models'], cwd)
    expect(table.stdout).toMatch(
      /^MODEL\s+PROVIDERS\s+INPUT \/1M\s+OUTPUT \/1M\s+CONTEXT\ndemo\/echo\s+demo\s+\$0\.1\s+\$0\.2\s+32,768\ndemo\/embed\s+demo\s+\$0\.02\s+\$0\s+8,192\ndemo\/speech\s+demo\s+\$0\s+\$0\s+-\ndemo\/transcribe\s+demo\s+\$0\s+\$0\s+-\n$/,
    )
    // Env-configured providers join the catalogue; `models` writes nothing to the data folder.
    const withOpenAI = JSON.parse((await cli(['models', '--json', '--provider', 'openai'], cwd, { OPENAI_API_KEY: 'sk-test' })).stdout)
    expect(withOpenAI.map((m: { id: string }) => m.id)).toContain('openai/gpt-6-luna')
    expect(withOpenAI.every((m: { providers: { slug: string }[] }) => m.providers.some((p) => p.slug === 'openai'))).toBe(true)
    expect(() => statSync(join(cwd, '.data'))).toThrow()
  }, 180_000)

  it('answers mistakes with one line and a non-zero exit, never a stack trace', async () => {
    const cwd = folder('errors')
    await cli(['keys', 'create', '--email', 'lin@example.com'], cwd)
    const cases: [string[], number, string][] = [
      [['credits', 'add', '--email', 'lin@example.com', '--amount', 'ten'], 1, 'model-gateway: amount: must be a decimal number such as "10" or "0.25"'],
      [['credits', 'add', '--email', 'lin@example.com', '--amount', '1e3'], 1, 'model-gateway: amount: must be a decimal number such as "10" or "0.25"'],
      [['credits', 'add', '--email', 'lin@example.com', '--amount', '-5'], 1, 'model-gateway: amount: must be greater than 0'],
      [
        ['credits', 'add', '--email', 'nobody@example.com', '--amount', '5'],
        1,
        'model-gateway: no user with email nobody@example.com (storage: files in .data/storage); create one with: model-gateway keys create --email nobody@example.com',
      ],
      [['credits', 'add', '--email', 'lin@example.com'], 2, 'model-gateway: missing required argument: --amount (see: model-gateway credits add --help)'],
      [
        ['keys', 'create', '--email', 'lin@example.com', '--credit-limit', 'lots'],
        1,
        'model-gateway: credit-limit: must be a decimal number such as "10" or "0.25"',
      ],
      [['keys', 'create', '--email', 'not-an-email'], 1, 'model-gateway: email: must be an email address'],
      [
        ['keys', 'revoke', 'sk-service-v1-nope'],
        1,
        'model-gateway: no such key (storage: files in .data/storage); give the key itself or its full hash from: model-gateway keys list --email …',
      ],
      [['serve', '--prot', '3000'], 2, 'model-gateway: unknown option --prot (see: model-gateway serve --help)'],
      [['serve', '--port', 'http'], 2, 'model-gateway: --port: must be a whole number from 0 to 65535, got "http" (see: model-gateway serve --help)'],
      [
        ['kyes', 'create'],
        2,
        'model-gateway: unknown command "kyes" (model-gateway has: serve, keys, credits, users, rules, orgs, models, catalogue) (see: model-gateway --help)',
      ],
      [['models', '--config', 'missing.mjs'], 1, 'model-gateway: config file not found: missing.mjs'],
    ]
    const results = await cliAll(cases.map(([args]) => [args, cwd]))
    cases.forEach(([args, code, line], i) => {
      expect(results[i], args.join(' ')).toEqual({ code, stdout: '', stderr: `${line}\n` })
    })
    // The org still has nothing: no failed command changed anything.
    expect(JSON.parse((await cli(['credits', 'show', '--email', 'lin@example.com', '--json'], cwd)).stdout).credits.total_credits).toBe('0')
    // A short GATEWAY_SECRET is named as the culprit.
    expect((await cli(['keys', 'list', '--email', 'lin@example.com'], cwd, { GATEWAY_SECRET: 'short' })).stderr).toBe(
      'model-gateway: GATEWAY_SECRET must be at least 32 characters\n',
    )
  }, 180_000)

  it('honours a config file: an .mjs module with a custom basePath, found by --config or by its default name', async () => {
    const cwd = folder('config')
    writeFileSync(
      join(cwd, 'gateway.config.mjs'),
      `// A function config: it receives the data folder and the default providers.
export default ({ command, dataDir, defaultProviders }) => ({
  basePath: '/gw/v1',
  providers: defaultProviders,
  modelOverrides: { 'demo/echo': { contextLength: 1000 } },
})
`,
    )
    const key = (await cli(['keys', 'create', '--email', 'kay@example.com', '--config', 'gateway.config.mjs'], cwd)).stdout.trim()
    expect(key).toMatch(KEY)
    await cli(['credits', 'add', '--email', 'kay@example.com', '--amount', '3', '--config', 'gateway.config.mjs'], cwd)

    const server = await startServe(cwd, ['--config', 'gateway.config.mjs'])
    try {
      expect(server.output()).toContain(`API      ${server.url}/gw/v1`)
      expect(server.output()).toMatch(/Config\s+gateway\.config\.mjs/)
      expect(server.output()).toContain('Providers (1, from gateway.config.mjs)')
      const answer = await me(`${server.url}/gw/v1`, key)
      expect(answer.status).toBe(200)
      expect(answer.body.credits).toEqual({ balance: '3', total_credits: '3', total_usage: '0' })
      expect((await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404)
      const models = await (await fetch(`${server.url}/gw/v1/models`)).json()
      expect(models.data.find((m: { id: string }) => m.id === 'demo/echo').context_length).toBe(1000)
    } finally {
      await server.stop()
    }

    // Named model-gateway.config.mjs, it is used without --config; a JSON config works too.
    writeFileSync(join(cwd, 'model-gateway.config.mjs'), `export default { basePath: '/auto' }\n`)
    const auto = await startServe(cwd)
    try {
      expect(auto.output()).toContain(`API      ${auto.url}/auto`)
      expect((await me(`${auto.url}/auto`, key)).status).toBe(200)
    } finally {
      await auto.stop()
    }
    writeFileSync(join(cwd, 'gateway.json'), JSON.stringify({ modelOverrides: { 'demo/echo': { contextLength: 2048 } } }))
    expect(JSON.parse((await cli(['models', '--json', '--config', 'gateway.json'], cwd)).stdout)[0].context_length).toBe(2048)

    // A TypeScript config is loaded too (through jiti).
    writeFileSync(
      join(cwd, 'gateway.config.ts'),
      `interface Overrides { [id: string]: { contextLength: number } }
const modelOverrides: Overrides = { 'demo/echo': { contextLength: 4096 } }
export default { modelOverrides }
`,
    )
    expect(JSON.parse((await cli(['models', '--json', '--config', 'gateway.config.ts'], cwd)).stdout)[0].context_length).toBe(4096)

    // A broken config is one line too.
    writeFileSync(join(cwd, 'broken.mjs'), `export default 42\n`)
    expect(await cli(['models', '--config', 'broken.mjs'], cwd)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'model-gateway: broken.mjs: the default export must be the gateway options (an object) or a function returning them\n',
    })
    writeFileSync(join(cwd, 'throws.mjs'), `throw new Error('no config for you')\n`)
    expect((await cli(['models', '--config', 'throws.mjs'], cwd)).stderr).toBe('model-gateway: could not load throws.mjs: no config for you\n')
  }, 180_000)
})
