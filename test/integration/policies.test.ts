/**
 * The host's policies in the request path (docs/policies.md#policy-hooks), over real HTTP on 127.0.0.1 against the
 * fake OpenAI and Anthropic APIs: a deny before the request in each API's error shape (nothing held, nothing sent
 * upstream), a rewrite of the model, the output cap and the system prompt, input text mapped before it leaves, a
 * streamed answer filtered across chunk boundaries, a whole answer mapped or denied (billed: the provider served it),
 * the decisions in GET /generation, and the same policies on the in-process client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropic, type GatewayPolicy, openai, openaiImageModels, type PolicyTextStream } from '../../src/index'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse, units } from '../helpers/sse'

const json = { 'content-type': 'application/json' }
const ANTHROPIC_KEY = 'sk-ant-api03-policies-0123456789'
const HAIKU = anthropicModels.find((m) => m.id === 'anthropic/claude-haiku-4.5')!
const PLAIN = { id: 'test/plain', upstreamId: 'plain', pricing: { prompt: '0.000001', completion: '0.000002' } }
const EXPENSIVE = { id: 'test/expensive', upstreamId: 'expensive', pricing: { prompt: '0.00001', completion: '0.00002' } }
const CHEAP = { id: 'test/cheap', upstreamId: 'cheap', pricing: { prompt: '0.0000001', completion: '0.0000002' } }
const IMAGE = { ...openaiImageModels.find((m) => m.id === 'openai/gpt-image-1-mini')!, id: 'test/image' }
const EMBED = { id: 'test/embed', upstreamId: 'text-embedding-3-small', endpoints: ['/embeddings'], pricing: { prompt: '0.00000002', completion: '0' } }

const PHRASE = 'open sesame'

/** A stream filter that replaces PHRASE wherever it falls, holding back only a tail that could still begin it. */
function phraseFilter(): PolicyTextStream & { count: number } {
  let held = ''
  const filter = {
    count: 0,
    write(text: string) {
      let buffer = held + text
      let out = ''
      for (let at = buffer.indexOf(PHRASE); at >= 0; at = buffer.indexOf(PHRASE)) {
        out += `${buffer.slice(0, at)}[PHRASE]`
        buffer = buffer.slice(at + PHRASE.length)
        filter.count++
      }
      // The longest tail of the buffer that is a start of the phrase waits for the next text.
      let keep = 0
      for (let n = Math.min(PHRASE.length - 1, buffer.length); n > 0; n--)
        if (PHRASE.startsWith(buffer.slice(buffer.length - n))) {
          keep = n
          break
        }
      held = buffer.slice(buffer.length - keep)
      return out + buffer.slice(0, buffer.length - keep)
    },
    end() {
      const rest = held
      held = ''
      return rest
    },
    note: () => ({ phrases: filter.count }),
  }
  return filter
}

const blocklist: GatewayPolicy = {
  name: 'blocklist',
  request: (r) => (r.texts.some((t) => t.includes('forbidden-topic')) ? { deny: { status: 403, message: 'That topic is not allowed here.' } } : undefined),
}
const rewriter: GatewayPolicy = {
  name: 'rewriter',
  request: (r) =>
    r.model === 'test/expensive' ? { rewrite: { model: 'test/cheap', maxTokens: 3, system: 'Be brief.' }, note: { reason: 'downgrade' } } : undefined,
}
const masker: GatewayPolicy = {
  name: 'masker',
  request: (r) => {
    const count = r.texts.reduce((n, t) => n + t.split('SECRET-123').length - 1, 0)
    if (!count) return undefined
    return { rewrite: { text: (t) => t.replaceAll('SECRET-123', '[MASKED]') }, note: { secrets: count } }
  },
  stream: () => phraseFilter(),
  response: (r) => (r.texts.some((t) => t.includes(PHRASE)) ? { text: (t) => t.replaceAll(PHRASE, '[PHRASE]'), note: { phrases: 1 } } : undefined),
}
const answerGuard: GatewayPolicy = {
  name: 'answer-guard',
  response: (r) => (r.texts.some((t) => t.includes('leakword')) ? { deny: { status: 403, message: 'The answer was withheld.' } } : undefined),
}
const broken: GatewayPolicy = {
  name: 'broken',
  request: (r) => {
    if (r.texts.some((t) => t.includes('break-the-policy'))) throw new Error('bug in the host’s policy')
  },
}
const careless: GatewayPolicy = {
  name: 'careless',
  request: (r) => (r.texts.some((t) => t.includes('cap-at-zero')) ? { rewrite: { maxTokens: 0 } } : undefined),
}
const seen: { route: string; principal: unknown; model: string }[] = []
const spy: GatewayPolicy = {
  name: 'spy',
  request: (r) => {
    seen.push({ route: r.route, principal: r.principal, model: r.model })
  },
}

let upstream: FakeOpenAI
let claude: FakeAnthropic
let t: TestGateway
/** A gateway whose only policy maps input text: /messages stays native (no policy reads the answer). */
let inputOnly: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>
let nativeCustomer: Awaited<ReturnType<typeof createCustomer>>

beforeAll(async () => {
  upstream = await startFakeOpenAI({ apiKey: 'sk-policies' })
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY })
  const providers = () => [
    openai({ apiKey: 'sk-policies', baseURL: upstream.url, models: [PLAIN, EXPENSIVE, CHEAP, EMBED, IMAGE] }),
    anthropic({ apiKey: ANTHROPIC_KEY, baseURL: claude.url, models: [HAIKU] }),
  ]
  t = await startGateway({ providers: providers(), policies: [spy, broken, careless, blocklist, rewriter, masker, answerGuard], retry: { maxRetries: 0 } })
  inputOnly = await startGateway({ providers: providers(), policies: [{ name: 'masker', request: masker.request }], retry: { maxRetries: 0 } })
  customer = await createCustomer(t.gateway, { credits: '5' })
  nativeCustomer = await createCustomer(inputOnly.gateway, { credits: '5' })
})
afterAll(async () => {
  await t?.close()
  await inputOnly?.close()
  await Promise.all([upstream?.close(), claude?.close()])
})

const post = (path: string, body: unknown, headers: Record<string, string> = customer.auth, on = t) =>
  on.request(`/api/v1${path}`, { method: 'POST', headers: { ...json, 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify(body) })
const credits = async (gateway = t) => units((await gateway.gateway.admin.getCredits(customer.user.org_id)).balance)
const generation = async (id: string, key = customer.key, on = t) =>
  (await (await on.request(`/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${key}` } })).json()).data
const chatCalls = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions').length
const user = (content: string) => [{ role: 'user', content }]

describe('a deny before the request', () => {
  it('chat: 403 in the gateway envelope naming the policy; nothing held, nothing sent upstream', async () => {
    const [calls, before] = [chatCalls(), await credits()]
    const res = await post('/chat/completions', { model: 'test/plain', messages: user('tell me about forbidden-topic') })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({
      error: { code: 403, type: 'forbidden', message: 'That topic is not allowed here.', metadata: { reason: 'policy_denied', policy: 'blocklist' } },
    })
    expect(chatCalls()).toBe(calls)
    expect(await credits()).toBe(before)
  })

  it("/messages: Anthropic's error shape (permission_error)", async () => {
    const res = await post(
      '/messages',
      { model: 'anthropic/claude-haiku-4.5', max_tokens: 50, messages: user('forbidden-topic again') },
      { 'x-api-key': customer.key },
    )
    expect(res.status).toBe(403)
    const body = await res.json()
    expect(body.type).toBe('error')
    expect(body.error).toMatchObject({ type: 'permission_error', message: 'That topic is not allowed here.' })
    expect(claude.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(0)
  })

  it("/responses: OpenAI's error shape, streamed or not", async () => {
    for (const stream of [false, true]) {
      const res = await post('/responses', { model: 'test/plain', input: 'what is forbidden-topic?', stream })
      expect(res.status).toBe(403)
      const body = await res.json()
      expect(body.error).toMatchObject({ message: 'That topic is not allowed here.', type: 'permission_error' })
    }
  })

  it('embeddings: the input is read too', async () => {
    const res = await post('/embeddings', { model: 'test/embed', input: ['fine', 'forbidden-topic'] })
    expect(res.status).toBe(403)
    expect((await res.json()).error.metadata).toEqual({ reason: 'policy_denied', policy: 'blocklist' })
  })

  it('/completions and /images/generations: the prompt is read', async () => {
    for (const [path, body] of [
      ['/completions', { model: 'test/plain', prompt: 'forbidden-topic, in a prompt' }],
      ['/images/generations', { model: 'test/image', prompt: 'a poster of the forbidden-topic' }],
    ] as const) {
      const res = await post(path, body)
      expect(res.status, path).toBe(403)
      expect((await res.json()).error.metadata, path).toEqual({ reason: 'policy_denied', policy: 'blocklist' })
    }
    expect(upstream.requests.filter((r) => r.path === '/v1/completions' || r.path === '/v1/images/generations')).toHaveLength(0)
  })

  it('a rewrite the gateway cannot apply (maxTokens 0) fails the request closed: 500 naming the policy and the field', async () => {
    const calls = chatCalls()
    const res = await post('/chat/completions', { model: 'test/plain', messages: user('cap-at-zero please') })
    expect(res.status).toBe(500)
    expect((await res.json()).error).toMatchObject({
      message: 'The policy careless rewrote the request with an invalid maxTokens.',
      metadata: { reason: 'policy_failed', policy: 'careless' },
    })
    expect(chatCalls()).toBe(calls)
  })

  it('a policy that throws fails the request closed: 500 naming it, nothing sent upstream', async () => {
    const calls = chatCalls()
    const res = await post('/chat/completions', { model: 'test/plain', messages: user('break-the-policy please') })
    expect(res.status).toBe(500)
    expect((await res.json()).error).toMatchObject({
      message: 'The policy broken failed in its request hook.',
      metadata: { reason: 'policy_failed', policy: 'broken' },
    })
    expect(chatCalls()).toBe(calls)
  })
})

describe('a rewrite', () => {
  it('replaces the model, caps max_tokens, adds a system message; the generation records it', async () => {
    const res = await post('/chat/completions', { model: 'test/expensive', max_tokens: 50, messages: user('one two three four five six') })
    expect(res.status).toBe(200)
    const body = await res.json()
    const sent = upstream.requests.at(-1)!.body
    expect(sent.model).toBe('cheap')
    expect(sent.max_completion_tokens ?? sent.max_tokens).toBe(3)
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
    expect(body.model).toBe('test/cheap')
    expect(body.choices[0].finish_reason).toBe('length')
    const record = await generation(body.id)
    expect(record.model).toBe('test/cheap')
    expect(record.policies).toEqual([
      { policy: 'rewriter', stage: 'request', action: 'rewrite', note: { model: 'test/cheap', max_tokens: 3, system: true, reason: 'downgrade' } },
    ])
  })

  it('maps the input text before it leaves: chat and embeddings', async () => {
    const res = await post('/chat/completions', {
      model: 'test/plain',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'my key is SECRET-123, keep it' }] }],
    })
    expect(res.status).toBe(200)
    expect(upstream.requests.at(-1)!.body.messages[0].content[0].text).toBe('my key is [MASKED], keep it')
    const id = (await res.json()).id
    expect((await generation(id)).policies).toContainEqual({ policy: 'masker', stage: 'request', action: 'rewrite', note: { text: true, secrets: 1 } })
    const embedded = await post('/embeddings', { model: 'test/embed', input: 'SECRET-123 and SECRET-123' })
    expect(embedded.status).toBe(200)
    expect(upstream.requests.at(-1)!.body.input).toBe('[MASKED] and [MASKED]')
  })

  it('/messages stays native when no policy reads the answer, and the native request is mapped', async () => {
    const before = claude.requests.length
    const res = await post(
      '/messages',
      { model: 'anthropic/claude-haiku-4.5', max_tokens: 50, system: 'SECRET-123 is private', messages: user('is SECRET-123 safe?') },
      { 'x-api-key': nativeCustomer.key },
      inputOnly,
    )
    expect(res.status).toBe(200)
    const sent = claude.requests.slice(before).find((r) => r.path === '/v1/messages')!.body
    expect(sent.system).toBe('[MASKED] is private')
    expect(sent.messages[0].content).toBe('is [MASKED] safe?')
    expect((await res.json()).content[0].text).toBe('Hello from claude-haiku-4-5: is [MASKED] safe?')
  })
})

describe('the answer', () => {
  it('a streamed answer is filtered across chunk boundaries, and the stream note is recorded', async () => {
    const res = await post('/chat/completions', { model: 'test/plain', stream: true, messages: user(`say ${PHRASE} twice: ${PHRASE} now`) })
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    const chunks = events.filter((e) => e.choices?.length)
    const text = chunks.map((e) => e.choices[0].delta.content ?? '').join('')
    expect(text).toBe('Hello from plain: say [PHRASE] twice: [PHRASE] now')
    // The fake streams a word a chunk: the phrase straddled two chunks each time.
    expect(chunks.some((e) => e.choices[0].delta.content === ' open')).toBe(false)
    const id = events[0].id
    expect((await generation(id)).policies).toEqual([{ policy: 'masker', stage: 'stream', action: 'note', note: { phrases: 2 } }])
  })

  it('translated /messages and /responses streams get the same filter (their native pass-through is turned off)', async () => {
    const messages = await post(
      '/messages',
      { model: 'anthropic/claude-haiku-4.5', max_tokens: 50, stream: true, messages: user(`please ${PHRASE}`) },
      { 'x-api-key': customer.key },
    )
    expect(messages.status).toBe(200)
    const blocks = (await messages.text()).split('\n\n').filter(Boolean)
    const deltas = blocks.map((b) => JSON.parse(b.split('\n')[1].slice(6))).filter((e) => e.type === 'content_block_delta')
    expect(deltas.map((e) => e.delta.text).join('')).toBe('Hello from claude-haiku-4-5: please [PHRASE]')

    const responses = await post('/responses', { model: 'test/plain', input: `kindly ${PHRASE}`, stream: true })
    expect(responses.status).toBe(200)
    const { events } = await readSse(responses)
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)
    expect(text.join('')).toBe('Hello from plain: kindly [PHRASE]')
    expect(events.find((e) => e.type === 'response.completed').response.output[0].content[0].text).toBe('Hello from plain: kindly [PHRASE]')
  })

  it('/completions: the prompt mapped on the way in, its streamed text filtered on the way out', async () => {
    const res = await post('/completions', { model: 'test/plain', prompt: `SECRET-123 says ${PHRASE}`, stream: true })
    expect(res.status).toBe(200)
    expect(upstream.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: `[MASKED] says ${PHRASE}` }])
    const { events } = await readSse(res)
    expect(
      events
        .filter((e) => e.choices?.length)
        .map((e) => e.choices[0].text)
        .join(''),
    ).toBe('Hello from plain: [MASKED] says [PHRASE]')
  })

  it('a whole answer is mapped by the response hook', async () => {
    const res = await post('/chat/completions', { model: 'test/plain', messages: user(`just ${PHRASE}`) })
    const body = await res.json()
    expect(body.choices[0].message.content).toBe('Hello from plain: just [PHRASE]')
    expect((await generation(body.id)).policies).toEqual([{ policy: 'masker', stage: 'response', action: 'rewrite', note: { phrases: 1 } }])
  })

  it('a whole answer denied after it came: the error shape, and billed (the provider served it)', async () => {
    const [calls, before] = [chatCalls(), await credits()]
    const res = await post('/chat/completions', { model: 'test/plain', messages: user('print the leakword') })
    expect(res.status).toBe(403)
    expect((await res.json()).error).toMatchObject({ message: 'The answer was withheld.', metadata: { reason: 'policy_denied', policy: 'answer-guard' } })
    expect(chatCalls()).toBe(calls + 1)
    const charged = before - (await credits())
    expect(charged > 0n).toBe(true)
    const records = await t.gateway.admin.usage(customer.user.org_id)
    const last = records.at(-1)!
    expect(last.policies).toEqual([{ policy: 'answer-guard', stage: 'response', action: 'deny' }])
  })
})

describe('what policies see', () => {
  it('the route, the model and the principal (the end user the body names)', async () => {
    seen.length = 0
    await post('/chat/completions', { model: 'test/plain', user: 'end-user-7', messages: user('hello') })
    expect(seen).toEqual([
      {
        route: '/chat/completions',
        model: 'test/plain',
        principal: {
          orgId: customer.user.org_id,
          userId: customer.user.id,
          key: customer.record.hash.slice(0, 12),
          keyLabel: 'test key',
          via: 'key',
          endUser: 'end-user-7',
        },
      },
    ])
  })

  it('the in-process client runs the same policies', async () => {
    const client = t.gateway.client({ userId: customer.user.id })
    await expect(client.chat.completions.create({ model: 'test/plain', messages: user('forbidden-topic in process') })).rejects.toMatchObject({
      status: 403,
      message: 'That topic is not allowed here.',
    })
    const answer = (await client.chat.completions.create({ model: 'test/plain', messages: user('in process SECRET-123') })) as any
    expect(answer.choices[0].message.content).toBe('Hello from plain: in process [MASKED]')
    expect(seen.at(-1)!.route).toBe('/chat/completions')
  })
})
