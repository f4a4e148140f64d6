import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startGateway } from '../helpers/server'
import { bundledCli } from '../helpers/cli-bundle'

// `model-gateway users set-limits` and `users show` as users run them: real processes over a data folder, the CLI
// bundled once with esbuild (as test/integration/cli.test.ts does); then a gateway over the same records enforces them.
const { scratch, cli } = bundledCli('mg-users-cli-')

let upstream: FakeOpenAI
beforeAll(async () => {
  upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
})
afterAll(async () => {
  await upstream?.close()
})

describe('model-gateway users set-limits / show (docs/cli.md)', () => {
  it('sets a user’s limits and its org’s end users’, shows them, refuses bad values, and a gateway over the records enforces them', async () => {
    const cwd = mkdtempSync(join(scratch, 'limits-'))
    const created = await cli(['keys', 'create', '--email', 'ada@example.com'], cwd)
    expect(created.code).toBe(0)
    const key = created.stdout.trim()
    expect((await cli(['credits', 'add', '--email', 'ada@example.com', '--amount', '5'], cwd)).code).toBe(0)

    const set = await cli(
      [
        'users',
        'set-limits',
        '--email',
        'ada@example.com',
        '--credit-limit',
        '2.50',
        '--limit-reset',
        'weekly',
        '--requests-per-minute',
        '1',
        '--max-in-flight',
        '4',
      ],
      cwd,
    )
    expect(set.code).toBe(0)
    expect(set.stdout).toContain('Limits of ada@example.com:')
    expect(set.stdout).toMatch(/credit limit\s+2\.5 EUR per week/)
    expect(set.stdout).toMatch(/requests per minute\s+1/)
    expect(set.stdout).toMatch(/requests at once\s+4/)

    const endUsers = await cli(
      ['users', 'set-limits', '--email', 'ada@example.com', '--end-users', '--credit-limit', '0.5', '--limit-reset', 'daily', '--json'],
      cwd,
    )
    expect(endUsers.code).toBe(0)
    expect(JSON.parse(endUsers.stdout).end_user_limits).toEqual({
      credit_limit: '0.5',
      limit_reset: 'daily',
      requests_per_minute: null,
      max_in_flight: null,
      tokens_per_minute: null,
      tokens_per_day: null,
      spend_limit: null,
      spend_window: null,
    })

    // `none` removes one; the others stay.
    expect((await cli(['users', 'set-limits', '--email', 'ada@example.com', '--max-in-flight', 'none'], cwd)).code).toBe(0)
    const shown = JSON.parse((await cli(['users', 'show', '--email', 'ada@example.com', '--json'], cwd)).stdout)
    expect(shown).toMatchObject({
      user: { email: 'ada@example.com' },
      limits: {
        credit_limit: '2.5',
        limit_reset: 'weekly',
        requests_per_minute: 1,
        max_in_flight: null,
        tokens_per_minute: null,
        tokens_per_day: null,
        spend_limit: null,
        spend_window: null,
      },
      end_user_limits: {
        credit_limit: '0.5',
        limit_reset: 'daily',
        requests_per_minute: null,
        max_in_flight: null,
        tokens_per_minute: null,
        tokens_per_day: null,
        spend_limit: null,
        spend_window: null,
      },
    })
    const text = await cli(['users', 'show', '--email', 'ada@example.com'], cwd)
    expect(text.stdout).toMatch(/Limits of each end user of org "ada@example.com"/)
    expect(text.stdout).toMatch(/credit limit\s+0\.5 EUR per day/)

    // Bad values: an error line naming the flag's limit, nothing changed; no limit named is a usage error.
    for (const args of [
      ['--requests-per-minute', '0'],
      ['--max-in-flight', 'many'],
      ['--credit-limit', '-1'],
      ['--limit-reset', 'hourly'],
    ]) {
      const bad = await cli(['users', 'set-limits', '--email', 'ada@example.com', ...args], cwd)
      expect(bad.code, args.join(' ')).not.toBe(0)
      expect(bad.stderr, args.join(' ')).toContain(args[0].slice(2).replace(/-/g, '_'))
    }
    const nothing = await cli(['users', 'set-limits', '--email', 'ada@example.com'], cwd)
    expect(nothing.code).toBe(2)
    expect(nothing.stderr).toContain('name at least one limit')
    expect((await cli(['users', 'show', '--email', 'nobody@example.com'], cwd)).stderr).toContain('no user with email nobody@example.com')
    expect(JSON.parse((await cli(['users', 'show', '--email', 'ada@example.com', '--json'], cwd)).stdout)).toEqual(shown)

    // A gateway over the same records: one request a minute for Ada.
    const storage = createStorage({ driver: fsDriver({ base: join(cwd, '.data/storage') }) })
    const models = [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }]
    const t = await startGateway({ storage, providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })] })
    try {
      const chat = () =>
        t.request('/api/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
        })
      expect((await chat()).status).toBe(200)
      expect((await chat()).status).toBe(429)
    } finally {
      await t.close()
      await storage.dispose()
    }
  }, 120_000)
  it('keys set-limits and orgs set-limits set a key’s and an org’s tokens, spend and requests limits; a gateway over the records enforces them', async () => {
    const cwd = mkdtempSync(join(scratch, 'traffic-'))
    const created = await cli(['keys', 'create', '--email', 'bo@example.com'], cwd)
    expect(created.code).toBe(0)
    const key = created.stdout.trim()
    expect((await cli(['credits', 'add', '--email', 'bo@example.com', '--amount', '5'], cwd)).code).toBe(0)

    const keySet = await cli(['keys', 'set-limits', key, '--tokens-per-minute', '30', '--spend-limit', '2', '--spend-window', 'hour', '--json'], cwd)
    expect(keySet.code).toBe(0)
    expect(JSON.parse(keySet.stdout).limits).toEqual({
      tokens_per_minute: 30,
      tokens_per_day: null,
      spend_limit: '2',
      spend_window: 'hour',
      requests_per_minute: null,
      max_in_flight: null,
    })
    const orgSet = await cli(['orgs', 'set-limits', '--email', 'bo@example.com', '--max-in-flight', '3', '--tokens-per-day', '1000'], cwd)
    expect(orgSet.code).toBe(0)
    expect(orgSet.stdout).toMatch(/tokens per day\s+1000/)
    expect(orgSet.stdout).toMatch(/requests at once\s+3/)
    expect(orgSet.stdout).toMatch(/spend limit\s+none/)
    const shown = JSON.parse((await cli(['orgs', 'show', '--email', 'bo@example.com', '--json'], cwd)).stdout)
    expect(shown.limits).toEqual({
      tokens_per_minute: null,
      tokens_per_day: 1000,
      spend_limit: null,
      spend_window: null,
      requests_per_minute: null,
      max_in_flight: 3,
    })

    for (const args of [
      ['keys', 'set-limits', key, '--tokens-per-minute', '0'],
      ['orgs', 'set-limits', '--email', 'bo@example.com', '--spend-window', 'week'],
    ]) {
      const bad = await cli(args, cwd)
      expect(bad.code, args.join(' ')).not.toBe(0)
      expect(bad.stderr, args.join(' ')).toContain(args.at(-2)!.slice(2).replace(/-/g, '_'))
    }
    expect((await cli(['orgs', 'set-limits', '--max-in-flight', '2'], cwd)).code).toBe(2)
    expect((await cli(['keys', 'set-limits', key], cwd)).stderr).toContain('name at least one limit')

    // A gateway over the same records: 12 tokens served, then 12 + 21 held would pass the key's 30 a minute.
    const storage = createStorage({ driver: fsDriver({ base: join(cwd, '.data/storage') }) })
    const models = [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }]
    const t = await startGateway({ storage, providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })] })
    try {
      const chat = () =>
        t.request('/api/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'fake/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
        })
      expect((await chat()).status).toBe(200)
      const refused = await chat()
      expect(refused.status).toBe(429)
      expect((await refused.json()).error.metadata).toMatchObject({ limit: 'key', limit_type: 'tokens_per_minute', tokens_per_minute: 30 })
    } finally {
      await t.close()
      await storage.dispose()
    }
  }, 120_000)
})
