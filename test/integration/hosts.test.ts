/**
 * Hosted providers as data (docs/providers.md): one file per OpenAI-compatible host under src/providers/hosts/, the
 * list written once, Mistral's request hook against the fake upstream (the body Mistral receives, also through the
 * gateway), and the runner's two transports: ofetch for checks and discovery, and as the portable transport of
 * whole calls, streams and embeddings, with the same error classification as node:http.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { knownHosts, knownModels } from '../../src/catalogue/known-models'
import { ENV_PROVIDERS } from '../../src/cli/providers'
import type { GatewayError } from '../../src/errors'
import { anthropic } from '../../src/providers/anthropic'
import { gemini } from '../../src/providers/gemini'
import { HOST_FACTS, HOSTS, SHIPPED_HOSTS } from '../../src/providers/hosts'
import { hostedProvider, localProvider, openai } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { fetchTransport } from '../../src/providers/transport'
import type { CallOptions, UpstreamChatRequest, UpstreamChunk } from '../../src/contracts'
import { startFakeAnthropic } from '../fakes/anthropic'
import { fakeEmbedding } from '../fakes/embedding-vector'
import { startFakeGemini } from '../fakes/gemini'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway } from '../helpers/server'
import { asUpstream } from '../helpers/upstream-error'

const KEY = 'sk-hosts-test'
const call = (timeoutMs = 5000): CallOptions => ({ signal: AbortSignal.timeout(10_000), timeoutMs })
const chatRequest = (model: string, extra: Record<string, unknown> = {}): UpstreamChatRequest =>
  ({ model, messages: [{ role: 'user', content: 'hello hosts' }], ...extra }) as UpstreamChatRequest
const failure = async (promise: Promise<unknown>): Promise<GatewayError> => {
  try {
    await promise
  } catch (error) {
    return error as GatewayError
  }
  throw new Error('expected the call to fail')
}
const collect = async (chunks: AsyncIterable<UpstreamChunk>) => {
  const out: UpstreamChunk[] = []
  for await (const chunk of chunks) out.push(chunk)
  return out
}

let fake: FakeOpenAI
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY })
})
afterAll(() => fake.close())
beforeEach(() => {
  fake.requests.length = 0
})

describe('hosts written once', () => {
  it('keeps each host to one file: its facts, data policy and hooks in at most 30 lines, besides its models', () => {
    const dir = fileURLToPath(new URL('../../src/providers/hosts/', import.meta.url))
    const files = readdirSync(dir).filter((f) => !['index.ts', 'define.ts'].includes(f))
    expect(files.sort()).toEqual(['anthropic.ts', 'deepseek.ts', 'fireworks.ts', 'gemini.ts', 'groq.ts', 'mistral.ts', 'openai.ts', 'together.ts', 'xai.ts'])
    for (const file of files) {
      const lines = readFileSync(dir + file, 'utf8')
        .trimEnd()
        .split('\n')
      // The models list, from `  models: [` to its closing `  ],`, is the host's catalogue: as long as it needs to be.
      const start = lines.indexOf('  models: [')
      const models = start < 0 ? 0 : lines.indexOf('  ],', start) - start + 1
      expect(lines.length - models, file).toBeLessThanOrEqual(30)
    }
  })

  it('reads the catalogue’s models and data policies from the host files', () => {
    for (const host of SHIPPED_HOSTS) {
      expect(knownModels[host.slug], host.slug).toBe(host.models)
      expect(host.models!.length, host.slug).toBeGreaterThan(0)
    }
    expect(Object.keys(knownModels).sort()).toEqual(Object.keys(knownHosts).sort())
    expect(SHIPPED_HOSTS.filter((h) => h.dataPolicy).map((h) => h.slug)).toEqual(['openai', 'anthropic', 'google-ai-studio', 'groq', 'fireworks', 'deepseek'])
  })

  it('derives the CLI’s environment providers, the catalogue’s host facts and the presets from the one list', () => {
    expect(HOSTS.map((h) => h.slug)).toEqual(['groq', 'together', 'fireworks', 'mistral', 'deepseek', 'xai'])
    expect(ENV_PROVIDERS.map((p) => p.prefix)).toEqual(['OPENAI', 'ANTHROPIC', 'GEMINI', 'GROQ', 'TOGETHER', 'FIREWORKS', 'MISTRAL', 'DEEPSEEK', 'XAI'])
    expect(knownHosts).toBe(HOST_FACTS)
    expect(Object.keys(knownHosts).sort()).toEqual(['anthropic', 'deepseek', 'fireworks', 'google-ai-studio', 'groq', 'mistral', 'openai', 'together', 'xai'])
    for (const host of HOSTS) {
      const provider = hostedProvider(host.slug, { apiKey: 'k' })
      expect([provider.slug, provider.name, provider.privacyPolicyUrl, provider.headquarters]).toEqual([
        host.slug,
        host.name,
        host.privacyPolicyUrl,
        host.headquarters,
      ])
      expect(provider.byokSupported).toBe(true)
    }
    expect(knownHosts.mistral.baseURL).toBe('https://api.mistral.ai/v1')
    expect(knownHosts.anthropic.privacyPolicyUrl).toBe(anthropic().privacyPolicyUrl)
    expect(knownHosts['google-ai-studio'].statusPageUrl).toBe(gemini().statusPageUrl)
    expect(openai().maxChoices).toBe(128)
  })
})

describe('Mistral’s request hook', () => {
  const mistral = () => hostedProvider('mistral', { apiKey: KEY, baseURL: fake.url })

  it('sends seed as random_seed, passes safe_prompt, and drops the fields Mistral does not take', async () => {
    await mistral().chat(
      chatRequest('mistral-small-2603', {
        seed: 42,
        safe_prompt: true,
        max_completion_tokens: 20,
        logprobs: true,
        top_logprobs: 2,
        user: 'u-1',
        logit_bias: { 50256: -100 },
        n: 2,
      }),
      call(),
    )
    const body = fake.requests[0].body
    expect(fake.requests[0].path).toBe('/v1/chat/completions')
    expect(body).toEqual({
      model: 'mistral-small-2603',
      messages: [{ role: 'user', content: 'hello hosts' }],
      random_seed: 42,
      safe_prompt: true,
      max_tokens: 20,
      n: 2,
    })
  })

  it('streams without stream_options (Mistral reports usage in its last chunk on its own)', async () => {
    const chunks = await collect(await mistral().chatStream(chatRequest('mistral-small-2603', { seed: 7, safe_prompt: false }), call()))
    expect(fake.requests[0].body).toEqual({
      model: 'mistral-small-2603',
      messages: [{ role: 'user', content: 'hello hosts' }],
      random_seed: 7,
      safe_prompt: false,
      stream: true,
    })
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello from mistral-small-2603: hello hosts')
  })

  it('refuses a safe_prompt that is not a boolean with a 400 naming it, before any call', async () => {
    const error = await failure(mistral().chat(chatRequest('mistral-small-2603', { safe_prompt: 'yes' }), call()))
    expect([error.status, error.param]).toEqual([400, 'safe_prompt'])
    expect(fake.requests).toHaveLength(0)
  })

  it('keeps random_seed when the client sent it, and leaves other hosts’ bodies alone', async () => {
    await mistral().chat(chatRequest('mistral-small-2603', { random_seed: 3, seed: 9 }), call())
    expect(fake.requests[0].body.random_seed).toBe(3)
    expect(fake.requests[0].body.seed).toBeUndefined()
    await hostedProvider('groq', { apiKey: KEY, baseURL: fake.url }).chat(chatRequest('llama', { seed: 9, user: 'u-2' }), call())
    expect(fake.requests[1].body).toMatchObject({ seed: 9, user: 'u-2' })
    expect(fake.requests[1].body.random_seed).toBeUndefined()
  })

  it('embeds with output_dimension for dimensions and without user (Mistral’s embeddings request)', async () => {
    await mistral().embed!({ model: 'codestral-embed', input: ['def f(): pass'], dimensions: 256, user: 'u-3' }, call())
    expect(fake.requests[0].path).toBe('/v1/embeddings')
    expect(fake.requests[0].body).toEqual({ model: 'codestral-embed', input: ['def f(): pass'], output_dimension: 256, encoding_format: 'float' })
    await mistral().embed!({ model: 'mistral-embed', input: 'x' }, call())
    expect(fake.requests[1].body).toEqual({ model: 'mistral-embed', input: 'x', encoding_format: 'float' })
  })

  it('reaches Mistral through the gateway with the hook applied', async () => {
    const t = await startGateway({ providers: [hostedProvider('mistral', { apiKey: KEY, baseURL: fake.url })] })
    try {
      const { auth } = await createCustomer(t.gateway, { credits: '5' })
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mistralai/mistral-small-2603', messages: [{ role: 'user', content: 'hello hosts' }], seed: 11, safe_prompt: true }),
      })
      expect(res.status).toBe(200)
      expect((await res.json()).choices[0].message.content).toBe('Hello from mistral-small-2603: hello hosts')
      const sent = fake.requests.at(-1)!.body
      expect([sent.random_seed, sent.safe_prompt, sent.seed]).toEqual([11, true, undefined])
    } finally {
      await t.close()
    }
  })
})

describe('the runner’s transports', () => {
  const viaFetch = () => openaiCompatible({ slug: 'edge', name: 'Edge', baseURL: fake.url, apiKey: KEY, transport: fetchTransport })

  it('serves whole answers, streams and embeddings through ofetch (the portable transport) as through node:http', async () => {
    const whole = await viaFetch().chat(chatRequest('fake-model'), call())
    expect(whole.choices[0].message.content).toBe('Hello from fake-model: hello hosts')
    const chunks = await collect(await viaFetch().chatStream(chatRequest('fake-model'), call()))
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello from fake-model: hello hosts')
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(5)
    const vectors = await viaFetch().embed!({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 3 }, call())
    expect(vectors.data.map((d) => d.embedding)).toEqual([fakeEmbedding('a', 3), fakeEmbedding('b', 3)])
  })

  it('classifies failures through ofetch as node:http does: 429 with Retry-After, a reset, a timeout, a cut stream', async () => {
    const rate = await failure(viaFetch().chat(chatRequest('fail-429'), call()))
    expect([rate.status, asUpstream(rate).retryAfterMs]).toEqual([429, 2000])
    const reset = await failure(viaFetch().chat(chatRequest('fail-reset'), call()))
    expect(reset.metadata?.error_type).toBe('provider_unavailable')
    expect(asUpstream(reset).retryOnSameProvider).toBe(true)
    const slow = await failure(viaFetch().chat(chatRequest('hang'), call(150)))
    expect([slow.status, slow.metadata?.error_type]).toEqual([408, 'timeout'])
    const cut = await failure(viaFetch().chatStream(chatRequest('fail-midstream'), call()).then(collect))
    expect(cut.metadata?.error_type).toBe('provider_unavailable')
  })

  it('checks keys and discovers models with ofetch: listed, rejected, unreachable', async () => {
    const [ok] = await openaiCompatible({ slug: 'a', name: 'A', baseURL: fake.url, apiKey: KEY }).check!(call())
    expect([ok.target, ok.ok, ok.message]).toEqual(['GET /models', true, '1 models listed'])
    const [bad] = await openaiCompatible({ slug: 'a', name: 'A', baseURL: fake.url, apiKey: 'sk-wrong' }).check!(call())
    expect([bad.ok, bad.message]).toEqual([false, 'the key was rejected'])
    const [down] = await openaiCompatible({ slug: 'a', name: 'A', baseURL: 'http://127.0.0.1:1/v1', apiKey: KEY }).check!(call())
    expect(down.ok).toBe(false)
    expect(down.message).toBe('A is unavailable')
    const models = await localProvider({ slug: 'ollama', name: 'Ollama', baseURL: fake.url, apiKey: KEY }).discoverModels!(call())
    expect(models).toEqual([
      { id: 'ollama/fake-model', upstreamId: 'fake-model', name: 'Ollama: fake-model', created: 1700000000, pricing: { prompt: '0', completion: '0' } },
    ])
  })

  it('checks Anthropic and Gemini keys through the same runner', async () => {
    const claude = await startFakeAnthropic({ apiKey: 'sk-ant-hosts' })
    const google = await startFakeGemini({ apiKey: 'AIzaSy-hosts' })
    try {
      const [a] = await anthropic({ apiKey: 'sk-ant-hosts', baseURL: claude.url }).check!(call())
      expect([a.target, a.ok]).toEqual(['GET /v1/models', true])
      const [g] = await gemini({ apiKey: 'AIzaSy-hosts', baseURL: google.url }).check!(call())
      expect([g.target, g.ok, g.message]).toEqual(['GET /v1beta/models', true, '6 models listed'])
      const [wrong] = await gemini({ apiKey: 'AIzaSy-wrong', baseURL: google.url }).check!(call())
      expect([wrong.ok, wrong.message]).toEqual([false, 'the key was rejected'])
    } finally {
      await claude.close()
      await google.close()
    }
  })
})
