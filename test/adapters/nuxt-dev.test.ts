// model-gateway/nuxt under `nuxi dev`, and the types a Nuxt app's server code sees. Shares the fixture's install and
// package with nuxt.test.ts (test/fixtures/nuxt-fixture.ts); each part runs on its own copy of the app's sources.
import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareFixture, startDevFixture, streamSlowChat, typecheckFixture, type DevFixture } from '../fixtures/nuxt-fixture'
import { decimalText, units } from '../helpers/sse'

let node: string

beforeAll(async () => {
  ;({ node } = await prepareFixture())
}, 40 * 60_000)

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

describe('model-gateway/nuxt under nuxi dev', () => {
  let dev: DevFixture
  // Started without NUXT_MODEL_GATEWAY_SECRET: the module gives the dev process a random one, said once.
  beforeAll(async () => {
    dev = await startDevFixture(node)
  }, 5 * 60_000)
  afterAll(() => dev?.stop())

  const me = async () => (await (await fetch(`${dev.url}/api/v1/me`, { headers: bearer(dev.bootstrap.key) })).json()).credits as { total_usage: string }

  it('serves the models and a chat', async () => {
    const models = await fetch(`${dev.url}/api/v1/models`, { headers: bearer(dev.bootstrap.key) })
    expect(models.status).toBe(200)
    expect((await models.json()).data.map((model: { id: string }) => model.id)).toEqual(expect.arrayContaining(['demo/echo', 'contract/slow-echo']))
    const chat = await fetch(`${dev.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(dev.bootstrap.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hello dev server' }] }),
    })
    expect(chat.status).toBe(200)
    const body = await chat.json()
    expect(body.choices[0].message.content).toBe('Echo: hello dev server')
    expect(units(String(body.usage.cost_eur))).toBeGreaterThan(0n)
  }, 30_000)

  it('a server file edited during a stream: the reload ends the stream as close() does (error chunk, usage, [DONE]), billed, and the gateway answers again', async () => {
    const before = await me()
    const builds = dev.builds()
    const setupFile = join(dev.dir, 'server/model-gateway.ts')
    const started = performance.now()
    const stream = await streamSlowChat(dev.url, dev.bootstrap.key, (_data, index) => {
      // Two chunks in: the stream runs. Nitro rebuilds the server and replaces its worker.
      if (index === 2) appendFileSync(setupFile, `\n// Edited by nuxt-dev.test.ts during a stream (${new Date().toISOString()})\n`)
    })
    const took = performance.now() - started
    expect(stream.status).toBe(200)
    expect(stream.events.at(-1)).toBe('[DONE]')
    const chunks = stream.events.slice(0, -1).map((data) => JSON.parse(data))
    // Half a minute of chunks, ended by the reload's drain (2 s by default) instead.
    const failed = chunks.findIndex((chunk) => chunk.error)
    expect(failed, `no error chunk; the dev server said:\n${dev.output()}`).toBeGreaterThan(2)
    expect(chunks[failed]).toMatchObject({ error: { code: 503, message: 'The gateway is shutting down' }, choices: [{ finish_reason: 'error' }] })
    expect(failed).toBe(chunks.length - 2)
    const { usage } = chunks.at(-1)
    expect(usage).toMatchObject({ completion_tokens: expect.any(Number), cost_currency: 'USD' })
    expect(units(String(usage.cost_eur))).toBeGreaterThan(0n)
    expect(took).toBeLessThan(20_000)
    expect(dev.builds()).toBeGreaterThan(builds)
    expect(dev.output()).toContain('still running after 2000 ms are aborted')

    // The new worker answers, from the same records (Nitro's fs storage).
    const generation = await fetch(`${dev.url}/api/v1/generation?id=${stream.generationId}`, { headers: bearer(dev.bootstrap.key) })
    expect(generation.status).toBe(200)
    expect((await generation.json()).data).toMatchObject({
      id: stream.generationId,
      streamed: true,
      cancelled: true,
      total_cost: usage.cost,
      usage: usage.cost_eur,
      tokens_completion: usage.completion_tokens,
    })
    expect((await me()).total_usage).toBe(decimalText(units(before.total_usage) + units(String(usage.cost_eur))))
    const again = await fetch(`${dev.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(dev.bootstrap.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'after the reload' }] }),
    })
    expect(again.status).toBe(200)
    expect((await again.json()).choices[0].message.content).toBe('Echo: after the reload')
    expect(readFileSync(setupFile, 'utf8')).toContain('Edited by nuxt-dev.test.ts')
  }, 90_000)

  it('says once per process that it has no secret, in consola’s format (the level once)', () => {
    const lines = dev
      .output()
      .split('\n')
      .filter((line) => line.includes('no secret given'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/\[model-gateway\].*WARN.*no secret given \(NUXT_MODEL_GATEWAY_SECRET/)
    expect(dev.output()).not.toMatch(/warn (no secret|shutting down)/i)
    // The package's declarations are found where its exports nest them (import/require conditions): no false warning.
    expect(dev.output()).not.toContain('has no declaration files')
  })
})

describe('the types of a Nuxt app’s server code', () => {
  it(
    'useModelGateway() is the gateway’s type, not any: tsc over the server tsconfig (skipLibCheck off) finds nothing of the gateway’s',
    async () => {
      const { ours, others } = await typecheckFixture(node)
      // server/typed.ts expects errors (@ts-expect-error) that only typed code has: with `any`, tsc reports the unused
      // directives, which count as ours. The others are third-party declarations' own (see typecheckFixture).
      console.info(`[nuxt-dev.test] tsc: ${others.length} diagnostic(s) in third-party declarations, none the gateway's to fix`)
      expect(ours).toEqual([])
    },
    10 * 60_000,
  )
})
