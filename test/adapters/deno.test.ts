/**
 * The gateway under the real Deno runtime (model-gateway/deno, docs/edge.md#deno), over Redis at REDIS_URL: one Deno
 * process (the `deno` npm package) serves the TypeScript sources with Deno.serve, beside a Node instance on the same
 * Redis records; both reach the fake OpenAI upstream in this Node process. Chat whole and streamed, each charged
 * exactly, and requests racing on both instances for one small balance reconcile.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { createStorage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toUnits } from '../../src/billing/money'
import { runContract } from './contract'
import { SLOW_ECHO_MODEL } from './contract-providers'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { expectReconciled } from '../helpers/outage'
import { fakeUpProvider } from '../helpers/providers'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, readSse, units } from '../helpers/sse'

const root = resolve(import.meta.dirname, '../..')
const deno = resolve(root, 'node_modules/.bin/deno')
const REDIS_URL = process.env.REDIS_URL
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
// The same prices in EUR at the gateway's default rate (0.86 EUR a USD).
const EUR = { prompt: '0.00000086', completion: '0.00000172' }
const json = { 'content-type': 'application/json' }

/** Starts the Deno fixture; resolves to what it printed once it listens. */
function startDeno(env: Record<string, string>): { child: ChildProcess; started: Promise<{ url: string; runtime: string }> } {
  // The least permissions it needs: loopback sockets (Redis, the upstream, its own server), its environment, and
  // reading the checkout (the sources and node_modules, which Deno uses as they are: no registry, no lock file).
  const child = spawn(
    deno,
    [
      'run',
      '--allow-net=127.0.0.1',
      '--allow-env',
      `--allow-read=${root}`,
      '--node-modules-dir=manual',
      '--unstable-sloppy-imports',
      '--no-lock',
      '--no-prompt',
      'test/fixtures/deno-server.ts',
    ],
    { cwd: root, env: { ...process.env, ...env, DENO_NO_UPDATE_CHECK: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  const started = new Promise<{ url: string; runtime: string }>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`Deno did not start:\n${output}`)), 30_000)
    child.stderr!.on('data', (chunk) => (output += chunk))
    child.stdout!.on('data', (chunk) => {
      output += chunk
      const line = output.split('\n').find((l) => l.startsWith('{'))
      if (line) {
        clearTimeout(timer)
        done(JSON.parse(line))
      }
    })
    child.once('exit', (code) => fail(new Error(`Deno exited with ${code}:\n${output}`)))
  })
  return { child, started }
}

describe.skipIf(!REDIS_URL)('the gateway under Deno (model-gateway/deno) with Redis storage, beside a Node instance', () => {
  const base = `mg-deno-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  let upstream: FakeOpenAI
  let node: TestGateway
  let child: ChildProcess
  let denoUrl: string
  let runtime: string

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    const deno = startDeno({ REDIS_URL: REDIS_URL!, REDIS_BASE: base, UPSTREAM_URL: upstream.url })
    child = deno.child
    node = await startGateway({
      storage: createStorage({ driver: redisDriver({ url: REDIS_URL!, base }) }),
      providers: [fakeUpProvider(upstream, pricing)],
    })
    ;({ url: denoUrl, runtime } = await deno.started)
  }, 60_000)
  afterAll(async () => {
    child?.kill()
    await node?.gateway.internals.storage.clear().catch(() => undefined)
    await node?.close()
    await upstream?.close()
  })

  const chat = (url: string, customer: { auth: Record<string, string> }, stream: boolean) =>
    fetch(`${url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'fake/gpt-test', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
    })
  /** A usage's exact cost in EUR from its tokens and the model's prices. */
  const costOf = (usage: { prompt_tokens: number; completion_tokens: number }) =>
    decimalText(units(EUR.prompt) * BigInt(usage.prompt_tokens) + units(EUR.completion) * BigInt(usage.completion_tokens))

  it('serves chat whole and streamed from Deno, each charged exactly to the balance both instances read', async () => {
    expect(runtime).toMatch(/^2\.\d+\.\d+/)
    const customer = await createCustomer(node.gateway, { credits: '5' })

    const whole = await chat(denoUrl, customer, false)
    expect(whole.status).toBe(200)
    const body = await whole.json()
    expect(body.choices[0].message.content).toBe('Hello from gpt-test: hello there')
    expect(body.usage.prompt_tokens).toBeGreaterThan(0)
    expect(String(body.usage.cost_eur)).toBe(costOf(body.usage))

    const streamed = await chat(denoUrl, customer, true)
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const { events } = await readSse(streamed)
    expect(events.at(-1)).toBe('[DONE]')
    const text = events.map((e) => (typeof e === 'string' ? '' : (e.choices?.[0]?.delta?.content ?? ''))).join('')
    expect(text).toBe('Hello from gpt-test: hello there')
    const usage = events.find((e) => typeof e !== 'string' && e.usage)!.usage
    expect(String(usage.cost_eur)).toBe(costOf(usage))

    // The balance both instances read is 5 EUR less the two exact costs.
    const spent = decimalText(units(costOf(body.usage)) + units(costOf(usage)))
    expect(await node.gateway.admin.getCredits(customer.user.org_id)).toMatchObject({ total_credits: '5', total_usage: spent })
    for (const url of [denoUrl, node.url]) {
      const credits = await (await fetch(`${url}/api/v1/credits`, { headers: customer.auth })).json()
      expect(credits.data).toEqual({ total_credits: 5, total_usage: Number(spent), balance: Number(decimalText(units('5') - units(spent))), currency: 'EUR' })
    }
    await expectReconciled(node.gateway, customer, 2)
  })

  it('passes the adapter contract', async () => {
    const customer = await createCustomer(node.gateway, { credits: '5' })
    await runContract(denoUrl, customer.key)
  })

  it('requests at once on the Deno and the Node instance are each charged once, and the records sum to the credits spent', async () => {
    const customer = await createCustomer(node.gateway, { credits: '5' })
    const costs = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const stream = i % 4 < 2
        const res = await chat(i % 2 ? node.url : denoUrl, customer, stream)
        expect(res.status).toBe(200)
        const usage = stream ? (await readSse(res)).events.find((e) => typeof e !== 'string' && e.usage).usage : (await res.json()).usage
        return units(costOf(usage))
      }),
    )
    await expectReconciled(node.gateway, customer, 8)
    expect((await node.gateway.admin.getCredits(customer.user.org_id)).total_usage).toBe(decimalText(costs.reduce((a, b) => a + b, 0n)))
  })

  it('requests racing on the Deno and the Node instance for one small balance never spend more than it, and reconcile', async () => {
    // Credits for one hold and a half (each 14 prompt tokens × 0.00000086 + 50 completion tokens × 0.00000172 =
    // 0.00009804 EUR), answers that take 300 ms: the requests overlap, and at most one holds the credits at a time.
    const customer = await createCustomer(node.gateway, { credits: '0.00015' })
    upstream.latencyMs = 300
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await chat(i % 2 ? node.url : denoUrl, customer, i % 4 < 2)
        if (res.status === 200) {
          if (res.headers.get('content-type')?.startsWith('text/event-stream')) await readSse(res)
          else await res.json()
        } else expect((await res.json()).error).toMatchObject({ code: 402 })
        return res.status
      }),
    )
    upstream.latencyMs = 0
    const served = answers.filter((status) => status === 200).length
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served).toBeLessThan(12)
    expect(answers.filter((status) => status !== 200).every((status) => status === 402)).toBe(true)
    await expectReconciled(node.gateway, customer, served)
    const credits = await node.gateway.admin.getCredits(customer.user.org_id)
    expect(toUnits(credits.total_usage)).toBeLessThanOrEqual(toUnits('0.00015'))
  })

  // Last: it stops the Deno process.
  it('closes on SIGTERM: the stream in flight ends whole and is charged, then the process exits 0', async () => {
    const customer = await createCustomer(node.gateway, { credits: '5' })
    const res = await fetch(`${denoUrl}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: SLOW_ECHO_MODEL, stream: true, messages: [{ role: 'user', content: 'one two three' }] }),
    })
    expect(res.status).toBe(200)
    const exited = new Promise((done) => child.once('exit', (code) => done(code)))
    const reading = readSse(res)
    child.kill('SIGTERM')
    const { events } = await reading
    expect(events.at(-1)).toBe('[DONE]')
    expect(await exited).toBe(0)
    await expectReconciled(node.gateway, customer, 1)
    await expect(fetch(`${denoUrl}/api/v1/models`)).rejects.toThrow()
  })
})
