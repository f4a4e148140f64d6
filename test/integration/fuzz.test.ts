/**
 * Fuzz: every route of the gateway (`gateway.routes`), over real HTTP, with hostile bodies, queries and path
 * parameters (test/helpers/fuzz.ts): deep nesting, huge numbers written literally, wrong types, odd unicode, NUL
 * bytes, long strings, bodies that are not objects. Whatever comes in, the answer is never a 5xx (but the router's
 * planned 503, below): a client error is the JSON error envelope (docs/limits.md) with `code` = status, and the
 * logger records no error.
 *
 * Deterministic: the cases come from a seeded PRNG (FUZZ_SEED to try another seed); a failure names its case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropic, anthropicModels, demo, gemini, geminiModels, openaiCompatible, type Logger, type ProviderModel } from '../../src/index'
import { sineTone, wavHeader } from '../../src/audio/wav'
import type { RouteDefinition } from '../../src/routes/define'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import {
  fieldNames,
  HOSTILE,
  HOSTILE_BODIES,
  HOSTILE_KEYS,
  HOSTILE_PATH_PARAMS,
  HOSTILE_QUERY_VALUES,
  pathsOf,
  prng,
  withExtraKey,
  withFragment,
} from '../helpers/fuzz'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed)
/** Random fragments per path of a seed body (on top of every fragment at one random path). */
const PER_PATH = 2

const SONNET = anthropicModels.find((m) => m.id === 'anthropic/claude-sonnet-5.5')!
const FLASH = geminiModels.find((m) => m.id === 'google/gemini-2.5-flash')!
const fakeModel: ProviderModel = { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }

const wav = (() => {
  const pcm = sineTone(0.05)
  return Buffer.concat([wavHeader(pcm.byteLength, 24_000), pcm]).toString('base64')
})()

/** A request the fuzz sends. */
interface Case {
  /** `METHOD /path` of the route it aims at. */
  route: string
  label: string
  method: string
  path: string
  headers?: Record<string, string>
  body?: string | Uint8Array
}

const chatSeed = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
      ],
    },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
    { role: 'user', content: 'hello', name: 'u1' },
  ],
  temperature: 0.5,
  top_p: 1,
  max_tokens: 16,
  seed: 7,
  stop: ['\n\n'],
  logit_bias: { 50256: -100 },
  tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
  tool_choice: 'auto',
  response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object', properties: { x: { type: 'string' } } } } },
  user: 'user-1',
  service_tier: 'auto',
  provider: { order: ['demo'], max_price: { prompt: '100', completion: 100 }, sort: 'price', allow_fallbacks: true },
  ...extra,
})

/** A body per route that passes validation, so that a mutation of one field reaches the code behind it. */
const SEEDS: Record<string, unknown[]> = {
  'POST /chat/completions': [
    chatSeed('demo/echo'),
    chatSeed('demo/echo', { stream: true, stream_options: { include_usage: true } }),
    chatSeed('fake/gpt-test', { models: ['demo/echo'], provider: { max_price: { prompt: 100 } } }),
    chatSeed(SONNET.id, { reasoning: { effort: 'low' }, provider: {} }),
    chatSeed(FLASH.id, { stream: true, provider: {} }),
  ],
  'POST /messages': [
    {
      model: 'demo/echo',
      max_tokens: 50,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [{ name: 'get_weather', description: 'The weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'auto' },
      metadata: { user_id: 'u-1' },
      stream: true,
    },
  ],
  'POST /completions': [
    { model: 'demo/echo', prompt: 'hi', max_tokens: 16, temperature: 0.5, stop: ['\n\n'], n: 1, user: 'u-1', provider: { max_price: { prompt: 100 } } },
    { model: 'demo/echo', prompt: ['hi'], stream: true, stream_options: { include_usage: true }, suffix: '', echo: false, logprobs: null, best_of: 1 },
  ],
  'POST /messages/count_tokens': [{ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }],
  'POST /responses': [
    {
      model: 'demo/echo',
      instructions: 'Be brief.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      text: { format: { type: 'text' } },
      max_output_tokens: 50,
      store: true,
      stream: true,
    },
  ],
  'POST /embeddings': [
    { model: 'demo/embed', input: ['hello there', 'second input'], encoding_format: 'base64', dimensions: 64, provider: { max_price: { prompt: 1 } } },
    {
      model: 'demo/embed',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
      user: 'u-1',
    },
  ],
  'POST /audio/speech': [
    { model: 'demo/speech', input: 'hello there', voice: 'alloy', response_format: 'wav', speed: 1, provider: { max_price: { prompt: 1 } } },
  ],
  'POST /audio/transcriptions': [
    {
      model: 'demo/transcribe',
      input_audio: { data: wav, format: 'wav' },
      language: 'en',
      prompt: 'p',
      temperature: 0,
      response_format: 'verbose_json',
      timestamp_granularities: ['segment'],
    },
  ],
  'POST /images/generations': [
    {
      model: 'fake/image',
      prompt: 'a fox',
      n: 2,
      size: '1024x1536',
      quality: 'low',
      background: 'opaque',
      output_format: 'webp',
      output_compression: 50,
      moderation: 'low',
      user: 'u-1',
    },
  ],
  'POST /byok': [
    {
      key: 'sk-fuzz-key',
      provider: 'fakebyok',
      name: 'n',
      label: 'l',
      allowed_api_key_hashes: ['a'.repeat(64)],
      allowed_models: ['fakebyok/model'],
      always_use: false,
      is_fallback: false,
      disabled: false,
      sort_order: 1,
    },
  ],
  'PATCH /byok/:id': [{ name: 'n2', label: 'l2', allowed_models: ['fakebyok/model'], disabled: false, sort_order: 2, key: 'sk-fuzz-other' }],
  'POST /byok/test': [{ key: 'sk-fuzz-key', provider: 'fakebyok' }],
  'POST /auth/keys/authorize': [
    {
      callback_url: 'https://app.example/cb',
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
      limit: '5',
      expires_at: '2099-01-01T00:00:00Z',
      key_label: 'minted',
    },
  ],
  'POST /auth/keys/code': [{ callback_url: 'https://app.example/cb', code_challenge: 'c'.repeat(43), code_challenge_method: 'plain' }],
  'POST /auth/keys': [{ code: 'some-code', code_verifier: 'v'.repeat(43) }],
}

/** A query per route that passes validation, so that a hostile value of one parameter is the only fault. */
const QUERY_SEEDS: Record<string, Record<string, string>> = {
  'GET /auth': { callback_url: 'https://app.example/cb', code_challenge: 'c'.repeat(43), state: 's' },
  'GET /byok': { offset: '0', limit: '10', provider: 'fakebyok' },
  'GET /models': { category: 'trivia', supported_parameters: 'tools', use_rss: 'false' },
}

/** Every case for one route, from the PRNG. */
function casesFor(route: RouteDefinition, random: ReturnType<typeof prng>, credentialId: string): Case[] {
  const name = `${route.method} ${route.path}`
  const cases: Case[] = []
  const add = (c: Omit<Case, 'route' | 'method'>) => cases.push({ route: name, method: route.method, ...c })
  const validPath = route.path.replace(':id', credentialId)
  const json = { 'content-type': 'application/json' }
  // Path parameters that are not UUIDs.
  if (route.path.includes(':id')) {
    for (const param of HOSTILE_PATH_PARAMS) add({ label: `${name} id=${param.slice(0, 40)}`, path: route.path.replace(':id', param) })
  }
  // Query parameters: each known one with each hostile value; unknown and repeated ones.
  const query = (field: string, value: string) =>
    `${Object.entries(QUERY_SEEDS[name] ?? {})
      .filter(([key]) => key !== field)
      .map(([key, v]) => `${key}=${encodeURIComponent(v)}&`)
      .join('')}${field}=${value}`
  for (const field of fieldNames(route.query)) {
    for (const value of HOSTILE_QUERY_VALUES) add({ label: `${name} ?${field}=${value.slice(0, 40)}`, path: `${validPath}?${query(field, value)}` })
    add({ label: `${name} ?${field} twice`, path: `${validPath}?${query(field, '1')}&${field}=2` })
  }
  add({ label: `${name} junk query`, path: `${validPath}?${random.pick(['a', '%00', '__proto__', 'x[y]'])}=${random.pick(HOSTILE_QUERY_VALUES)}` })
  if (route.method === 'GET') return cases
  // Bodies: whole bodies that are not objects, then every field of each seed replaced by hostile values.
  for (const body of HOSTILE_BODIES) add({ label: `${name} ${body.name}`, path: validPath, headers: json, body: body.json })
  add({ label: `${name} text/plain`, path: validPath, headers: { 'content-type': 'text/plain' }, body: '{}' })
  add({ label: `${name} no content-type`, path: validPath, body: new TextEncoder().encode('{}') })
  const seeds = SEEDS[name] ?? [Object.fromEntries(fieldNames(route.body).map((field) => [field, 'x']))]
  for (const [s, seed] of seeds.entries()) {
    const paths = pathsOf(seed)
    if (!paths.length) continue
    const objects = [
      [],
      ...paths.filter((path) => {
        const v = path.reduce<any>((node, key) => node[key], seed)
        return v && typeof v === 'object' && !Array.isArray(v)
      }),
    ]
    add({ label: `${name} seed ${s} as it is`, path: validPath, headers: json, body: JSON.stringify(seed) })
    const mutate = (path: (string | number)[], fragment: (typeof HOSTILE)[number]) =>
      add({ label: `${name} seed ${s} ${path.join('.')} = ${fragment.name}`, path: validPath, headers: json, body: withFragment(seed, path, fragment.json) })
    for (const fragment of HOSTILE) mutate(random.pick(paths), fragment)
    for (const path of paths) for (let i = 0; i < PER_PATH; i++) mutate(path, random.pick(HOSTILE))
    for (const key of HOSTILE_KEYS) {
      const at = random.pick(objects)
      const fragment = random.pick(HOSTILE)
      add({
        label: `${name} seed ${s} extra key ${key.slice(0, 12)} at ${at.join('.') || 'root'} = ${fragment.name}`,
        path: validPath,
        headers: json,
        body: withExtraKey(seed, at, key, fragment.json),
      })
    }
  }
  return cases
}

/** Multipart uploads of POST /audio/transcriptions with hostile fields. */
function multipartCases(): Case[] {
  const boundary = 'fuzzBoundary42'
  const part = (name: string, value: string, file?: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file !== undefined ? `; filename="${file}"\r\nContent-Type: audio/wav` : ''}\r\n\r\n${value}\r\n`
  const audio = Buffer.from(wav, 'base64').toString('latin1')
  const form = (fields: string) => Buffer.from(`${part('file', audio, 'a.wav')}${fields}--${boundary}--\r\n`, 'latin1')
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` }
  const values = [
    '',
    '1e400',
    '9'.repeat(400),
    '-0',
    'NaN',
    '\u0000',
    '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]',
    'x'.repeat(100_000),
  ]
  const cases: Case[] = []
  for (const field of ['model', 'temperature', 'language', 'prompt', 'response_format', 'timestamp_granularities[]', '\u0000']) {
    for (const value of values) {
      cases.push({
        route: 'POST /audio/transcriptions',
        label: `multipart ${field} = ${value.slice(0, 20)}`,
        method: 'POST',
        path: '/audio/transcriptions',
        headers,
        body: form(`${part('model', 'demo/transcribe')}${part(field, value)}`),
      })
    }
  }
  cases.push({
    route: 'POST /audio/transcriptions',
    label: 'multipart without boundary',
    method: 'POST',
    path: '/audio/transcriptions',
    headers: { 'content-type': 'multipart/form-data' },
    body: 'x',
  })
  cases.push({
    route: 'POST /audio/transcriptions',
    label: 'multipart unterminated',
    method: 'POST',
    path: '/audio/transcriptions',
    headers,
    body: `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nx`,
  })
  return cases
}

/** Form posts of the consent page with hostile fields. */
function consentCases(): Case[] {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' }
  return [
    'decision=approve&request=%00',
    'decision=%ZZ&request=%',
    `request=${'x'.repeat(50_000)}&decision=deny`,
    'decision=approve&decision=deny',
    '%00=%00',
    '',
  ].map((body) => ({ route: 'POST /auth/consent', label: `consent form ${body.slice(0, 30)}`, method: 'POST', path: '/auth/consent', headers, body }))
}

describe('fuzz: every route, hostile input', () => {
  let t: TestGateway
  let openai: FakeOpenAI
  let claude: FakeAnthropic
  let google: FakeGemini
  let auth: Record<string, string>
  let credentialId: string
  const errors: unknown[] = []
  // The router's planned answer when no provider is left for a reason other than the request's own preferences (a
  // provider that needs the customer's key; the preferences' own exclusions are 404, docs/routing.md) is 503
  // no_provider_available: a deliberate answer, logged like every 5xx. It is the one 5xx the fuzz lets through.
  const planned = (fields?: Record<string, unknown>) => fields?.status === 503 && String(fields.error).startsWith('GatewayError: No provider is available for')
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (message, fields) => void (planned(fields) || errors.push({ message, fields })) }

  beforeAll(async () => {
    openai = await startFakeOpenAI({ apiKey: 'sk-fake', slowMs: 0 })
    claude = await startFakeAnthropic({ apiKey: 'sk-ant-fake' })
    google = await startFakeGemini({ apiKey: 'AIza-fake' })
    t = await startGateway({
      logger,
      providers: [
        demo({ audio: true, embeddings: true }),
        openaiCompatible({
          slug: 'fake',
          name: 'Fake',
          baseURL: openai.url,
          apiKey: 'sk-fake',
          models: [
            fakeModel,
            {
              ...fakeModel,
              id: 'fake/image',
              upstreamId: 'gpt-image-1',
              endpoints: ['/images/generations'],
              pricing: { ...fakeModel.pricing, image_output: '0.00004' },
            },
          ],
        }),
        openaiCompatible({ slug: 'fakebyok', name: 'Fake BYOK', baseURL: openai.url, byokSupported: true, models: [{ ...fakeModel, id: 'fakebyok/model' }] }),
        anthropic({ apiKey: 'sk-ant-fake', baseURL: claude.url, models: [SONNET] }),
        gemini({ apiKey: 'AIza-fake', baseURL: google.url, models: [FLASH] }),
      ],
    })
    auth = (await createCustomer(t.gateway, { credits: '1000' })).auth
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(SEEDS['POST /byok'][0]),
    })
    expect(created.status).toBe(201)
    credentialId = ((await created.json()) as { data: { id: string } }).data.id
  })
  afterAll(async () => {
    await t?.close()
    await Promise.all([openai?.close(), claude?.close(), google?.close()])
  })

  /** Sends one case; returns a description of what is wrong with the answer, or null. */
  async function check(c: Case): Promise<string | null> {
    const ownShape = new Set(t.gateway.routes.filter((route) => route.errorBody).map((route) => `${route.method} ${route.path}`))
    const logged = errors.length
    const res = await t.request(`/api/v1${c.path}`, {
      method: c.method,
      headers: { ...auth, ...c.headers },
      body: c.body as BodyInit | undefined,
      redirect: 'manual',
    })
    const text = await res.text()
    const problems: string[] = []
    let body: any
    if (res.status >= 400) {
      try {
        body = JSON.parse(text)
      } catch {
        problems.push('error body is not JSON')
      }
      // The gateway's envelope, or the API's own shape on routes that speak one (Anthropic's, OpenAI's Responses).
      const own = ownShape.has(c.route)
      if (body && ((!own && body.error?.code !== res.status) || typeof body.error?.type !== 'string' || typeof body.error?.message !== 'string'))
        problems.push(`not the error envelope: ${text.slice(0, 200)}`)
    }
    if (res.status >= 500 && !(res.status === 503 && /^No provider is available for/.test(body?.error?.message ?? ''))) problems.push(`status ${res.status}`)
    if (res.headers.get('content-type')?.startsWith('text/event-stream') && /internal_error/.test(text)) problems.push('internal_error inside the stream')
    if (errors.length > logged) problems.push(`logged: ${JSON.stringify(errors.slice(logged)).slice(0, 300)}`)
    return problems.length ? `${c.label} → ${res.status}: ${problems.join('; ')} ${text.slice(0, 200)}` : null
  }

  it('never answers 5xx, always the error envelope, never logs an error', async () => {
    const random = prng(SEED)
    const routes = t.gateway.routes
    const cases = [...routes.flatMap((route) => casesFor(route, random, credentialId)), ...multipartCases(), ...consentCases()].sort(
      (a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'),
    ) // the credential is deleted last
    // Every route is covered.
    for (const route of routes) expect(cases.filter((c) => c.route === `${route.method} ${route.path}`).length, route.path).toBeGreaterThan(0)
    const failures: string[] = []
    for (const c of cases) {
      const failure = await check(c)
      if (failure) failures.push(failure)
      openai.requests.length = 0
      claude.requests.length = 0
      google.requests.length = 0
    }
    expect(failures, `seed ${SEED}, ${cases.length} cases`).toEqual([])
    expect(errors).toEqual([])
  }, 60_000)

  const post = (body: string) => t.request('/api/v1/chat/completions', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body })
  const chat = (extra: string) => post(`{"model":"fake/gpt-test","messages":[{"role":"user","content":"hi"}]${extra}}`)
  const expect400 = async (res: Response, param?: string, message?: RegExp) => {
    const body = await res.json()
    expect(res.status).toBe(400)
    expect(body.error).toMatchObject({ code: 400, type: 'invalid_request' })
    expect(body.error.param).toBe(param)
    if (message) expect(body.error.message).toMatch(message)
  }

  it('answers 400 naming provider.max_price.prompt for a price limit that is not a finite non-negative decimal', async () => {
    for (const value of ['"abc"', '"1e400"', '1e400', '-1', '"-0.5"', '"1,5"', '{}', 'true']) {
      await expect400(await chat(`,"provider":{"max_price":{"prompt":${value}}}`), 'provider.max_price.prompt')
    }
    // fake/gpt-test costs 1 USD per million prompt tokens, 2 per million completion tokens.
    expect((await chat(',"provider":{"max_price":{"prompt":"1","completion":1e308}}')).status).toBe(200)
    expect((await chat(',"provider":{"max_price":{"prompt":"1.5","completion":2,"request":-0,"image":"0.000"}}')).status).toBe(200)
    expect((await chat(',"provider":{"max_price":{"prompt":"0.5"}}')).status).toBe(404)
    expect(errors).toEqual([])
  })

  it('answers 400 for JSON nested deeper than 64 levels, wherever it is, and nothing reaches the upstream', async () => {
    const sent = openai.requests.length
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n)
    const nested = /^body: JSON nested deeper than 64 levels$/
    await expect400(await chat(`,"tools":[{"type":"function","function":{"name":"f","parameters":{"a":${deep(100_000)}}}}]`), undefined, nested)
    await expect400(await chat(`,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"a":${deep(1_000)}}}}`), undefined, nested)
    await expect400(await post(deep(100_000)), undefined, nested)
    // 64 levels in all are fine: the body, tools, the tool, its function and parameters are five.
    expect((await chat(`,"tools":[{"type":"function","function":{"name":"f","parameters":{"a":${deep(59)}}}}]`)).status).toBe(200)
    await expect400(await chat(`,"tools":[{"type":"function","function":{"name":"f","parameters":{"a":${deep(60)}}}}]`), undefined, nested)
    // Brackets inside strings do not count.
    expect((await chat(`,"user":"${'['.repeat(256)}"`)).status).toBe(200)
    expect(openai.requests.length).toBe(sent + 2)
    expect(errors).toEqual([])
  })

  it('bounds tool-call arguments parsed for Anthropic and Gemini by the same depth', async () => {
    const deep = '['.repeat(1_000) + ']'.repeat(1_000)
    for (const model of [SONNET.id, FLASH.id]) {
      const body = {
        model,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: `{"a":${deep}}` } }] },
          { role: 'tool', tool_call_id: 'call_1', content: deep },
        ],
      }
      const res = await post(JSON.stringify(body))
      expect(res.status, model).toBe(400)
      expect((await res.json()).error.param).toMatch(/tool_calls\[0\]\.function\.arguments$/)
    }
    expect(errors).toEqual([])
  })
})
