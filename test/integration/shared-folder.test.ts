import { execFile, fork } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromUnits, toUnits } from '../../src/billing/money'
import { createGateway } from '../../src/index'
import { folderLock, LOCKS_FOLDER, STALE_MS } from '../../src/stores/folder-lock'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { CUSTOMER_KEY } from '../helpers/byok-pair'
import { folderGatewayOptions, startFolderGateway } from '../helpers/folder-gateway'
import { startPlayground } from '../helpers/playground'
import { createCustomer } from '../helpers/server'

// Files shared by processes (docs/operations.md#several-instances): every process over one folder takes the folder's
// lock per record, so two gateways, or the CLI next to a running playground, change the same records exactly.
const root = resolve(import.meta.dirname, '../..')
const scratch = mkdtempSync(join(tmpdir(), 'mg-shared-folder-'))
const json = { 'content-type': 'application/json' }
const sum = (amounts: (string | number)[]) => fromUnits(amounts.reduce((total, amount) => total + toUnits(amount), 0n))

afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('two gateway processes over one folder of files', () => {
  const folder = join(scratch, 'gateways')
  let upstream: FakeOpenAI
  let instances: Awaited<ReturnType<typeof startFolderGateway>>[]
  const call = (i: number, path: string, auth: Record<string, string>, method = 'GET', body?: unknown) =>
    fetch(`${instances[i % 2].url}/api/v1${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : json) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  // Customers are made by a third gateway over the same folder, in this process.
  const customer = async (credits: string) => {
    const gateway = createGateway({ ...folderGatewayOptions(upstream.url), storage: createStorage({ driver: fsDriver({ base: folder }) }) })
    const made = await createCustomer(gateway, { credits })
    await gateway.close()
    return made
  }

  beforeAll(async () => {
    mkdirSync(folder)
    upstream = await startFakeOpenAI({ apiKey: ['sk-service-pair-0000', CUSTOMER_KEY] })
    instances = await Promise.all([startFolderGateway(folder, upstream.url), startFolderGateway(folder, upstream.url)])
  }, 60_000)
  afterAll(async () => {
    await Promise.all(instances?.map((instance) => instance.stop()) ?? [])
    await upstream?.close()
  })

  it('answer 200 to exactly one of two DELETEs of one BYOK credential, 40 rounds', async () => {
    const c = await customer('5')
    for (let round = 0; round < 40; round++) {
      const created = await call(round, '/byok', c.auth, 'POST', { key: CUSTOMER_KEY, provider: 'alpha' })
      expect(created.status).toBe(201)
      const { id } = (await created.json()).data
      const statuses = await Promise.all(
        [call(0, `/byok/${id}`, c.auth, 'DELETE'), call(1, `/byok/${id}`, c.auth, 'DELETE')].map(async (p) => (await p).status),
      )
      expect(statuses.sort(), `round ${round}`).toEqual([200, 404])
    }
    for (const i of [0, 1]) expect((await (await call(i, '/byok', c.auth)).json()).total_count).toBe(0)
  }, 60_000)

  it('charge one org from both at once: the balance falls by exactly what the chats cost', async () => {
    const c = await customer('5')
    const answers = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const res = await call(i, '/chat/completions', c.auth, 'POST', { model: 'byok/model', messages: [{ role: 'user', content: `hello ${i}` }] })
        return { status: res.status, body: await res.json() }
      }),
    )
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    const cost = sum(answers.map((a) => a.body.usage.cost_eur))
    expect(toUnits(cost)).toBeGreaterThan(0n)
    for (const i of [0, 1]) {
      const { credits } = await (await call(i, '/me', c.auth)).json()
      expect(credits).toEqual({ balance: fromUnits(toUnits('5') - toUnits(cost)), total_credits: '5', total_usage: cost })
    }
  }, 60_000)
})

/** A process holding the folder lock of `key` in `folder` until it is killed (../helpers/folder-lock-holder.ts), once it holds it. */
async function holdLock(folder: string, key: string) {
  const holder = fork(fileURLToPath(new URL('../helpers/folder-lock-holder.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, LOCK_FOLDER: folder, LOCK_KEY: key },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  await new Promise<void>((held) => holder.stdout!.on('data', (text: Buffer) => text.toString().includes('held') && held()))
  return holder
}

describe('the folder lock', () => {
  it('fails a change that waited too long for a live holder, naming the fix; other records go on', async () => {
    const folder = join(scratch, 'stuck')
    const holder = await holdLock(folder, 'gateway:credits:org-1:granted')
    try {
      const lock = folderLock(folder, 500)
      const started = Date.now()
      await expect(lock('gateway:credits:org-1:granted', async () => 'changed')).rejects.toThrow(
        `model-gateway: storage: a process that uses the records in ${folder} has held the lock of one of them for more than 0.5 s`,
      )
      expect(Date.now() - started).toBeGreaterThanOrEqual(500)
      await expect(lock('gateway:credits:org-1:granted', async () => 'changed')).rejects.toThrow(
        /and is still running \(a killed process's lock is taken over after 10 s\): restart it\. .*use Redis or PostgreSQL/,
      )
      expect(await lock('gateway:credits:org-1:used', async () => 'changed')).toBe('changed')
    } finally {
      holder.kill('SIGKILL')
    }
  }, 30_000)
})

describe('a gateway over files that drains on SIGTERM', () => {
  it('still drains once the folder lock is loaded, with process.once as docs/operations.md shows', async () => {
    const folder = join(scratch, 'drain')
    mkdirSync(folder)
    const upstream = await startFakeOpenAI()
    const instance = await startFolderGateway(folder, upstream.url)
    try {
      const gateway = createGateway({ ...folderGatewayOptions(upstream.url), storage: createStorage({ driver: fsDriver({ base: folder }) }) })
      const c = await createCustomer(gateway, { credits: '5' })
      await gateway.close()
      const chat = async (model: string) => {
        const res = await fetch(`${instance.url}/api/v1/chat/completions`, {
          method: 'POST',
          headers: { ...c.auth, ...json },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
        })
        return { status: res.status, body: await res.json() }
      }
      // A first request takes locks: the lock's library is loaded after the process set its SIGTERM listener.
      expect((await chat('byok/model')).status).toBe(200)
      upstream.slowMs = 700
      const slow = chat('slow/model')
      await new Promise((wait) => setTimeout(wait, 250))
      const exited = new Promise<[number | null, string | null]>((done) => instance.child.once('exit', (code, signal) => done([code, signal])))
      instance.child.kill('SIGTERM')
      // The request in flight is answered and billed, then the process exits by itself.
      const answer = await slow
      expect(answer.status).toBe(200)
      expect(answer.body.choices[0].message.content).toBe('Hello from slow: hello')
      expect(await exited).toEqual([0, null])
    } finally {
      await instance.stop()
      await upstream.close()
    }
  }, 60_000)
})

describe('the CLI next to a running playground, on the same data folder', () => {
  const dataDir = join(scratch, 'playground')
  const bundle = join(scratch, 'bundle')
  let playground: Awaited<ReturnType<typeof startPlayground>>
  let key: string

  /** `model-gateway <args> --data <the playground's>`, from the bundled CLI (as cli.test.ts runs it). */
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
      for (const name of Object.keys(env)) if (/_(API_KEY|BASE_URL)$/.test(name) || ['GATEWAY_SECRET', 'DATA_DIR'].includes(name)) delete env[name]
      execFile(process.execPath, [join(bundle, 'cli.mjs'), ...args, '--data', dataDir], { cwd: scratch, env, timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      )
    })
  const chat = async () => {
    const res = await fetch(`${playground.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...json },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello!' }] }),
    })
    return { status: res.status, body: await res.json() }
  }
  const show = async () => JSON.parse((await cli(['credits', 'show', '--email', 'demo@example.com', '--json', '--ledger'])).stdout)

  beforeAll(async () => {
    mkdirSync(bundle)
    symlinkSync(join(root, 'node_modules'), join(bundle, 'node_modules'), 'dir')
    await build({
      entryPoints: [join(root, 'src/cli/main.ts')],
      outfile: join(bundle, 'cli.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'error',
    })
    playground = await startPlayground(dataDir)
    key = /sk-service-v1-[0-9a-f]{64}/.exec(playground.output())![0]
  }, 90_000)
  afterAll(() => playground?.stop())

  it('adds credits from several CLI processes at once while the playground charges chats: every grant and every charge counted', async () => {
    const before = await show()
    expect(before.credits).toEqual({ balance: '10', total_credits: '10', total_usage: '0' })
    const answers: Awaited<ReturnType<typeof chat>>[] = []
    let adding = true
    const load = Array.from({ length: 6 }, async () => {
      while (adding) answers.push(await chat())
    })
    const added: { code: number; stdout: string; stderr: string }[] = []
    for (let wave = 0; wave < 3; wave++)
      added.push(...(await Promise.all(Array.from({ length: 6 }, () => cli(['credits', 'add', '--email', 'demo@example.com', '--amount', '0.5', '--json'])))))
    adding = false
    await Promise.all(load)

    expect(added.map((a) => a.code)).toEqual(added.map(() => 0))
    expect(answers.length).toBeGreaterThan(0)
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    const charged = sum(answers.map((a) => a.body.usage.cost_eur))
    const after = await show()
    expect(after.credits).toEqual({ balance: fromUnits(toUnits('19') - toUnits(charged)), total_credits: '19', total_usage: charged })
    const grants = after.ledger.filter((e: { kind: string }) => e.kind === 'grant')
    expect(grants.map((e: { amount: string }) => e.amount).sort()).toEqual([...Array(18).fill('0.5'), '10'])
    expect(after.ledger.filter((e: { kind: string }) => e.kind === 'charge')).toHaveLength(answers.length)
  }, 180_000)

  it('a process killed while it holds a lock blocks nobody for ever: its lock is taken over once stale', async () => {
    const { org, credits } = await show()
    const storage = join(dataDir, 'storage')
    expect(existsSync(join(storage, 'gateway/credits', org.id, 'granted'))).toBe(true)
    // A process takes the lock of the org's credits as a gateway over these files does, and is then killed.
    const holder = await holdLock(storage, `gateway:credits:${org.id}:granted`)
    const heldAt = Date.now()
    let answered = 0
    let pending: ReturnType<typeof chat> | undefined
    try {
      // While the holder lives, a chat (whose hold reads the org's credits) waits for it.
      pending = chat().then((answer) => {
        answered = Date.now()
        return answer
      })
      await new Promise((wait) => setTimeout(wait, 2000))
      expect(answered).toBe(0)
    } finally {
      holder.kill('SIGKILL')
    }
    const answer = await pending!
    expect(answer.status).toBe(200)
    // Once the dead holder's lock is stale (it no longer refreshes it), the chat goes on: not before, not much after.
    expect(answered - heldAt).toBeGreaterThanOrEqual(STALE_MS - 1000)
    expect(answered - heldAt).toBeLessThan(STALE_MS + 5000)
    const after = await show()
    expect(after.credits.total_usage).toBe(sum([credits.total_usage, answer.body.usage.cost_eur]))
    expect(readdirSync(join(storage, LOCKS_FOLDER)).filter((name) => name.endsWith('.lock'))).toEqual([])
  }, 60_000)
})
