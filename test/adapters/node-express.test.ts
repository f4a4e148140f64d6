import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
// @ts-expect-error express@4, installed under the alias express4 (package.json), ships no types: typed as Express 5 below
import express4Untyped from 'express4'
import { afterEach, describe, expect, it } from 'vitest'
import { bodyLimitOf, toExpressHandler } from '../../adapters/express'
import { toNodeHandler } from '../../adapters/node'
import { createGateway, demo, type Gateway, type Logger } from '../../src/index'
import { runContract } from './contract'
import { slowEcho } from './contract-providers'
import { makeWav } from '../fakes/audio'
import { createCustomer, TEST_SECRET } from '../helpers/server'
import { decimalText, units } from '../helpers/sse'

// Only what both majors share is called on it.
const express4 = express4Untyped as typeof express

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))))
})

const listen = async (handler: Parameters<typeof createServer>[1]) => {
  const server = createServer(handler)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const setUp = async (logger: Logger | false = false): Promise<{ gateway: Gateway; key: string }> => {
  const gateway = createGateway({ secret: TEST_SECRET, logger, providers: [demo({ audio: true }), slowEcho(demo())] })
  const { key } = await createCustomer(gateway, { credits: '5' })
  return { gateway, key }
}

describe('the adapter contract', () => {
  it('node:http (model-gateway/node)', async () => {
    const { gateway, key } = await setUp()
    await runContract(await listen(toNodeHandler(gateway)), key)
  })

  it('Express 5, at the root (model-gateway/express)', async () => {
    const { gateway, key } = await setUp()
    const app = express()
    app.use(toExpressHandler(gateway))
    await runContract(await listen(app), key)
  })

  it('Express 5, mounted under /ai after express.json() and next to the app’s own routes', async () => {
    const { gateway, key } = await setUp()
    // An app whose express.json() (default limit) runs first: small bodies reach the gateway parsed.
    const app = express()
    app.use(express.json())
    app.get('/hello', (_req, res) => void res.send('my app'))
    app.use('/ai', toExpressHandler(gateway))
    const url = await listen(app)
    await runContract(`${url}/ai`, key)
    expect(await (await fetch(`${url}/hello`)).text()).toBe('my app')
    // express.json() parsed these bodies first: the gateway still validates them, and its errors keep the envelope.
    const bad = await fetch(`${url}/ai/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [] }),
    })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toMatchObject({ type: 'invalid_request', param: 'messages' })
    const whole = await fetch(`${url}/ai/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'parsed first' }] }),
    })
    expect((await whole.json()).choices[0].message.content).toBe('Echo: parsed first')
  })

  it('Express with express.raw() before it: the raw body is still read', async () => {
    const { gateway, key } = await setUp()
    const app = express()
    app.use(express.raw({ type: '*/*' }))
    app.use(toExpressHandler(gateway))
    await runContract(await listen(app), key)
  })
})

const MiB = 1024 * 1024
const JSON_TYPE = 'application/json; charset=utf-8'
const ORIGIN = 'https://app.example'

/** A chat request body of about `bytes` bytes (one user message of x's). */
const chatBody = (bytes: number) => JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'x'.repeat(bytes) }] })

const post = (url: string, key: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', origin: ORIGIN, ...headers }, body })

/** Expects the gateway's error envelope with X-Request-Id (the given one echoed) and the CORS headers; returns the error. */
async function expectEnvelope(res: Response, status: number, type: string, requestId?: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toBe(JSON_TYPE)
  expect(res.headers.get('x-request-id')).toMatch(requestId ? new RegExp(`^${requestId}$`) : /^req_[0-9a-f]{24}$/)
  expect(res.headers.get('access-control-allow-origin')).toBe('*')
  expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-Id')
  const body = await res.json()
  expect(body).toEqual({ error: expect.objectContaining({ code: status, type, message: expect.any(String) }) })
  return body.error as { message: string }
}

/** Uploads a WAV clip of about `bytes` bytes to demo/transcribe as multipart/form-data (which express.json() leaves alone). */
function upload(base: string, key: string, bytes: number) {
  const form = new FormData()
  form.append('model', 'demo/transcribe')
  form.append('file', new Blob([new Uint8Array(makeWav(Math.ceil(bytes / 32_000)))], { type: 'audio/wav' }), 'clip.wav')
  return fetch(`${base}/api/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, origin: ORIGIN }, body: form })
}

/** An upload over the chat limit and under the transcription limit (25 MiB) is transcribed. */
async function expectTranscribed(base: string, key: string) {
  const res = await upload(base, key, 11 * MiB)
  expect(res.status).toBe(200)
  expect((await res.json()).text).toMatch(/^Demo transcript: 361 seconds of wav audio, 11552044 bytes\.$/)
}

/** POSTs a chat of about `bytes` bytes: 200, the echo whole, and the key's org charged exactly the usage's cost_eur. */
async function expectServedAndBilled(base: string, key: string, bytes: number) {
  const me = async () => (await (await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()).credits.total_usage as string
  const before = await me()
  const body = chatBody(bytes)
  expect(body.length).toBeGreaterThan(100 * 1024)
  const res = await post(`${base}/api/v1/chat/completions`, key, body)
  expect(res.status).toBe(200)
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/)
  const answer = await res.json()
  expect(answer.choices[0].message.content).toBe(`Echo: ${'x'.repeat(bytes)}`)
  expect(units(String(answer.usage.cost_eur))).toBeGreaterThan(0n)
  const expected = decimalText(units(before) + units(String(answer.usage.cost_eur)))
  let after = await me()
  for (let i = 0; i < 40 && after !== expected; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    after = await me()
  }
  expect(after).toBe(expected)
}

// Issue 17: express.json() in front of the gateway capped chats at its 100 kB default (413 for a 126 kB chat whose
// limit is 10 MiB), and its refusals came without X-Request-Id. Both majors, both documented set-ups (README "Express").
for (const [name, framework] of [
  ['Express 5', express],
  ['Express 4', express4],
] as const) {
  describe(`${name}: the gateway's body limits`, () => {
    it('mounted under /ai before express.json() (the README set-up): the gateway reads its bodies with its own limits, the app keeps the parser’s', async () => {
      const { gateway, key } = await setUp()
      const app = framework()
      app.use('/ai', toExpressHandler(gateway))
      app.use(framework.json())
      app.post('/mine', (req, res) => void res.json({ got: Object.keys(req.body ?? {}) }))
      const url = await listen(app)
      await runContract(`${url}/ai`, key)
      await expectServedAndBilled(`${url}/ai`, key, 126 * 1024)
      // Beyond the chat limit (10 MiB), and beyond the 1 MiB of the other routes: 413 in the envelope.
      expect(
        (
          await expectEnvelope(
            await post(`${url}/ai/api/v1/chat/completions`, key, chatBody(10 * MiB), { 'x-request-id': 'too-big-chat' }),
            413,
            'payload_too_large',
            'too-big-chat',
          )
        ).message,
      ).toBe(`Request body is larger than ${10 * MiB} bytes`)
      const code = JSON.stringify({ callback_url: 'https://a.example', code_challenge: 'x'.repeat(MiB) })
      expect((await expectEnvelope(await post(`${url}/ai/api/v1/auth/keys/code`, key, code), 413, 'payload_too_large')).message).toBe(
        `Request body is larger than ${MiB} bytes`,
      )
      // Transcription takes up to 25 MiB.
      await expectTranscribed(`${url}/ai`, key)
      expect((await expectEnvelope(await upload(`${url}/ai`, key, 25 * MiB), 413, 'payload_too_large')).message).toBe(
        `Request body is larger than ${25 * MiB} bytes`,
      )
      // The app's own routes still get express.json(), with its own 100 kB default.
      expect(await (await post(`${url}/mine`, key, JSON.stringify({ a: 1 }))).json()).toEqual({ got: ['a'] })
      expect((await post(`${url}/mine`, key, chatBody(126 * 1024))).status).toBe(413)
    }, 60_000)

    it('mounted after express.json({ limit: bodyLimitOf(gateway) }): the gateway’s limits, each route’s applied to the parsed body', async () => {
      const { gateway, key } = await setUp()
      expect(bodyLimitOf(gateway)).toBe(25 * MiB)
      const app = framework()
      app.use(framework.json({ limit: bodyLimitOf(gateway) }))
      app.use(toExpressHandler(gateway))
      const url = await listen(app)
      await expectServedAndBilled(url, key, 126 * 1024)
      await expectServedAndBilled(url, key, 3 * MiB)
      expect((await expectEnvelope(await post(`${url}/api/v1/chat/completions`, key, chatBody(10 * MiB)), 413, 'payload_too_large')).message).toBe(
        `Request body is larger than ${10 * MiB} bytes`,
      )
      const code = JSON.stringify({ callback_url: 'https://a.example', code_challenge: 'x'.repeat(MiB) })
      expect((await expectEnvelope(await post(`${url}/api/v1/auth/keys/code`, key, code), 413, 'payload_too_large')).message).toBe(
        `Request body is larger than ${MiB} bytes`,
      )
      // Beyond every limit of the gateway: the parser refuses it, answered in the envelope.
      const huge = await post(`${url}/api/v1/chat/completions`, key, chatBody(25 * MiB), { 'x-request-id': 'too-big-for-the-parser' })
      expect((await expectEnvelope(huge, 413, 'payload_too_large', 'too-big-for-the-parser')).message).toBe(`Request body is larger than ${25 * MiB} bytes`)
    }, 60_000)

    it('mounted after a plain express.json(): its refusals (413, 400, 415) carry the envelope, X-Request-Id and CORS; a warning says how to lift the 100 kB cap', async () => {
      const warnings: string[] = []
      const { gateway, key } = await setUp({ debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} })
      const app = framework()
      app.use(framework.json())
      app.use('/ai', toExpressHandler(gateway))
      const url = await listen(app)
      const chats = `${url}/ai/api/v1/chat/completions`
      const capped = await expectEnvelope(await post(chats, key, chatBody(126 * 1024)), 413, 'payload_too_large')
      expect(capped.message).toBe('Request body is larger than 102400 bytes')
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain('mount toExpressHandler(gateway) before express.json(), or use express.json({ limit: bodyLimitOf(gateway) })')
      await expectEnvelope(await post(chats, key, chatBody(200 * 1024)), 413, 'payload_too_large')
      expect(warnings).toHaveLength(1)
      expect(
        (await expectEnvelope(await post(chats, key, '{"model": "demo/echo",', { 'x-request-id': 'bad-json' }), 400, 'invalid_request', 'bad-json')).message,
      ).toBe('Request body is not valid JSON')
      expect((await expectEnvelope(await post(chats, key, chatBody(10), { 'content-encoding': 'x-unknown' }), 415, 'unsupported_media_type')).message).toBe(
        'Unsupported content encoding',
      )
      expect(
        (await expectEnvelope(await post(chats, key, chatBody(10), { 'content-type': 'application/json; charset=x-unknown' }), 415, 'unsupported_media_type'))
          .message,
      ).toMatch(/unsupported charset/)
      // express.json() leaves multipart uploads alone (Express 4's still sets req.body = {}): the gateway reads them itself.
      await expectTranscribed(`${url}/ai`, key)
      // The gateway answers the next request as ever.
      const small = await post(chats, key, chatBody(10))
      expect(small.status).toBe(200)
      expect((await small.json()).choices[0].message.content).toBe(`Echo: ${'x'.repeat(10)}`)
    }, 60_000)
  })
}

describe('Express 4 (model-gateway/express)', () => {
  it('passes the contract at the root, and after express.raw()', async () => {
    const { gateway, key } = await setUp()
    const plain = express4()
    plain.use(toExpressHandler(gateway))
    await runContract(await listen(plain), key)
    const raw = express4()
    raw.use(express4.raw({ type: '*/*' }))
    raw.use(toExpressHandler(gateway))
    await runContract(await listen(raw), key)
  }, 60_000)
})
