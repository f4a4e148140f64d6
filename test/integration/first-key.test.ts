import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import express from 'express'
import { builtinDrivers, createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import redisDriver from 'unstorage/drivers/redis'
import { createDatabase } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { postgresDriver } from '../../src/stores/postgres-driver'
import { eventually } from '../helpers/eventually'
import { cliBundle } from '../helpers/cli-bundle'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { toBunFetch } from '../../adapters/bun'
import { toExpressHandler } from '../../adapters/express'
import { createGateway, demo, type Gateway } from '../../src/index'
import { TEST_SECRET } from '../helpers/server'
import { dropPostgresTable } from '../helpers/storages'

// docs/first-key.md "Per host" (the README's "First key" in short), host by host, in its own words: the CLI given the
// app's storage (--storage for Express, Node http and Bun; --nuxt for the Nuxt module), and admin.ensureDevKey in the
// app's code.
// `model-gateway serve` with a plain `keys create` is test/integration/cli.test.ts.

// The Nuxt module, run without Nuxt: @nuxt/kit's helpers record what it adds (its server templates), so that its
// server runtime can be run here with what it generates for the app, over a storage built as Nitro builds its mounts.
const kit = vi.hoisted(() => ({ templates: [] as { filename: string; getContents: () => string }[] }))
vi.mock('@nuxt/kit', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  defineNuxtModule: (definition: unknown) => definition,
  addServerTemplate: (template: { filename: string; getContents: () => string }) => void kit.templates.push(template),
  addTemplate: (template: { filename: string }) => ({ ...template, dst: `/build/${template.filename}` }),
  addServerHandler: () => {},
  addServerImports: () => {},
  addServerPlugin: () => {},
  addTypeTemplate: () => {},
  findPath: async () => undefined,
  useLogger: () => ({ warn: () => {}, info: () => {}, error: () => {} }),
}))
// Its server runtime (adapters/nuxt/runtime/), run without Nitro: what the module generated for the app
// (`#model-gateway/app`, written to a file), Nitro's runtime config and storage as the test sets them, and the core
// from the sources.
const nitroTest = vi.hoisted(() => ({ appFile: '', storage: undefined as unknown, runtimeConfig: {} as unknown }))
vi.mock('#model-gateway/app', async () => import((await import('node:url')).pathToFileURL(nitroTest.appFile).href))
vi.mock('nitropack/runtime', () => ({ useStorage: () => nitroTest.storage, useRuntimeConfig: () => nitroTest.runtimeConfig }))
vi.mock('model-gateway', () => import('../../src/index'))

const root = resolve(import.meta.dirname, '../..')
const { scratch, entry } = cliBundle('mg-first-key-')
const KEY = /^sk-service-v1-[0-9a-f]{64}$/
const NUXT_SECRET = 'nuxt-secret-nuxt-secret-nuxt-secret-0123'

// Nothing from the developer's environment may leak in.
const baseEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
for (const name of Object.keys(baseEnv)) {
  if (/_(API_KEY|BASE_URL)$/.test(name) || /^(GATEWAY_SECRET|NUXT_.*|DATA_DIR|NODE_ENV|VITEST.*|MODEL_GATEWAY_DEBUG)$/.test(name)) delete baseEnv[name]
}

interface Result {
  code: number | null
  stdout: string
  stderr: string
}
const cli = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Result> =>
  new Promise((done) => {
    execFile(process.execPath, [entry, ...args], { cwd, env: { ...baseEnv, ...env }, timeout: 45_000 }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr })
    })
  })

const folder = (name: string) => mkdtempSync(join(scratch, `${name}-`))
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

describe('First key: the CLI given an app’s storage (Express, Node http, Bun)', () => {
  it('--storage <folder>: the app’s gateway over the same folder accepts the key, with the credits added, until revoked', async () => {
    const app = folder('express')
    // README: npx model-gateway keys create --email you@example.com --storage ./.data/gateway (then credits add).
    const created = await cli(['keys', 'create', '--email', 'you@example.com', '--storage', './.data/gateway'], app)
    expect(created.code).toBe(0)
    const key = created.stdout.trim()
    expect(key).toMatch(KEY)
    expect(created.stderr).toContain('Records: files in .data/gateway.')
    expect(created.stderr).toContain('credits add --email you@example.com --amount 10 --storage ./.data/gateway')
    expect((await cli(['credits', 'add', '--email', 'you@example.com', '--amount', '10', '--storage', './.data/gateway'], app)).code).toBe(0)

    // The app, as README's Express example with the storage of "First key": files in ./.data/gateway (from the app's folder).
    const storage = createStorage({ driver: fsDriver({ base: join(app, '.data/gateway') }) })
    const gateway = createGateway({ storage, secret: TEST_SECRET, logger: false, providers: [demo()] })
    const server = express()
    server.use(express.json())
    server.use('/ai', toExpressHandler(gateway))
    const listening: Server = await new Promise((done) => {
      const s = server.listen(0, '127.0.0.1', () => done(s))
    })
    const url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}/ai/api/v1`
    try {
      const me = await fetch(`${url}/me`, { headers: bearer(key) })
      expect(me.status).toBe(200)
      expect(await me.json()).toMatchObject({ email: 'you@example.com', credits: { balance: '10', total_credits: '10', total_usage: '0' } })
      const chat = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello' }] }),
      })
      expect(chat.status).toBe(200)
      expect((await chat.json()).choices[0].message.content).toBe('Echo: Hello')

      // Bun's recipe is the same storage and the same gateway, served by Bun.serve({ fetch: toBunFetch(gateway) }).
      expect((await toBunFetch(gateway)(new Request('http://bun.test/api/v1/me', { headers: bearer(key) }))).status).toBe(200)

      // The CLI reads what the app wrote: the charge of that chat is in the ledger it shows.
      const shown = JSON.parse((await cli(['credits', 'show', '--email', 'you@example.com', '--ledger', '--json', '--storage', './.data/gateway'], app)).stdout)
      expect(shown.ledger.map((e: { kind: string; note: string }) => [e.kind, e.note])).toEqual([
        ['grant', 'model-gateway credits add'],
        ['charge', 'chat demo/echo'],
      ])
      expect(shown.credits.total_usage).toBe(shown.ledger[1].amount)

      expect((await cli(['keys', 'revoke', key, '--storage', './.data/gateway'], app)).code).toBe(0)
      // Another process's change reaches the app's authentication cache within its epoch poll (1 s).
      const after = await eventually(
        () => fetch(`${url}/me`, { headers: bearer(key) }),
        (res) => res.status === 401,
      )
      expect(after.status).toBe(401)
    } finally {
      await new Promise((done) => listening.close(done))
      await gateway.close()
      await storage.dispose()
    }
  }, 120_000)

  it.skipIf(!process.env.REDIS_URL)(
    '--storage with a Redis URL or a JSON mount: the app’s gateway over that Redis accepts the key',
    async () => {
      const app = folder('redis')
      const base = `mg-first-key-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
      const mount = JSON.stringify({ driver: 'redis', url: process.env.REDIS_URL, base })
      const storage = createStorage({ driver: redisDriver({ url: process.env.REDIS_URL!, base }) })
      try {
        const key = (await cli(['keys', 'create', '--email', 'redis@example.com', '--storage', mount], app)).stdout.trim()
        expect(key).toMatch(KEY)
        const gateway = createGateway({ storage, secret: TEST_SECRET, logger: false })
        try {
          const me = await gateway.fetch(new Request('http://app.test/api/v1/me', { headers: bearer(key) }))
          expect(me.status).toBe(200)
          expect((await me.json()).email).toBe('redis@example.com')
        } finally {
          await gateway.close()
        }
        // A bare redis:// URL is the Redis driver without a base: the records of an app that gives none.
        const bare = await cli(['keys', 'list', '--email', 'nobody@example.com', '--storage', process.env.REDIS_URL!], app)
        expect(bare.stderr).toContain(
          `no user with email nobody@example.com (storage: Redis at ${process.env.REDIS_URL!.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')})`,
        )
      } finally {
        await storage.clear()
        await storage.dispose()
      }
    },
    120_000,
  )

  it.skipIf(!process.env.DATABASE_URL)(
    '--storage with a postgres:// URL: the app’s gateway over that table accepts the key',
    async () => {
      const app = folder('postgres')
      const table = `mg_first_key_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
      const url = new URL(process.env.DATABASE_URL!)
      url.searchParams.set('table', table)
      const database = createDatabase(postgresql({ url: process.env.DATABASE_URL! }))
      const storage = createStorage({ driver: postgresDriver({ database, tableName: table }) })
      try {
        const key = (await cli(['keys', 'create', '--email', 'pg@example.com', '--storage', url.href], app)).stdout.trim()
        expect(key).toMatch(KEY)
        const gateway = createGateway({ storage, secret: TEST_SECRET, logger: false })
        try {
          const me = await gateway.fetch(new Request('http://app.test/api/v1/me', { headers: bearer(key) }))
          expect(me.status).toBe(200)
          expect((await me.json()).email).toBe('pg@example.com')
        } finally {
          await gateway.close()
        }
        const missing = await cli(['keys', 'list', '--email', 'nobody@example.com', '--storage', url.href], app)
        expect(missing.stderr).toContain(`no user with email nobody@example.com (storage: PostgreSQL at ${process.env.DATABASE_URL} (table ${table}))`)
      } finally {
        await dropPostgresTable(database, table)
        await storage.dispose()
        await database.dispose()
      }
    },
    120_000,
  )

  it('refuses what it cannot reach, in one line', async () => {
    const app = folder('refusals')
    const cases: [string[], string][] = [
      [
        ['--storage', '{"driver":"memory"}'],
        "model-gateway: --storage: a memory storage lives inside the app's own process; no command can reach it. Use files or Redis, or create the first key in the app with gateway.admin.ensureDevKey (docs/first-key.md)",
      ],
      [['--storage', '{"driver":'], 'model-gateway: --storage: not valid JSON'],
      [['--storage', 'mongodb://db/x'], 'model-gateway: --storage: mongodb:// is not a storage the CLI knows'],
      [['--storage', './a', '--nuxt', '.'], 'model-gateway: --storage and --nuxt each name the storage to use: give one of them'],
      [['--nuxt', 'missing'], 'model-gateway: --nuxt: no such folder: missing'],
      [['--nuxt', '.'], 'model-gateway: --nuxt: no nuxt.config in'],
    ]
    for (const [flags, line] of cases) {
      const result = await cli(['keys', 'create', '--email', 'x@example.com', ...flags], app)
      expect(result.code, flags.join(' ')).not.toBe(0)
      expect(result.stdout).toBe('')
      expect(result.stderr.startsWith(line), result.stderr).toBe(true)
    }
    expect(readdirSync(app)).toEqual([]) // nothing written anywhere
  }, 120_000)
})

const generatedDirs: string[] = []
afterAll(() => {
  for (const dir of generatedDirs) rmSync(dir, { recursive: true, force: true })
})

/** README's Nuxt example, as an app's nuxt.config.ts. */
const README_NUXT_CONFIG = `export default defineNuxtConfig({
  modules: ['model-gateway/nuxt'],
  modelGateway: {
    basePath: '/api/v1',
    nitroStorage: 'gateway',
  },
  nitro: { storage: { gateway: { driver: 'fs', base: './.data/gateway' } } },
})
`

/**
 * The gateway of the model-gateway module's server runtime, with what the module generates for the app (its
 * `#model-gateway/app` server template), run over a Nitro root storage built as Nitro builds it from `nitro.storage`
 * (each mount's driver from unstorage's builtin drivers, with its options; an fs `base` resolved from the server's
 * working directory, the app's folder).
 */
async function nuxtModuleGateway(appDir: string): Promise<{ useModelGateway: () => Promise<Gateway>; storage: Storage }> {
  const { loadNuxtConfig } = await vi.importActual<typeof import('@nuxt/kit')>('@nuxt/kit')
  const config = await loadNuxtConfig({ cwd: appDir, dotenv: false })
  const module = (await import('../../adapters/nuxt')).default as unknown as {
    defaults: Record<string, unknown>
    setup: (options: Record<string, unknown>, nuxt: unknown) => Promise<void>
  }
  kit.templates.length = 0
  const { nitro: nitroConfig, modelGateway } = config as unknown as { nitro?: { storage?: Record<string, Record<string, unknown>> }; modelGateway?: object }
  const nitro = { storage: { ...nitroConfig?.storage } }
  const nuxt = {
    options: { dev: false, rootDir: appDir, buildDir: join(appDir, '.nuxt'), serverDir: join(appDir, 'server'), nitro, runtimeConfig: {} },
    hook: () => {},
  }
  await module.setup({ ...module.defaults, ...modelGateway }, nuxt)
  const template = kit.templates.find((t) => t.filename === '#model-gateway/app')!
  const storage = createStorage({})
  for (const [path, options] of Object.entries(nitro.storage)) {
    const factory = ((await import((builtinDrivers as Record<string, string>)[options.driver as string])) as { default: (o: object) => never }).default
    storage.mount(path, factory({ ...options, ...(typeof options.base === 'string' ? { base: resolve(appDir, options.base) } : {}) }))
  }
  mkdirSync(join(root, 'test-results'), { recursive: true }) // absent on a clean checkout
  const generated = mkdtempSync(join(root, 'test-results', 'first-key-'))
  generatedDirs.push(generated)
  nitroTest.appFile = join(generated, 'model-gateway-app.mjs')
  writeFileSync(nitroTest.appFile, template.getContents())
  nitroTest.storage = storage
  nitroTest.runtimeConfig = { modelGateway: { secret: NUXT_SECRET, previousSecrets: [] } }
  const { useModelGateway } = await import('../../adapters/nuxt/runtime/gateway')
  return { useModelGateway, storage }
}

describe('First key: the CLI given a Nuxt app (--nuxt)', () => {
  it('writes where the module’s Nitro storage mount reads: the app’s gateway accepts the key, with the app’s secret', async () => {
    const app = folder('nuxt')
    writeFileSync(join(app, 'nuxt.config.ts'), README_NUXT_CONFIG)
    // README: npx model-gateway keys create --email you@example.com --nuxt . (in the app's folder), then credits add.
    const created = await cli(['keys', 'create', '--email', 'you@example.com', '--nuxt', '.'], app, { NUXT_MODEL_GATEWAY_SECRET: NUXT_SECRET })
    expect(created.code).toBe(0)
    const key = created.stdout.trim()
    expect(key).toMatch(KEY)
    expect(created.stderr).toContain('Records: Nitro storage "gateway" of the Nuxt app in')
    expect(created.stderr).toContain('(files in .data/gateway, key prefix gateway); secret from NUXT_MODEL_GATEWAY_SECRET.')
    // From the app's .env too, as `nuxt dev` reads it.
    writeFileSync(join(app, '.env'), `NUXT_MODEL_GATEWAY_SECRET=${NUXT_SECRET}\n`)
    const credited = await cli(['credits', 'add', '--email', 'you@example.com', '--amount', '10', '--nuxt', '.'], app)
    expect(credited.code).toBe(0)
    expect((await cli(['keys', 'create', '--email', 'second@example.com', '--nuxt', '.'], app)).stderr).toContain('; secret from NUXT_MODEL_GATEWAY_SECRET.')
    // Where the fixture app's own test finds the module's records (test/adapters/nuxt.test.ts): .data/gateway/users.
    expect(readdirSync(join(app, '.data/gateway/users'))).toHaveLength(2)

    const { useModelGateway, storage } = await nuxtModuleGateway(app)
    const gateway = await useModelGateway()
    try {
      expect(gateway.context.options.storagePrefix).toBe('gateway')
      const me = await gateway.fetch(new Request('http://app.test/api/v1/me', { headers: bearer(key) }))
      expect(me.status).toBe(200)
      expect(await me.json()).toMatchObject({ email: 'you@example.com', credits: { balance: '10', total_credits: '10' } })

      // docs/first-key.md's server plugin: (await useModelGateway()).admin.ensureDevKey({ email }) in `nuxt dev`.
      const printed: string[] = []
      const dev = await gateway.admin.ensureDevKey({ email: 'dev@example.com', print: (text) => printed.push(text) })
      expect(dev.key).toMatch(KEY)
      expect(printed.join('\n')).toContain(dev.key!)
      expect((await gateway.fetch(new Request('http://app.test/api/v1/me', { headers: bearer(dev.key!) }))).status).toBe(200)
      // …and that user is then in the files the CLI reads.
      expect((await cli(['keys', 'list', '--email', 'dev@example.com', '--json', '--nuxt', '.'], app)).stdout).toContain('"label": "dev key"')
    } finally {
      await gateway.close()
      await storage.dispose()
    }
  }, 120_000)

  it('says why when the app keeps its records in memory (no nitroStorage, or no such mount)', async () => {
    const app = folder('nuxt-memory')
    writeFileSync(join(app, 'nuxt.config.ts'), `export default defineNuxtConfig({ modules: ['model-gateway/nuxt'] })\n`)
    const none = await cli(['keys', 'create', '--email', 'you@example.com', '--nuxt', '.'], app)
    expect(none.code).toBe(1)
    expect(none.stderr).toMatch(
      /sets no modelGateway\.nitroStorage, so the module keeps its records in memory, inside the server, where no command can reach them\. Set nitroStorage and its nitro\.storage mount \(README "Nuxt"\), or create the first key in a server plugin with ensureDevKey \(docs\/first-key\.md\)\n$/,
    )
    writeFileSync(
      join(app, 'nuxt.config.ts'),
      `export default defineNuxtConfig({ modules: ['model-gateway/nuxt'], modelGateway: { nitroStorage: 'records' } })\n`,
    )
    const unmounted = await cli(['keys', 'create', '--email', 'you@example.com', '--nuxt', '.'], app)
    expect(unmounted.stderr).toMatch(/nitroStorage is "records" but nitro\.storage\.records is not set .*Nitro's in-memory default/)
    expect(existsSync(join(app, '.data'))).toBe(false)
  }, 120_000)
})

describe('First key in code: admin.ensureDevKey', () => {
  it('creates the user with 10 EUR and a working key once; later calls keep it; renew replaces it', async () => {
    // README's Node example: an in-memory gateway, which no CLI can reach.
    const gateway = createGateway({ secret: TEST_SECRET, logger: false, providers: [demo()] })
    const me = (key: string) => gateway.fetch(new Request('http://app.test/api/v1/me', { headers: bearer(key) }))
    try {
      const printed: string[] = []
      const first = await gateway.admin.ensureDevKey({ email: 'You@Example.com', print: (text) => printed.push(text) })
      expect(first).toMatchObject({
        created: true,
        user: { email: 'you@example.com' },
        org: { name: 'you@example.com' },
        credits: { balance: '10', total_credits: '10', total_usage: '0' },
        record: { label: 'dev key', credit_limit: null },
      })
      expect(first.key).toMatch(KEY)
      expect(printed).toEqual([
        `[model-gateway] Dev key for you@example.com (org "you@example.com", balance 10 EUR), shown only now:\n\n  ${first.key}\n\nSend it as "Authorization: Bearer <key>" to /api/v1/… (GET /api/v1/me answers who it is).`,
      ])
      const answer = await me(first.key!)
      expect(answer.status).toBe(200)
      expect(await answer.json()).toMatchObject({ email: 'you@example.com', credits: { balance: '10' } })
      expect(await gateway.admin.ledger(first.org.id)).toMatchObject([{ kind: 'grant', amount: '10', note: 'dev credits (ensureDevKey)' }])

      // On every later start: nothing new, the key already issued keeps working.
      printed.length = 0
      const again = await gateway.admin.ensureDevKey({ email: 'you@example.com', print: (text) => printed.push(text) })
      expect(again).toMatchObject({ key: null, created: false, record: { hash: first.record.hash } })
      expect(printed[0]).toContain('you@example.com already has a dev key')
      expect(printed[0]).not.toContain(first.key!)
      expect((await gateway.admin.getCredits(first.org.id)).total_credits).toBe('10')

      // renew: a new key, the old one revoked; still no new credits.
      const renewed = await gateway.admin.ensureDevKey({ email: 'you@example.com', renew: true, print: false })
      expect(renewed.key).toMatch(KEY)
      expect((await me(renewed.key!)).status).toBe(200)
      expect((await me(first.key!)).status).toBe(401)
      expect(renewed.credits.total_credits).toBe('10')

      // Other credits, or none; bad input is a 400 naming it.
      const poor = await gateway.admin.ensureDevKey({ email: 'poor@example.com', credits: 0, orgName: 'Poor', print: false })
      expect(poor).toMatchObject({ org: { name: 'Poor' }, credits: { balance: '0' } })
      expect((await gateway.admin.ensureDevKey({ email: 'rich@example.com', credits: '2.5', print: false })).credits.balance).toBe('2.5')
      await expect(gateway.admin.ensureDevKey({ email: 'neg@example.com', credits: '-1', print: false })).rejects.toMatchObject({
        status: 400,
        param: 'credits',
      })
      await expect(gateway.admin.ensureDevKey({ email: 'not-an-email', print: false })).rejects.toMatchObject({ status: 400, param: 'email' })
    } finally {
      await gateway.close()
    }
  })

  it('is refused when NODE_ENV is production, creating nothing', async () => {
    const gateway = createGateway({ secret: TEST_SECRET, logger: false })
    vi.stubEnv('NODE_ENV', 'production')
    try {
      await expect(gateway.admin.ensureDevKey({ email: 'prod@example.com', print: false })).rejects.toMatchObject({
        status: 403,
        message: expect.stringMatching(/^ensureDevKey is for development and refuses to run when NODE_ENV is "production"/),
      })
      expect(await gateway.admin.findUserByEmail('prod@example.com')).toBeNull()
    } finally {
      vi.unstubAllEnvs()
      await gateway.close()
    }
  })

  it('gives one user to several instances starting at once over one storage', async () => {
    const storage = createStorage()
    const gateways = [0, 1, 2].map(() => createGateway({ storage, secret: TEST_SECRET, logger: false }))
    try {
      const results = await Promise.all(gateways.map((g) => g.admin.ensureDevKey({ email: 'race@example.com', print: false })))
      expect(new Set(results.map((r) => r.user.id)).size).toBe(1)
      expect(results.filter((r) => r.created)).toHaveLength(1)
      expect((await gateways[0].admin.getCredits(results[0].org.id)).total_credits).toBe('10')
    } finally {
      await Promise.all(gateways.map((g) => g.close()))
      await storage.dispose()
    }
  })
})
