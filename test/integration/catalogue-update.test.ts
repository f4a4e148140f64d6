import { execFile, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { cliBundle } from '../helpers/cli-bundle'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, openaiCompatible, type Provider, type ProviderModel } from '../../src/index'
import { applyCatalogueFile, parseCatalogueFile } from '../../src/catalogue/catalogue-file'
import { priceText } from '../../src/catalogue/price-table'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

// `model-gateway catalogue update` as users run it: the CLI bundled once with esbuild (as in cli.test.ts), run as real
// processes in temporary folders, reading the fixtures from files and from a server on 127.0.0.1; then a gateway
// created with the file it wrote lists and bills the new prices. Nothing reaches the internet.
const root = resolve(import.meta.dirname, '../..')
const fixtures = join(root, 'test/fixtures/catalogue')
const { scratch, entry } = cliBundle('mg-catalogue-')
const today = () => new Date().toISOString().slice(0, 10)

// The models the test's config serves (the built-in catalogue may change: these do not).
const usd = (prompt: string, completion: string, more: Record<string, string> = {}) => ({ prompt, completion, ...more, currency: 'USD' })
const MODELS: Record<string, ProviderModel[]> = {
  openai: [
    {
      id: 'openai/gpt-4o-mini',
      name: 'OpenAI: GPT-4o mini',
      contextLength: 128_000,
      maxCompletionTokens: 16_384,
      pricing: usd('0.00000015', '0.0000006', { input_cache_read: '0.000000075' }),
    },
    {
      id: 'openai/gpt-4.1',
      name: 'OpenAI: GPT-4.1',
      contextLength: 1_047_576,
      maxCompletionTokens: 32_768,
      pricing: usd('0.000002', '0.000008', { input_cache_read: '0.0000005' }),
    },
    {
      id: 'openai/gpt-5',
      name: 'OpenAI: GPT-5',
      contextLength: 400_000,
      maxCompletionTokens: 128_000,
      pricing: usd('0.00000125', '0.00001', { input_cache_read: '0.000000125' }),
    },
    {
      id: 'openai/gpt-4o',
      name: 'OpenAI: GPT-4o',
      contextLength: 128_000,
      maxCompletionTokens: 16_384,
      pricing: usd('0.0000025', '0.00001', { input_cache_read: '0.00000125' }),
    },
  ],
  anthropic: [
    {
      id: 'anthropic/claude-sonnet-5.5',
      upstreamId: 'claude-sonnet-5-5',
      name: 'Anthropic: Claude Sonnet 5.5',
      contextLength: 1_000_000,
      maxCompletionTokens: 64_000,
      pricing: usd('0.000002', '0.00001', { input_cache_read: '0.0000001', input_cache_write: '0.0000025' }),
    },
  ],
  groq: [
    {
      id: 'meta-llama/llama-3.3-70b-instruct',
      upstreamId: 'llama-3.3-70b-versatile',
      name: 'Meta: Llama 3.3 70B Instruct',
      contextLength: 128_000,
      maxCompletionTokens: 32_768,
      pricing: usd('0.00000059', '0.00000079'),
    },
  ],
}
// A config over the CLI's default providers (turned on by the keys below), with the models above.
const CONFIG = `const models = ${JSON.stringify(MODELS)}
export default ({ defaultProviders }) => ({ providers: defaultProviders.map((p) => (models[p.slug] ? { ...p, models: models[p.slug] } : p)) })
`

const baseEnv: NodeJS.ProcessEnv = {
  ...process.env,
  NO_COLOR: '1',
  OPENAI_API_KEY: 'sk-never-called',
  ANTHROPIC_API_KEY: 'sk-never-called',
  GROQ_API_KEY: 'sk-never-called',
}
for (const name of Object.keys(baseEnv)) {
  if (
    /_BASE_URL$/.test(name) ||
    [
      'GATEWAY_SECRET',
      'DATA_DIR',
      'PORT',
      'HOST',
      'MODEL_GATEWAY_DEBUG',
      'GEMINI_API_KEY',
      'MISTRAL_API_KEY',
      'TOGETHER_API_KEY',
      'FIREWORKS_API_KEY',
      'DEEPSEEK_API_KEY',
      'XAI_API_KEY',
    ].includes(name)
  )
    delete baseEnv[name]
}

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `model-gateway <args>` to completion in `cwd` (stdin is not a terminal). */
function cli(args: string[], cwd: string): Promise<Result> {
  return new Promise((done) => {
    execFile(process.execPath, [entry, ...args], { cwd, env: baseEnv, timeout: 45_000 }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr })
    })
  })
}

/** A fresh working folder with the test's config as model-gateway.config.mjs. */
function folder(name: string): string {
  const cwd = mkdtempSync(join(scratch, `${name}-`))
  writeFileSync(join(cwd, 'model-gateway.config.mjs'), CONFIG)
  return cwd
}

const LITELLM_REPORT = `Changed (1):
  openai/gpt-4o-mini (openai): input $0.15 → $0.25, output $0.6 → $1, cache read $0.075 → $0.125 per 1M tokens
New (1):
  openai/gpt-5.5 (openai, upstream gpt-5.5): input $1.65, output $13, cache read $0.165 per 1M tokens; context 272,000; max output 128,000
Retired (1):
  openai/gpt-4o (openai): expires 2027-03-31 (no date before)
Unchanged: 4 models.
Skipped 4 rows of the table:
  1 not chat models (embeddings, images, audio, …): text-embedding-3-small
  1 of providers the gateway has no preset for: bedrock
  1 not in the catalogue, and a dated snapshot or an alias of a model: gpt-4o-2024-08-06
  1 not in the catalogue, and a host of other authors’ models, whose model id cannot be told from the host’s id: groq/qwen/qwen3-32b
`

const OPENROUTER_REPORT = `Changed (1):
  openai/gpt-4o-mini (openai): input $0.15 → $0.2, output $0.6 → $0.8, cache read $0.075 → $0.1 per 1M tokens
New (1):
  anthropic/claude-opus-5.6 (anthropic, upstream claude-opus-5-6): input $4, output $20, cache read $0.2, cache write $5 per 1M tokens; web search $0.01 each; context 1,000,000; max output 128,000
Retired (1):
  openai/gpt-4o (openai): expires 2027-03-31 (no date before)
Unchanged: 1 model.
Skipped 4 rows of the table:
  2 of authors without a provider of their own here (OpenRouter’s price is not another host’s): meta-llama, openrouter
  1 OpenRouter variants (:free, :thinking, …): openai/gpt-4o:extended
  1 not chat models (image or audio output): openai/gpt-image-1
`

/** A server on 127.0.0.1 answering each path with a status and body; it records the headers of every request. */
async function startTableServer(routes: Record<string, [number, string]>) {
  const requests: { path: string; headers: IncomingHttpHeaders }[] = []
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? '', headers: req.headers })
    const [status, body] = routes[req.url ?? ''] ?? [404, 'not found']
    res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'text/plain' }).end(body)
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, requests, close: () => new Promise<void>((done) => server.close(() => done())) }
}

/** A port of 127.0.0.1 nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((done) => server.close(() => done()))
  return port
}

describe('model-gateway catalogue update', () => {
  it('shows what LiteLLM’s table changes, and writes nothing without --yes when not on a terminal', async () => {
    const cwd = folder('litellm-dry')
    const result = await cli(['catalogue', 'update', '--from', join(fixtures, 'litellm.json')], cwd)
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(LITELLM_REPORT)
    expect(result.stderr).toContain('LiteLLM’s price table: 11 rows, compared with the models of demo, openai, anthropic, groq')
    expect(result.stderr).toContain('nothing written: run again with --yes')
    expect(existsSync(join(cwd, '.data'))).toBe(false)
  }, 60_000)

  it('writes the changes with --yes into <data>/catalogue.json, which every command then loads; a second run finds nothing to change', async () => {
    const cwd = folder('litellm')
    const written = await cli(['catalogue', 'update', '--from', join(fixtures, 'litellm.json'), '--yes'], cwd)
    expect(written.code).toBe(0)
    expect(written.stdout).toBe(LITELLM_REPORT)
    expect(written.stderr).toContain('Wrote 3 models to .data/catalogue.json')
    const file = parseCatalogueFile(JSON.parse(readFileSync(join(cwd, '.data/catalogue.json'), 'utf8')), 'catalogue.json')
    const source = { url: join(fixtures, 'litellm.json'), checked: today() }
    expect(file).toEqual({
      format: 'model-gateway-catalogue',
      version: 1,
      updated: today(),
      providers: {
        openai: [
          { id: 'openai/gpt-4o-mini', pricing: { prompt: '0.00000025', completion: '0.000001', input_cache_read: '0.000000125', currency: 'USD' }, source },
          {
            id: 'openai/gpt-4o',
            pricing: { prompt: '0.0000025', completion: '0.00001', input_cache_read: '0.00000125', currency: 'USD' },
            expirationDate: '2027-03-31',
            source,
          },
          {
            id: 'openai/gpt-5.5',
            contextLength: 272_000,
            maxCompletionTokens: 128_000,
            pricing: { prompt: '0.00000165', completion: '0.000013', input_cache_read: '0.000000165', currency: 'USD' },
            source,
          },
        ],
      },
    })

    const again = await cli(['catalogue', 'update', '--from', join(fixtures, 'litellm.json')], cwd)
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^Unchanged: 7 models\.\nSkipped 4 rows/)
    expect(again.stderr).toContain('Nothing to change: .data/catalogue.json stays as it is.')

    // `models` (like `serve`, through the same openGateway) loads the file.
    const models = JSON.parse((await cli(['models', '--json', '--provider', 'openai'], cwd)).stdout) as {
      id: string
      pricing_per_million: { prompt: string; completion: string }
    }[]
    expect(models.find((m) => m.id === 'openai/gpt-4o-mini')!.pricing_per_million).toMatchObject({ prompt: '0.25', completion: '1' })
    expect(models.map((m) => m.id)).toContain('openai/gpt-5.5')
  }, 90_000)

  it('reads OpenRouter’s model list from an http URL, applying each price only to the author’s own provider', async () => {
    const tables = await startTableServer({ '/api/v1/models': [200, readFileSync(join(fixtures, 'openrouter-models.json'), 'utf8')] })
    try {
      const cwd = folder('openrouter')
      const from = `${tables.url}/api/v1/models`
      const result = await cli(['catalogue', 'update', '--from', from, '--yes'], cwd)
      expect(result.code).toBe(0)
      expect(result.stdout).toBe(OPENROUTER_REPORT)
      expect(result.stderr).toContain(`Fetching ${from}`)
      expect(tables.requests).toHaveLength(1)
      expect(tables.requests[0].headers.accept).toBe('application/json')
      const file = parseCatalogueFile(JSON.parse(readFileSync(join(cwd, '.data/catalogue.json'), 'utf8')), 'catalogue.json')
      expect(Object.keys(file.providers)).toEqual(['openai', 'anthropic'])
      expect(file.providers.anthropic).toEqual([
        {
          id: 'anthropic/claude-opus-5.6',
          upstreamId: 'claude-opus-5-6',
          name: 'Anthropic: Claude Opus 5.6',
          contextLength: 1_000_000,
          maxCompletionTokens: 128_000,
          pricing: {
            prompt: '0.000004',
            completion: '0.00002',
            input_cache_read: '0.0000002',
            input_cache_write: '0.000005',
            web_search: '0.01',
            currency: 'USD',
          },
          created: 1763424000,
          source: { url: from, checked: today() },
        },
      ])
    } finally {
      await tables.close()
    }
  }, 60_000)

  it('answers a broken file, an unknown format and an unreachable URL with one clear line and exit 1, writing nothing', async () => {
    const cwd = folder('errors')
    writeFileSync(join(cwd, 'broken.json'), '{ "gpt-4o": { "litellm_provider": "openai", ')
    writeFileSync(join(cwd, 'other.json'), JSON.stringify({ models: [{ name: 'gpt-4o', price: 2.5 }] }))
    const tables = await startTableServer({ '/gone.json': [410, 'gone'], '/page': [200, '<!doctype html><title>prices</title>'] })
    const port = await closedPort()
    try {
      const cases: [string, RegExp][] = [
        ['broken.json', /^model-gateway: broken\.json: not JSON \(.+\)\n$/],
        [
          'other.json',
          /^model-gateway: other\.json: not a price table this command knows: expected LiteLLM's model_prices_and_context_window\.json .+ or OpenRouter's GET \/api\/v1\/models .+\n$/,
        ],
        ['missing.json', /^model-gateway: cannot read missing\.json: no such file\n$/],
        [`${tables.url}/gone.json`, new RegExp(`^model-gateway: could not fetch ${tables.url}/gone\\.json: the server answered 410 Gone\\n$`)],
        [`${tables.url}/page`, new RegExp(`^model-gateway: ${tables.url}/page: not JSON \\(.+\\)\\n$`)],
        [
          `http://127.0.0.1:${port}/prices.json`,
          new RegExp(`^model-gateway: could not fetch http://127\\.0\\.0\\.1:${port}/prices\\.json: ECONNREFUSED .+\\n$`),
        ],
      ]
      for (const [from, line] of cases) {
        const result = await cli(['catalogue', 'update', '--from', from, '--yes'], cwd)
        expect(result.code, from).toBe(1)
        expect(result.stdout, from).toBe('')
        expect(result.stderr.replace(/^.*Fetching .*\n/, ''), from).toMatch(line)
      }
      expect(existsSync(join(cwd, '.data'))).toBe(false)
    } finally {
      await tables.close()
    }
  }, 90_000)
})

describe('a gateway created with the written catalogue file', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  let path: string

  beforeAll(async () => {
    const cwd = folder('gateway')
    expect((await cli(['catalogue', 'update', '--from', join(fixtures, 'litellm.json'), '--yes'], cwd)).code).toBe(0)
    path = join(cwd, '.data/catalogue.json')
    upstream = await startFakeOpenAI({ apiKey: 'sk-fake' })
    t = await startGateway({
      providers: [openaiCompatible({ slug: 'openai', name: 'OpenAI', baseURL: upstream.url, apiKey: 'sk-fake', models: MODELS.openai })],
      catalogue: path,
    })
  }, 90_000)
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })

  it('lists the new prices, the new model and the retirement day in GET /api/v1/models', async () => {
    const { data } = (await (await t.request('/api/v1/models')).json()) as { data: any[] }
    const byId = new Map(data.map((m) => [m.id, m]))
    expect(byId.get('openai/gpt-4o-mini').pricing).toMatchObject({ prompt: '0.00000025', completion: '0.000001', input_cache_read: '0.000000125' })
    expect(byId.get('openai/gpt-4o-mini')).toMatchObject({ name: 'OpenAI: GPT-4o mini', context_length: 128_000 })
    expect(byId.get('openai/gpt-5.5')).toMatchObject({
      context_length: 272_000,
      pricing: { prompt: '0.00000165', completion: '0.000013' },
      top_provider: { max_completion_tokens: 128_000 },
    })
    expect(byId.get('openai/gpt-4o').expiration_date).toBe('2027-03-31')
    expect(byId.get('openai/gpt-4.1').pricing).toMatchObject({ prompt: '0.000002', completion: '0.000008' })
  })

  it('bills a chat request at the new price, exactly', async () => {
    const customer = await createCustomer(t.gateway, { credits: '10' })
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'What does a catalogue file change? Answer in a few words, please.' }],
      }),
    })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(upstream.requests.at(-1)!.body.model).toBe('gpt-4o-mini')
    const { prompt_tokens: p, completion_tokens: c } = body.usage
    expect(p).toBeGreaterThan(0)
    expect(c).toBeGreaterThan(0)
    const cost = units('0.00000025') * BigInt(p) + units('0.000001') * BigInt(c)
    expect(String(body.usage.cost)).toBe(decimalText(cost))
    expect(String(body.usage.cost_eur)).toBe(decimalText(roundUnits(cost * 86n, 2)))
    const credits = await t.gateway.admin.getCredits(customer.user.org_id)
    expect(credits.total_usage).toBe(decimalText(roundUnits(cost * 86n, 2)))
  })

  it('refuses a bad catalogue file at creation, naming the file and the field', () => {
    const bad = join(scratch, 'bad-catalogue.json')
    const file = JSON.parse(readFileSync(path, 'utf8'))
    file.providers.openai[0].pricing.prompt = '2.5e-7'
    writeFileSync(bad, JSON.stringify(file))
    const create = () =>
      createGateway({
        secret: TEST_SECRET,
        logger: false,
        providers: [openaiCompatible({ slug: 'openai', name: 'OpenAI', baseURL: upstream.url, models: MODELS.openai })],
        catalogue: bad,
      })
    expect(create).toThrow(TypeError)
    expect(create).toThrow(`catalogue file ${bad}: providers.openai[0].pricing.prompt must be a plain decimal string`)
    copyFileSync(path, bad)
    expect(() => createGateway({ secret: TEST_SECRET, logger: false, catalogue: { ...JSON.parse(readFileSync(bad, 'utf8')), updated: '26.11.2026' } })).toThrow(
      /catalogue file \(the catalogue option\): updated must be a day written YYYY-MM-DD/,
    )
  })
})

describe('applyCatalogueFile', () => {
  const file = parseCatalogueFile(
    {
      format: 'model-gateway-catalogue',
      version: 1,
      updated: '2026-11-26',
      providers: {
        openai: [
          { id: 'openai/gpt-4o-mini', pricing: { prompt: '0.00000025', completion: '0.000001' }, expirationDate: '2027-03-31' },
          { id: 'openai/gpt-9', upstreamId: 'gpt-9-preview', pricing: { prompt: '0.00001', completion: '0.00003' } },
        ],
        nobody: [{ id: 'x/y', pricing: { prompt: '1', completion: '1' } }],
      },
    },
    'test',
  )
  const infos: string[] = []
  const logger = { debug() {}, info: (message: string) => void infos.push(message), warn() {}, error() {} }

  it('overrides the fields a file model gives (prices one by one), adds new ids, and logs the slugs it ignores once', () => {
    infos.length = 0
    const [provider] = applyCatalogueFile(
      [openaiCompatible({ slug: 'openai', name: 'OpenAI', baseURL: 'http://127.0.0.1:9/v1', models: MODELS.openai })],
      file,
      logger,
    )
    const mini = provider.models.find((m) => m.id === 'openai/gpt-4o-mini')!
    expect(mini).toMatchObject({
      name: 'OpenAI: GPT-4o mini',
      contextLength: 128_000,
      expirationDate: '2027-03-31',
      pricing: { prompt: '0.00000025', completion: '0.000001', input_cache_read: '0.000000075', currency: 'USD' },
    })
    expect(provider.models.map((m) => m.id)).toEqual([...MODELS.openai.map((m) => m.id), 'openai/gpt-9'])
    expect(MODELS.openai[0].pricing.prompt).toBe('0.00000015') // the provider given is not changed
    expect(infos.filter((line) => line.includes('nobody'))).toHaveLength(1)
  })

  it('keeps a class-based provider working: only its models differ', async () => {
    class Own implements Provider {
      readonly slug = 'openai'
      readonly name = 'Own'
      models: ProviderModel[] = [MODELS.openai[0]]
      #secret = 'kept'
      async chat() {
        return { choices: [], model: this.#secret }
      }
      async chatStream(): Promise<AsyncIterable<never>> {
        return (async function* () {})()
      }
    }
    const [wrapped] = applyCatalogueFile([new Own()], file, logger)
    expect(wrapped.models.map((m) => [m.id, m.pricing.prompt])).toEqual([
      ['openai/gpt-4o-mini', '0.00000025'],
      ['openai/gpt-9', '0.00001'],
    ])
    expect(wrapped.slug).toBe('openai')
    expect((await wrapped.chat({ model: 'x', messages: [] }, { signal: new AbortController().signal, timeoutMs: 1000 })).model).toBe('kept')
  })

  it('writes table floats as their shortest exact decimal', () => {
    expect([2.5e-6, 1.65e-7, 1e-5, 3e-7, 0.000015, 0].map(priceText)).toEqual(['0.0000025', '0.000000165', '0.00001', '0.0000003', '0.000015', '0'])
    expect(['0.00000250', '1e-06', '-1', 'free', -1, Number.NaN].map(priceText)).toEqual(['0.0000025', '0.000001', undefined, undefined, undefined, undefined])
  })
})

// `serve` loads the catalogue file of its data folder.
describe('model-gateway serve with a catalogue file', () => {
  it('serves the file’s prices', async () => {
    const cwd = folder('serve')
    expect((await cli(['catalogue', 'update', '--from', join(fixtures, 'litellm.json'), '--yes'], cwd)).code).toBe(0)
    const child = spawn(process.execPath, [entry, 'serve', '--port', '0'], { cwd, env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    try {
      const url = await new Promise<string>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`serve did not start:\n${output}`)), 30_000)
        const check = setInterval(() => {
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
          if (match && output.includes('Stop with Ctrl+C')) {
            clearInterval(check)
            clearTimeout(timer)
            done(match[1])
          }
        }, 50)
      })
      expect(output).toContain('catalogue file (updated')
      const { data } = (await (await fetch(`${url}/api/v1/models`)).json()) as { data: any[] }
      expect(data.find((m) => m.id === 'openai/gpt-4o-mini').pricing).toMatchObject({ prompt: '0.00000025', completion: '0.000001' })
    } finally {
      const exited = new Promise((done) => child.once('exit', done))
      child.kill('SIGTERM')
      await exited
    }
  }, 60_000)
})
