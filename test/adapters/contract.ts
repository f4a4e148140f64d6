// The adapter contract, extended: what every way of serving the gateway (node, express, bun, nuxt, …) must do over
// HTTP, one check at a time. Independent of any adapter: give it where the API lives and a key. A superset of
// test/helpers/contract.ts (same `runContract(baseUrl, key)`), adding a whole completion, 405/415, HEAD, the
// catalogue, billing of a stream, progressive delivery and client disconnects. Progressive delivery needs the slow
// model of ./contract-providers (`slowEcho(demo())`) next to `demo()`; the key's org needs credits.
import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decimalText, readSse, units } from '../helpers/sse'
import { SLOW_ECHO_DELAY_MS, SLOW_ECHO_MODEL } from './contract-providers'

/** What the contract runs against. */
export interface ContractTarget {
  /** Where the gateway's base path lives: the server's origin plus any mount prefix (`http://127.0.0.1:3000`). */
  baseUrl: string
  /** A bearer key whose org has at least 0.01 EUR of credits. */
  key: string
  /** The gateway's `basePath`. Default `/api/v1`. */
  basePath?: string
  /** What `GET /me` must answer for the key, when the caller knows (before any check spent credits). */
  me?: Record<string, unknown>
  /**
   * The slowly streamed model for the progressive-delivery and disconnect checks; `false` skips them. Default: the
   * contract's slow model when `/models` lists it, else they are skipped.
   */
  slowModel?: string | false
}

/** One check of the contract. Checks run in this order: the first sees the key's credits untouched. */
export interface ContractCheck {
  name: string
  run: (target: ContractTarget) => Promise<void>
}

const ME_FIELDS = ['user_id', 'email', 'org_name', 'org_id', 'plan', 'credits', 'limits']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const DECIMAL = /^-?\d+(?:\.\d{1,12})?$/
const JSON_TYPE = 'application/json; charset=utf-8'

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const apiBase = (t: ContractTarget) => `/${(t.basePath ?? '/api/v1').replace(/^\/+|\/+$/g, '')}`
const call = (t: ContractTarget, path: string, init: RequestInit = {}) => fetch(t.baseUrl.replace(/\/+$/, '') + apiBase(t) + path, init)

const postJson = (t: ContractTarget, path: string, body: unknown, headers: Record<string, string> = bearer(t.key)) =>
  call(t, path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })
const chat = (t: ContractTarget, model: string, text: string, extra: Record<string, unknown> = {}) =>
  postJson(t, '/chat/completions', { model, messages: [{ role: 'user', content: text }], ...extra })

async function me(t: ContractTarget, key = t.key) {
  const res = await call(t, '/me', { headers: bearer(key) })
  expect(res.status).toBe(200)
  return res.json() as Promise<{ user_id: string; credits: { balance: string; total_credits: string; total_usage: string } }>
}

/** The slow model to use, or undefined when the target does not serve one. */
async function slowModelOf(t: ContractTarget): Promise<string | undefined> {
  if (t.slowModel === false) return undefined
  if (t.slowModel) return t.slowModel
  const listed = await (await call(t, '/models', { headers: bearer(t.key) })).json()
  return listed.data?.some((model: { id: string }) => model.id === SLOW_ECHO_MODEL) ? SLOW_ECHO_MODEL : undefined
}

/** Expects the error envelope with this status and type; returns the body. */
async function expectEnvelope(res: Response, status: number, type: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toBe(JSON_TYPE)
  expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
  const body = await res.json()
  expect(body).toEqual({ error: expect.objectContaining({ code: status, type, message: expect.any(String) }) })
  return body.error as { code: number; type: string; message: string; param?: string }
}

/** The SSE `data:` payloads of a response as they arrive, each with the time it arrived (ms since `start`). */
async function timedEvents(res: Response, start: number, stopAfter?: (data: string) => boolean) {
  const events: { data: string; at: number }[] = []
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffered += decoder.decode(value, { stream: true })
    const blocks = buffered.split('\n\n')
    buffered = blocks.pop()!
    for (const block of blocks) {
      for (const line of block.split('\n')) {
        if (!line.startsWith('data: ')) continue
        events.push({ data: line.slice(6), at: performance.now() - start })
        if (stopAfter?.(line.slice(6))) {
          await reader.cancel()
          return events
        }
      }
    }
  }
  return events
}

const contentOf = (chunk: any): string => chunk.choices?.map((choice: any) => choice.delta?.content ?? '').join('') ?? ''

export const contractChecks: ContractCheck[] = [
  {
    name: 'GET /me answers every field for the key',
    async run(t) {
      const res = await call(t, '/me', { headers: bearer(t.key) })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(JSON_TYPE)
      expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/)
      const body = await res.json()
      expect(Object.keys(body)).toEqual(ME_FIELDS)
      expect(body).toEqual({
        user_id: expect.any(String),
        email: expect.stringContaining('@'),
        org_name: expect.any(String),
        org_id: expect.stringMatching(UUID),
        plan: expect.any(String),
        credits: { balance: expect.stringMatching(DECIMAL), total_credits: expect.stringMatching(DECIMAL), total_usage: expect.stringMatching(DECIMAL) },
        // The user's own limits and spending (docs/first-party.md#budgets-for-users-and-end-users): none set here.
        limits: expect.objectContaining({ credit_limit: null, requests_per_minute: null, max_in_flight: null, usage: expect.stringMatching(DECIMAL) }),
      })
      const { balance, total_credits, total_usage } = body.credits
      expect(units(balance)).toBe(units(total_credits) - units(total_usage))
      if (t.me) expect(body).toEqual({ ...body, ...t.me })
      const head = await call(t, '/me', { method: 'HEAD', headers: bearer(t.key) })
      expect(head.status).toBe(200)
      expect(await head.text()).toBe('')
    },
  },
  {
    name: 'errors come in the envelope, with the request id',
    async run(t) {
      expect((await expectEnvelope(await call(t, '/me'), 401, 'unauthorized')).message).toMatch(/Missing Authorization header/)
      expect((await expectEnvelope(await call(t, '/me', { headers: bearer(`${t.key.slice(0, -4)}0000`) }), 401, 'unauthorized')).message).toMatch(
        /Invalid API key/,
      )
      const unknown = await call(t, '/no-such-route', { headers: { ...bearer(t.key), 'x-request-id': 'contract-404' } })
      expect(unknown.headers.get('x-request-id')).toBe('contract-404')
      await expectEnvelope(unknown, 404, 'not_found')
      const wrongMethod = await call(t, '/me', { method: 'DELETE', headers: bearer(t.key) })
      expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD')
      await expectEnvelope(wrongMethod, 405, 'method_not_allowed')
      const invalid = await expectEnvelope(await postJson(t, '/chat/completions', { model: 'demo/echo', messages: [] }), 400, 'invalid_request')
      expect(invalid.param).toBe('messages')
      const text = await call(t, '/chat/completions', { method: 'POST', headers: { ...bearer(t.key), 'content-type': 'text/plain' }, body: 'hello' })
      await expectEnvelope(text, 415, 'unsupported_media_type')
    },
  },
  {
    name: 'serves the catalogue and the OpenAPI document under the base path',
    async run(t) {
      const models = await call(t, '/models', { headers: bearer(t.key) })
      expect(models.status).toBe(200)
      expect((await models.json()).data.map((model: { id: string }) => model.id)).toContain('demo/echo')
      const doc = await (await call(t, '/openapi.json', { headers: bearer(t.key) })).json()
      expect(Object.keys(doc.paths)).toContain(`${apiBase(t)}/chat/completions`)
    },
  },
  {
    name: 'answers a whole chat completion',
    async run(t) {
      const res = await chat(t, 'demo/echo', 'hello in one piece')
      expect(res.status).toBe(200)
      expect(res.headers.get('x-generation-id')).toMatch(/^gen-/)
      const body = await res.json()
      expect(body).toMatchObject({
        object: 'chat.completion',
        model: 'demo/echo',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello in one piece' }, finish_reason: 'stop' }],
      })
      expect(body.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 5, is_byok: false })
    },
  },
  {
    name: 'streams a chat: chunks, one usage chunk last, [DONE], billed once',
    async run(t) {
      const before = (await me(t)).credits
      const res = await chat(t, 'demo/echo', 'stream me through the adapter', { stream: true })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      const generationId = res.headers.get('x-generation-id')
      const { events } = await readSse(res)
      expect(events.at(-1)).toBe('[DONE]')
      expect(events.filter((event) => event === '[DONE]')).toHaveLength(1)
      const chunks = events.slice(0, -1)
      for (const chunk of chunks) expect(chunk).toMatchObject({ id: generationId, object: 'chat.completion.chunk', model: 'demo/echo' })
      expect(chunks.map(contentOf).join('')).toBe('Echo: stream me through the adapter')
      expect(chunks.filter((chunk) => contentOf(chunk)).length).toBeGreaterThan(1)
      expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop')
      const withUsage = chunks.filter((chunk) => chunk.usage)
      expect(withUsage).toHaveLength(1)
      expect(withUsage[0]).toBe(chunks.at(-1))
      expect(withUsage[0].choices).toEqual([])
      const usage = withUsage[0].usage
      expect(usage).toMatchObject({ completion_tokens: 6, is_byok: false, cost_currency: 'USD' })
      expect(String(usage.cost_eur)).toMatch(DECIMAL)
      expect(units(String(usage.cost_eur))).toBeGreaterThan(0n)
      // Charged exactly the usage's cost_eur (possibly just after [DONE]).
      const expected = decimalText(units(before.total_usage) + units(String(usage.cost_eur)))
      let after = (await me(t)).credits
      for (let i = 0; i < 40 && after.total_usage !== expected; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        after = (await me(t)).credits
      }
      expect(after.total_usage).toBe(expected)
    },
  },
  {
    name: 'streams progressively: chunks arrive as they are generated, not buffered',
    async run(t) {
      const model = await slowModelOf(t)
      if (!model) return
      const start = performance.now()
      const res = await chat(t, model, 'one two three four five six', { stream: true })
      expect(res.status).toBe(200)
      const headersAt = performance.now() - start
      const events = await timedEvents(res, start)
      expect(events.at(-1)?.data).toBe('[DONE]')
      const content = events.filter((event) => event.data !== '[DONE]' && contentOf(JSON.parse(event.data)))
      expect(content.map((event) => contentOf(JSON.parse(event.data))).join('')).toBe('Echo: one two three four five six')
      // 7 content chunks generated SLOW_ECHO_DELAY_MS apart: buffered, they would all arrive together at the end.
      const spread = content.at(-1)!.at - content[0].at
      expect(spread).toBeGreaterThanOrEqual((content.length - 1) * SLOW_ECHO_DELAY_MS * 0.6)
      expect(events.at(-1)!.at - headersAt).toBeGreaterThanOrEqual(content.length * SLOW_ECHO_DELAY_MS * 0.6)
      // Nearly every chunk in a time slot of its own; on a loaded machine (the whole suite on two cores) one late chunk
      // may share its slot with the next, which a buffering server would not come near (one slot for all).
      expect(new Set(content.map((event) => Math.round(event.at / (SLOW_ECHO_DELAY_MS / 2)))).size).toBeGreaterThanOrEqual(content.length - 2)
    },
  },
  {
    name: 'stops generating when the client goes away mid-stream, and bills what was generated',
    async run(t) {
      const model = await slowModelOf(t)
      if (!model) return
      const before = (await me(t)).credits.total_usage
      const words = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ')
      const res = await chat(t, model, words, { stream: true })
      expect(res.status).toBe(200)
      // Read until the first content, then hang up (cancelling the body closes the connection).
      const events = await timedEvents(res, performance.now(), (data) => data !== '[DONE]' && contentOf(JSON.parse(data)) !== '')
      expect(events.length).toBeGreaterThan(0)
      const hungUp = performance.now()
      // The whole answer would take 20 more chunks (3 s): billing well before that shows the generation stopped.
      // (Polled until it grew, not until it changed: over unstorage's fs driver a read racing a counter's write can
      // see the file empty, i.e. 0.)
      let usage = (await me(t)).credits.total_usage
      while (units(usage) <= units(before) && performance.now() - hungUp < 5000) {
        await new Promise((resolve) => setTimeout(resolve, 25))
        usage = (await me(t)).credits.total_usage
      }
      expect(units(usage)).toBeGreaterThan(units(before))
      expect(performance.now() - hungUp).toBeLessThan((20 * SLOW_ECHO_DELAY_MS) / 2)
    },
  },
  {
    name: 'issues a key by PKCE: code with the key, exchange with the verifier, the new key answers /me',
    async run(t) {
      const owner = await me(t)
      const verifier = randomBytes(32).toString('base64url')
      const challenge = createHash('sha256').update(verifier).digest('base64url')
      const created = await postJson(t, '/auth/keys/code', {
        callback_url: 'http://localhost:3000/callback',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })
      expect(created.status).toBe(200)
      const { code, created_at } = await created.json()
      expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(Number.isNaN(Date.parse(created_at))).toBe(false)
      const exchanged = await postJson(t, '/auth/keys', { code, code_verifier: verifier }, {})
      expect(exchanged.status).toBe(200)
      const issued = await exchanged.json()
      expect(issued).toEqual({ key: expect.any(String), user_id: owner.user_id })
      expect(issued.key).not.toBe(t.key)
      expect((await me(t, issued.key)).user_id).toBe(owner.user_id)
      await expectEnvelope(await postJson(t, '/auth/keys', { code, code_verifier: verifier }, {}), 403, 'forbidden')
    },
  },
]

/** Runs every check against a running gateway, in order; throws at the first failure. */
export async function runContract(baseUrl: string, key: string, options: Omit<ContractTarget, 'baseUrl' | 'key'> = {}): Promise<void> {
  for (const check of contractChecks) await check.run({ baseUrl, key, ...options })
}

/** Registers the contract as one vitest test per check; `target` is read when the checks run (after beforeAll). */
export function describeContract(name: string, target: () => ContractTarget): void {
  describe(name, () => {
    for (const check of contractChecks) it(check.name, () => check.run(target()), 30_000)
  })
}
