import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { startGateway } from '../helpers/server'
import { bundledCli } from '../helpers/cli-bundle'

// `model-gateway rules set` and `rules show` as operators run them: real processes over a data folder, the CLI
// bundled once with esbuild (as test/integration/cli.test.ts does); then a gateway over the same records enforces them.
const { scratch, cli } = bundledCli('mg-rules-cli-')

let upstream: FakeOpenAI
beforeAll(async () => {
  upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
})
afterAll(async () => {
  await upstream?.close()
})

describe('model-gateway rules set / show (docs/cli.md)', () => {
  it('sets the rules of an org, a user and a key, shows them, refuses bad values, and a gateway over the records applies them', async () => {
    const cwd = mkdtempSync(join(scratch, 'rules-'))
    const created = await cli(['keys', 'create', '--email', 'ada@example.com', '--json'], cwd)
    expect(created.code, created.stderr).toBe(0)
    const { key, hash } = JSON.parse(created.stdout)
    expect((await cli(['credits', 'add', '--email', 'ada@example.com', '--amount', '5'], cwd)).code).toBe(0)

    const org = await cli(
      ['rules', 'set', '--email', 'ada@example.com', '--org', '--allowed-providers', 'up,other', '--max-price', 'prompt=2,completion=3.50'],
      cwd,
    )
    expect(org.code, org.stderr).toBe(0)
    expect(org.stdout).toContain('Rules of org "ada@example.com":')
    expect(org.stdout).toMatch(/allowed providers\s+up, other/)
    expect(org.stdout).toMatch(/max price \(USD\)\s+prompt 2, completion 3\.5/)
    const user = await cli(['rules', 'set', '--email', 'ada@example.com', '--redact', 'both', '--redact-kinds', 'email,card', '--json'], cwd)
    expect(JSON.parse(user.stdout).rules.redact).toEqual({ input: true, output: true, kinds: ['email', 'card'] })
    const byKey = await cli(['rules', 'set', '--email', 'ada@example.com', '--key', hash, '--allowed-models', 'fake/gpt-test', '--enforce-zdr', 'false'], cwd)
    expect(byKey.code, byKey.stderr).toBe(0)
    expect(byKey.stdout).toMatch(/allowed models\s+fake\/gpt-test/)

    const shown = JSON.parse((await cli(['rules', 'show', '--email', 'ada@example.com', '--json'], cwd)).stdout)
    expect(shown.org).toMatchObject({ allowed_providers: ['up', 'other'], max_price: { prompt: '2', completion: '3.5' }, redact: null })
    expect(shown.user.redact).toEqual({ input: true, output: true, kinds: ['email', 'card'] })
    expect(shown.keys[hash]).toMatchObject({ allowed_models: ['fake/gpt-test'], enforce_zdr: false })

    for (const [args, says] of [
      [['--enforce-zdr', 'yes'], '--enforce-zdr'],
      [['--max-price', 'prompt'], '--max-price'],
      [['--max-price', 'prompt=-1'], 'max_price.prompt'],
      [['--redact', 'both', '--redact-kinds', 'ssn'], 'redact.kinds'],
      [[], 'name at least one rule'],
    ] as [string[], string][]) {
      const bad = await cli(['rules', 'set', '--email', 'ada@example.com', ...args], cwd)
      expect(bad.code, args.join(' ')).not.toBe(0)
      expect(bad.stderr, args.join(' ')).toContain(says)
    }

    // A gateway over the same records: the key's allowlist refuses another model, the org's provider list allows "up".
    const storage = createStorage({ driver: fsDriver({ base: join(cwd, '.data/storage') }) })
    const models = ['fake/gpt-test', 'fake/other'].map((id) => ({
      id,
      upstreamId: 'gpt-test',
      pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' },
    }))
    const t = await startGateway({ storage, providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })] })
    try {
      const chat = (model: string) =>
        t.request('/api/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
        })
      expect((await chat('fake/gpt-test')).status).toBe(200)
      const refused = await chat('fake/other')
      expect(refused.status).toBe(403)
      expect((await refused.json()).error.metadata).toMatchObject({ reason: 'model_not_allowed', rule: 'key' })
    } finally {
      await t.close()
      await storage.dispose()
    }
  }, 120_000)
})
