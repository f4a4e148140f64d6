// model-gateway/nuxt in a real Nuxt 4 app: test/fixtures/nuxt-app, built from the packed package with Node ≥ 22.19
// (Node 24 from the npm registry when this one is older) and started from its .output, then the adapter contract
// over HTTP; and how the server starts and stops (a bad secret, none, SIGTERM during a stream). The first run installs
// and builds (a few minutes); later runs reuse both while nothing changed. nuxi dev and the types: nuxt-dev.test.ts.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXTURE_SECRET, prepareFixture, runBuiltServer, startFixture, streamSlowChat, type RunningFixture } from '../fixtures/nuxt-fixture'
import { units } from '../helpers/sse'
import { describeContract } from './contract'
import { runFirstPartyContract } from './first-party-contract'
import { SLOW_ECHO_MODEL } from './contract-providers'

let fixture: RunningFixture
let node: string

beforeAll(async () => {
  ;({ node } = await prepareFixture())
  fixture = await startFixture(node)
}, 40 * 60_000)
afterAll(() => fixture?.stop())

describe('model-gateway/nuxt in a built Nuxt 4 app', () => {
  it('serves the app’s own pages next to the gateway', async () => {
    const home = await fetch(`${fixture.url}/`)
    expect(home.status).toBe(200)
    expect(await home.text()).toContain('Nuxt fixture of model-gateway')
  })

  it('mounts only under the base path: other /api paths stay Nuxt’s', async () => {
    const other = await fetch(`${fixture.url}/api/v2/me`)
    expect(other.headers.get('content-type')).toMatch(/^text\/html/)
    expect(other.headers.get('x-request-id')).toBeNull()
    expect(await other.text()).toContain('Nuxt fixture of model-gateway')
  })

  it('keeps the records in Nitro’s storage mount when asked (nitroStorage: gateway, fs driver)', () => {
    const users = join(fixture.cwd, '.data/gateway/users')
    expect(existsSync(users)).toBe(true)
    expect(readdirSync(users)).toContain(fixture.bootstrap.userId)
  })

  it('takes the secret from runtimeConfig (NUXT_MODEL_GATEWAY_SECRET), not a random one', () => {
    expect(FIXTURE_SECRET.length).toBeGreaterThanOrEqual(32)
    expect(fixture.output()).not.toMatch(/no `?secret`? given/)
  })
})

describe('first-party mode in the built Nuxt app (session cookie, useGatewayClient in the app’s own route)', () => {
  it('a signed-in user chats without a key, a forged cross-site POST is refused, keys work as before, and the app’s route calls in process', async () => {
    await runFirstPartyContract({ api: `${fixture.url}/api/v1`, host: `${fixture.url}/api`, key: fixture.bootstrap.key, echo: (text) => `Echo: ${text}` })
  })
})

describe('the built server’s start and stop', () => {
  it('refuses to start with a short NUXT_MODEL_GATEWAY_SECRET, saying what to set', async () => {
    const { code, output, listened } = await runBuiltServer(node, { NUXT_MODEL_GATEWAY_SECRET: 'short-secret-16c' })
    expect(code).not.toBe(0)
    expect(listened).toBe(false)
    expect(output).toContain(
      '[model-gateway] NUXT_MODEL_GATEWAY_SECRET (runtimeConfig.modelGateway.secret) has 16 characters: the secret must have at least 32.',
    )
    expect(output).toContain('Set it to a random string of 32 characters or more')
  }, 60_000)

  it('without a secret, says so once, in consola’s format (the level once), and serves', async () => {
    const server = await startFixture(node, undefined, { env: { NUXT_MODEL_GATEWAY_SECRET: undefined } })
    try {
      const models = await fetch(`${server.url}/api/v1/models`, { headers: { authorization: `Bearer ${server.bootstrap.key}` } })
      expect(models.status).toBe(200)
    } finally {
      await server.stop()
    }
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes('no secret given'))
    expect(lines).toHaveLength(1)
    // consola's fancy reporter (a terminal) writes "[model-gateway] WARN …"; its basic one (CI, tests) "[warn] [model-gateway] …".
    expect(lines[0]).toMatch(/(\[model-gateway\].*WARN|\[warn\] \[model-gateway\]).*no secret given \(NUXT_MODEL_GATEWAY_SECRET, 32\+ characters\)/)
    expect(lines[0].match(/warn/gi)).toHaveLength(1)
  }, 120_000)

  it('on SIGTERM, drains a stream as close() does: an error chunk, the usage, [DONE], billed', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mg-nuxt-'))
    try {
      // Nitro gives the server NITRO_SHUTDOWN_TIMEOUT (ms) to stop; the module drains for 5 s less (here 1 s).
      const env = { NITRO_SHUTDOWN_TIMEOUT: '6000' }
      const server = await startFixture(node, undefined, { cwd, env })
      let stopping: Promise<string> | undefined
      const started = performance.now()
      const stream = await streamSlowChat(server.url, server.bootstrap.key, (_data, index) => {
        if (index === 3) stopping = server.stop()
      })
      const took = performance.now() - started
      const output = await stopping
      expect(stream.status).toBe(200)
      const chunks = stream.events.slice(0, -1).map((data) => JSON.parse(data))
      expect(stream.events.at(-1)).toBe('[DONE]')
      const failed = chunks.findIndex((chunk) => chunk.error)
      expect(chunks[failed]).toMatchObject({ error: { code: 503, message: 'The gateway is shutting down' }, choices: [{ finish_reason: 'error' }] })
      const usage = chunks.at(-1).usage
      expect(failed).toBe(chunks.length - 2)
      expect(units(String(usage.cost_eur))).toBeGreaterThan(0n)
      expect(took).toBeLessThan(10_000)
      expect(output).toContain('still running after 1000 ms are aborted')

      // Served again from the same records: the generation is there, cancelled, with what was charged.
      const again = await startFixture(node, undefined, { cwd, env })
      try {
        const res = await fetch(`${again.url}/api/v1/generation?id=${stream.generationId}`, { headers: { authorization: `Bearer ${again.bootstrap.key}` } })
        expect(res.status).toBe(200)
        expect((await res.json()).data).toMatchObject({
          id: stream.generationId,
          streamed: true,
          cancelled: true,
          total_cost: usage.cost,
          usage: usage.cost_eur,
          tokens_completion: usage.completion_tokens,
        })
      } finally {
        await again.stop()
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true })
    }
  }, 120_000)
})

describeContract('the adapter contract, check by check, over the Nuxt server', () => ({
  baseUrl: fixture.url,
  key: fixture.bootstrap.key,
  slowModel: SLOW_ECHO_MODEL,
  me: {
    user_id: fixture.bootstrap.userId,
    email: fixture.bootstrap.email,
    org_name: fixture.bootstrap.orgName,
    org_id: fixture.bootstrap.orgId,
    plan: fixture.bootstrap.plan,
    credits: { balance: '10', total_credits: '10', total_usage: '0' },
  },
}))
